package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestSearchFiles(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		".gitignore":               "build/\n*.tmp\n!keep.tmp\n",
		"main.go":                  "",
		"main_test.go":             "",
		"cmd/tool/main.go":         "",
		"pkg/a/a.go":               "",
		"pkg/a/a.py":               "",
		"build/out.go":             "",
		"x.tmp":                    "",
		"keep.tmp":                 "",
		".github/workflows/ci.yml": "",
		".env":                     "",
		"docs/guide.md":            "",
		"pkg/Makefile":             "",
	})
	if err := os.Symlink("main.go", filepath.Join(ws, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(ws, "pkg", "loop")); err != nil {
		t.Fatal(err)
	}
	tool := SearchFiles(Config{})
	tests := []struct {
		name string
		in   searchFilesInput
		want string
	}{
		{"name at any depth", searchFilesInput{Pattern: "*.go"}, "cmd/tool/main.go\nlink.go@\nmain.go\nmain_test.go\npkg/a/a.go\n[paths ending in @ are symbolic links, not followed]\n"},
		{"anchored doublestar", searchFilesInput{Pattern: "cmd/**/*.go"}, "cmd/tool/main.go\n"},
		{"alternatives", searchFilesInput{Pattern: "*.{py,md}"}, "docs/guide.md\npkg/a/a.py\n"},
		{"negation re-includes", searchFilesInput{Pattern: "*.tmp"}, "keep.tmp\n"},
		{"exact name", searchFilesInput{Pattern: "Makefile"}, "pkg/Makefile\n"},
		{"folders", searchFilesInput{Pattern: "pkg/*/"}, "pkg/a/\n"},
		{"hidden when named", searchFilesInput{Pattern: ".github/**/*.yml"}, ".github/workflows/ci.yml\n"},
		{"hidden file when named", searchFilesInput{Pattern: ".env"}, ".env\n"},
		{"under path", searchFilesInput{Pattern: "*.go", Path: "pkg"}, "pkg/a/a.go\n"},
		{"capped", searchFilesInput{Pattern: "*.go", MaxResults: 2}, "cmd/tool/main.go\nlink.go@\n[showing 2 of 5 paths, sorted; narrow the pattern or path, or raise max_results up to 5000]\n[paths ending in @ are symbolic links, not followed]\n"},
		{"no wildcard hint", searchFilesInput{Pattern: "config"}, "No paths match \"config\" under the workspace (ignored and hidden files skipped). The pattern has no wildcard, so it matches the name exactly: try *config* to match names containing it.\n"},
	}
	for _, tt := range tests {
		res := mustCall(t, tool, ws, tt.in)
		if res.Text != tt.want {
			t.Errorf("%s: search_files(%+v) =\n%s\nwant\n%s", tt.name, tt.in, res.Text, tt.want)
		}
	}

	_, err := call(t, tool, ws, searchFilesInput{Pattern: "[abc"})
	wantToolError(t, err, sdk.CodeInvalidInput)
	_, err = call(t, tool, ws, searchFilesInput{Pattern: "*.go", Path: "main.go"})
	if te := wantToolError(t, err, sdk.CodeInvalidInput); !strings.Contains(te.Message, "is a file") {
		t.Errorf("file as path: %q", te.Message)
	}
	_, err = call(t, tool, ws, searchFilesInput{Pattern: "*.go", Path: "nope"})
	wantToolError(t, err, sdk.CodeNotFound)
}

// TestSearchFiles_AlternativesBounded: a pattern whose {a,b} alternatives
// make more patterns than the bound, or that has more {} groups, is
// refused before any name is matched (doublestar.Match tries each
// pattern: 30 groups of {a,a} take some 6 minutes a name).
func TestSearchFiles_AlternativesBounded(t *testing.T) {
	t.Parallel()
	for pattern, want := range map[string][2]int{
		"*.go": {1, 0}, "{a,b}{c,d}": {4, 2}, "{a,{b,c}}": {3, 2}, "x{a,b,c}y{d,e}": {6, 2}, `\{a,b\}`: {1, 0}, "[{]a,b[}]": {1, 0},
		strings.Repeat("{a,b}", 8): {256, 8}, strings.Repeat("{a,b}", 9): {257, 9}, strings.Repeat("{", 5000) + "a" + strings.Repeat("}", 5000): {1, 5000},
	} {
		if n, groups := globAlternatives(pattern, filesMaxAlternatives); n != want[0] || groups != want[1] {
			t.Errorf("globAlternatives(%.40q) = %d, %d, want %v", pattern, n, groups, want)
		}
	}
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{strings.Repeat("a", 30): "", "a.go": "", "b.ts": ""})
	tool := SearchFiles(Config{})
	for _, pattern := range []string{
		strings.Repeat("{a,b}", 9) + "x", // 512 patterns
		strings.Repeat("{a}", 33) + "x",  // 33 groups
		strings.Repeat("{a,a}", 30) + "x",
	} {
		res, err := call(t, tool, ws, searchFilesInput{Pattern: pattern})
		if err == nil {
			t.Fatalf("%.40q: %q", pattern, res.Text)
		}
		if te := wantToolError(t, err, sdk.CodeInvalidInput); !strings.Contains(te.Message, "32 {} groups and 256 patterns at most") {
			t.Errorf("%.40q: %s", pattern, te.Message)
		}
	}
	if res := mustCall(t, tool, ws, searchFilesInput{Pattern: "{{a,b},{c,d}}.{go,ts,{js,py}}"}); res.Text != "a.go\nb.ts\n" {
		t.Errorf("16 alternatives: %q", res.Text)
	}
}
