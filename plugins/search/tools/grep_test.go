package tools

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/sdk"
)

// grepBackends returns Grep tools to run a case with: ripgrep hidden
// always, ripgrep found when installed and not hidden.
func grepBackends(t testing.TB) map[string]sdk.Tool {
	out := map[string]sdk.Tool{"go": Grep(Config{LookPath: lookPath("rg")})}
	if has("rg") {
		out["rg"] = Grep(Config{LookPath: lookPath()})
	} else {
		t.Logf("ripgrep hidden or missing: the tool runs on the Go back-end only")
	}
	return out
}

func TestGrepTool(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".git/HEAD":    "ref: refs/heads/main\n",
		".gitignore":   "gen/\n",
		"main.go":      "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"util.go":      "package main\n\nfunc helper() {}\n",
		"gen/z.go":     "package gen\n\nfunc generated() {}\n",
		"docs/a.md":    "func in docs\n",
		"sub/many.txt": strings.Repeat("func line\n", 5),
	})
	tests := []struct {
		name  string
		in    grepInput
		want  string
		notes []string
	}{
		{"basic", grepInput{Pattern: `^func \w+\(`}, "main.go:3:func main() {\nutil.go:3:func helper() {}\n", nil},
		{"glob", grepInput{Pattern: "func", Glob: "*.md"}, "docs/a.md:1:func in docs\n", nil},
		{"path", grepInput{Pattern: "func", Path: "sub", MaxResults: 2}, "sub/many.txt:1:func line\nsub/many.txt:2:func line\n" +
			"[showing 2 of 5 matching lines in 1 files, sorted by path; narrow path, glob or pattern, or raise max_results up to 2000]\n",
			[]string{"truncated"}},
		{"ignored path given explicitly", grepInput{Pattern: "func", Path: "gen/z.go"}, "gen/z.go:3:func generated() {}\n", nil},
		{"context clamped", grepInput{Pattern: "println", Context: 50}, "main.go-1-package main\nmain.go-2-\nmain.go-3-func main() {\nmain.go:4:\tprintln(\"hi\")\nmain.go-5-}\n", []string{"clamped"}},
		{"no match", grepInput{Pattern: "nothing"}, "No lines match \"nothing\" in the workspace. Ignored (.gitignore), hidden and binary files were skipped; try ignore_case: true or a looser pattern.\n", nil},
	}
	for name, tool := range grepBackends(t) {
		for _, tt := range tests {
			res := mustCall(t, tool, ws, tt.in)
			if res.Text != tt.want {
				t.Errorf("%s/%s: text =\n%s\nwant\n%s", name, tt.name, res.Text, tt.want)
			}
			kinds := noteKinds(res)
			for _, k := range tt.notes {
				if _, ok := kinds[k]; !ok {
					t.Errorf("%s/%s: notes %v lack %q", name, tt.name, res.Notes, k)
				}
			}
			if got := res.Data.(*grep.Result).Backend; string(got) != name {
				t.Errorf("%s/%s: ran on %q", name, tt.name, got)
			}
		}
	}
}

func TestGrepToolErrors(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for name, tool := range grepBackends(t) {
		_, err := call(t, tool, ws, grepInput{Pattern: "foo("})
		te := wantToolError(t, err, sdk.CodeInvalidInput)
		if !strings.Contains(te.Message, "literal: true") {
			t.Errorf("%s: bad pattern message %q does not say how to fix it", name, te.Message)
		}
		_, err = call(t, tool, ws, grepInput{Pattern: "x", Path: "missing/dir"})
		te = wantToolError(t, err, sdk.CodeNotFound)
		if !strings.Contains(te.Message, "missing/dir") {
			t.Errorf("%s: not-found message %q does not name the path", name, te.Message)
		}
		_, err = call(t, tool, ws, grepInput{})
		wantToolError(t, err, sdk.CodeInvalidInput)
	}
}

// An rg_path setting that names no executable falls back to PATH, and
// says so; "off" never runs ripgrep.
func TestGrepToolRgSetting(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "x\n"})
	res := mustCall(t, Grep(Config{RgPath: "/nonexistent/rg", LookPath: lookPath()}), ws, grepInput{Pattern: "x"})
	if _, ok := noteKinds(res)["rg_path"]; !ok {
		t.Errorf("notes %v lack rg_path", res.Notes)
	}
	off := mustCall(t, Grep(Config{RgPath: "off", LookPath: lookPath()}), ws, grepInput{Pattern: "x"})
	if b := off.Data.(*grep.Result).Backend; b != grep.BackendGo {
		t.Errorf("rg_path off ran on %q", b)
	}
}
