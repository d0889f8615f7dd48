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
