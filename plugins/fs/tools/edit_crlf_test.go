package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// The seven gates of docs/ARCHITECTURE.md#core-rules §18: line endings are a
// contract, not a rendering detail. Each edit test compares the file's bytes,
// and the line_endings notes, exactly.

func TestCRLF_ReadKeepsCarriageReturn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := "one\r\ntwo\rstill two\r\nthree\n"
	e.write("f.txt", content)
	res := e.run("read_file", map[string]any{"path": "f.txt"})
	if res.Text != content {
		t.Errorf("read_file: got %q, want the bytes on disk %q", res.Text, content)
	}
	if d := readData(t, res); d.TotalLines == nil || *d.TotalLines != 3 {
		t.Errorf("lines: got %+v, want 3 (split on \\n only)", d)
	}
	res = e.run("read_file", map[string]any{"path": "f.txt", "offset": 2, "limit": 1})
	if got := body(res); got != "two\rstill two\r\n" {
		t.Errorf("line 2: got %q, want %q", got, "two\rstill two\r\n")
	}
}

func TestCRLF_ExactHitConvertsNewString(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f.txt", "alpha\r\nbeta\r\ngamma\r\n")
	// A one-line old_string always hits exactly; its multi-line LF
	// new_string must not create LF lines in a CRLF file.
	res := e.run("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "beta", "new_string": "beta 1\nbeta 2"})
	if got, want := e.read("f.txt"), "alpha\r\nbeta 1\r\nbeta 2\r\ngamma\r\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
	if got := noteDetails(res, "line_endings"); !slices.Equal(got, []string{"crlf-applied"}) {
		t.Errorf("line_endings notes: got %q, want [crlf-applied]", got)
	}
}

func TestCRLF_FallbackRestoresCRLF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"exact once stripped", "beta\ngamma\n", "BETA\nGAMMA\nDELTA\n", "alpha\r\nBETA\r\nGAMMA\r\nDELTA\r\nend\r\n"},
		{"relaxed once stripped", "  beta  \ngamma\n", "B\n", "alpha\r\nB\r\nend\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write("f.txt", "alpha\r\nbeta\r\ngamma\r\nend\r\n")
			res := e.run("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": tt.old, "new_string": tt.new})
			if got := e.read("f.txt"); got != tt.want {
				t.Errorf("file: got %q, want %q", got, tt.want)
			}
			if got := noteDetails(res, "line_endings"); !slices.Equal(got, []string{"crlf-normalized"}) {
				t.Errorf("line_endings notes: got %q, want [crlf-normalized]", got)
			}
		})
	}
}

func TestCRLF_FallbackRequiresUniqueMatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := "x\r\nblock\r\nend\r\ny\r\nblock\r\nend\r\n"
	e.write("f.txt", content)
	te := e.fail("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "block\nend\n", "new_string": "changed\n"}, sdk.CodeSearchNotUnique)
	mustContain(t, "error", te.Message, "2 times", "lines 2, 5")
	if got := e.read("f.txt"); got != content {
		t.Errorf("file changed on a refused edit: got %q", got)
	}
}

func TestCRLF_MixedEndingsNotConverted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := "alpha\r\nbeta\r\ngamma\nend\n"
	e.write("f.txt", content)
	te := e.fail("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "alpha\nbeta\n", "new_string": "A\nB\n"}, sdk.CodeSearchNotFound)
	mustContain(t, "error", te.Message, "mixes line endings (2 CRLF, 2 LF", "no line-ending fallback")
	if got := e.read("f.txt"); got != content {
		t.Errorf("mixed file rewritten: got %q, want it untouched %q", got, content)
	}
	// An exact hit still works, and leaves every other line's ending alone.
	res := e.run("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "gamma", "new_string": "G"})
	if got, want := e.read("f.txt"), "alpha\r\nbeta\r\nG\nend\n"; got != want {
		t.Errorf("exact edit of a mixed file: got %q, want %q", got, want)
	}
	if got := noteDetails(res, "line_endings"); len(got) != 0 {
		t.Errorf("line_endings notes: got %q, want none for a one-line new_string", got)
	}
}

func TestCRLF_StrayCRBlocksFallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// CRLF breaks, but one "\r" stands alone inside a line: not uniformly
	// CRLF, so stripping and restoring would rewrite more than the edit.
	content := "alpha\r\nbe\rta\r\ngamma\r\n"
	e.write("f.txt", content)
	te := e.fail("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "alpha\nbe\rta\n", "new_string": "A\n"}, sdk.CodeSearchNotFound)
	mustContain(t, "error", te.Message, "lone CR")
	if got := e.read("f.txt"); got != content {
		t.Errorf("file changed: got %q, want %q", got, content)
	}
}

func TestCRLF_MultiEditKeepsCRLF(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f.txt", "one\r\ntwo\r\nthree\r\nfour\r\n")
	res := e.run("multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{
		{"old_string": "one", "new_string": "one\nand a half"},
		{"old_string": "three\nfour\n", "new_string": "3\n4\n"},
	}})
	if got, want := e.read("f.txt"), "one\r\nand a half\r\ntwo\r\n3\r\n4\r\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
	if got := noteDetails(res, "line_endings"); !slices.Equal(got, []string{"crlf-applied", "crlf-normalized"}) {
		t.Errorf("line_endings notes: got %q, want [crlf-applied crlf-normalized]", got)
	}
	if !strings.Contains(res.Text, "applied 2 edits") {
		t.Errorf("result: %q", res.Text)
	}
}
