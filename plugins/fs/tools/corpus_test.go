package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/plugins/fs/internal/edit"
	"github.com/yagent/yagent/sdk"
)

const corpusDir = "../testdata/corpus"

type corpusCase struct {
	Name        string           `json:"name"`
	File        string           `json:"file"`
	Tool        string           `json:"tool"`
	Want        string           `json:"want"`
	WantFile    string           `json:"want_file"`
	Repairs     []string         `json:"repairs"`
	Edits       []map[string]any `json:"edits"`
	Lines       []int            `json:"lines"`
	ClosestLine int              `json:"closest_line"`
	DiffLine    int              `json:"diff_line"`
}

// TestCorpus runs imperfect edits of real source files: every positive
// case must produce its expected file byte for byte (so nothing lands at a
// wrong place), every negative case must fail with its code and leave the
// file untouched.
func TestCorpus(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(corpusDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("corpus has %d cases; expected the full set", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(filepath.Join(corpusDir, "src", c.File))
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t)
			e.write(c.File, string(src))
			tool, input := c.Tool, map[string]any{"path": c.File}
			if tool == "" {
				tool = "search_replace_in_file"
				for k, v := range c.Edits[0] {
					input[k] = v
				}
			} else {
				input["edits"] = c.Edits
			}
			res, err := e.call(e.ctx("s1"), tool, input)
			got := e.read(c.File)

			if c.Want == "applied" {
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				want, rerr := os.ReadFile(filepath.Join(corpusDir, "want", c.WantFile))
				if rerr != nil {
					t.Fatal(rerr)
				}
				if got != string(want) {
					t.Errorf("file differs from want/%s:\n%s", c.WantFile, lineDiff(string(want), got))
				}
				var kinds []string
				for _, n := range res.Notes {
					if !slices.Contains(kinds, n.Kind) {
						kinds = append(kinds, n.Kind)
					}
				}
				if !slices.Equal(kinds, c.Repairs) && !(len(kinds) == 0 && len(c.Repairs) == 0) {
					t.Errorf("repairs: got %v (%v), want %v", kinds, res.Notes, c.Repairs)
				}
				return
			}

			te, ok := sdk.AsToolError(err)
			if !ok || te.Code != c.Want {
				t.Fatalf("%s: got %v, %v; want %s", tool, res, err, c.Want)
			}
			if got != string(src) {
				t.Errorf("refused edit changed the file:\n%s", lineDiff(string(src), got))
			}
			if c.Lines != nil {
				d, _ := te.Data.(map[string]any)
				if lines, _ := d["lines"].([]int); !slices.Equal(lines, c.Lines) {
					t.Errorf("lines: got %v, want %v (%s)", d["lines"], c.Lines, te.Message)
				}
			}
			if c.ClosestLine > 0 {
				d, _ := te.Data.(edit.Divergence)
				if d.ClosestLine != c.ClosestLine || d.DiffLine != c.DiffLine {
					t.Errorf("divergence: got %+v, want closest line %d, first difference at %d (%s)", d, c.ClosestLine, c.DiffLine, te.Message)
				}
			}
		})
	}
}

// lineDiff shows the first differing line of two texts.
func lineDiff(want, got string) string {
	wl, gl := splitKeep(want), splitKeep(got)
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\n want " + quoteQ(w) + "\n  got " + quoteQ(g)
		}
	}
	return "(no line differs)"
}
