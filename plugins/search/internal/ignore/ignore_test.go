package ignore

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", false},
		{"main*", "main_test.go", true},
		{"main*", "main/x", false},
		{"a/*.go", "a/x.go", true},
		{"a/*.go", "a/b/x.go", false},
		{"**/x.go", "x.go", true},
		{"**/x.go", "a/b/x.go", true},
		{"a/**", "a/b", true},
		{"a/**", "a/b/c", true},
		{"a/**", "a", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "ab", false},
		{"**", "anything/at/all", true},
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"[abc].txt", "b.txt", true},
		{"[!abc].txt", "b.txt", false},
		{"[!abc].txt", "d.txt", true},
		{"[a-c]x", "bx", true},
		{"[]]x", "]x", true},
		{"[[:digit:]]x", "7x", true},
		{"*.{go,py}", "a.py", true},
		{"*.{go,py}", "a.rs", false},
		{`\*.go`, "*.go", true},
		{`\*.go`, "x.go", false},
		{`\#x`, "#x", true},
		{"[unclosed", "[unclosed", true},
		{"a.b", "axb", false},
		{"x+(y)", "x+(y)", true},
	}
	for _, tt := range tests {
		g, err := CompileGlob(tt.glob)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", tt.glob, err)
		}
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("CompileGlob(%q).Match(%q) = %v, want %v", tt.glob, tt.path, got, tt.want)
		}
	}
	if _, err := CompileGlob("*.{go"); err == nil {
		t.Errorf("CompileGlob(%q): want an error for the unclosed brace", "*.{go")
	}
}

func TestFileMatch(t *testing.T) {
	t.Parallel()
	const dir = "/w"
	tests := []struct {
		name  string
		rules string
		path  string
		isDir bool
		want  Match
	}{
		{"basename anywhere", "*.log", "/w/a/b/x.log", false, Ignore},
		{"anchored root only", "/build", "/w/build", true, Ignore},
		{"anchored not deeper", "/build", "/w/a/build", true, None},
		{"dir only skips files", "out/", "/w/out", false, None},
		{"dir only matches dirs", "out/", "/w/a/out", true, Ignore},
		{"middle slash anchors", "doc/*.txt", "/w/doc/a.txt", false, Ignore},
		{"middle slash anchors deeper", "doc/*.txt", "/w/x/doc/a.txt", false, None},
		{"negation wins when last", "*.log\n!keep.log", "/w/keep.log", false, Whitelist},
		{"last line wins", "!keep.log\n*.log", "/w/keep.log", false, Ignore},
		{"comment", "#x.log", "/w/#x.log", false, None},
		{"escaped hash", `\#x.log`, "/w/#x.log", false, Ignore},
		{"escaped bang", `\!x`, "/w/!x", false, Ignore},
		{"trailing spaces dropped", "x.log   ", "/w/x.log", false, Ignore},
		{"escaped trailing space kept", `x\ `, "/w/x ", false, Ignore},
		{"crlf", "x.log\r\n", "/w/x.log", false, Ignore},
		{"double star dir", "**/gen/", "/w/a/gen", true, Ignore},
		{"inside double star", "logs/**", "/w/logs/a/b.txt", false, Ignore},
		{"outside dir", "*.log", "/other/x.log", false, None},
		{"prefix trap", "*.log", "/wx/x.log", false, None},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := ParseFile(dir, []byte(tt.rules))
			if got := f.Match(tt.path, tt.isDir); got != tt.want {
				t.Errorf("rules %q: Match(%q, dir=%v) = %v, want %v", tt.rules, tt.path, tt.isDir, got, tt.want)
			}
		})
	}
}

func TestTreePrecedence(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "*.log\n*.tmp\n")
	write("sub/.gitignore", "!keep.log\n")
	write(".ignore", "!wanted.tmp\n")
	write("sub/deep/.rgignore", "*.md\n")
	write(".git/info/exclude", "secret.txt\n")
	write(".git/HEAD", "ref: x\n")

	tree := NewTree()
	tests := []struct {
		path   string
		isDir  bool
		hidden bool
		want   bool
	}{
		{"a.log", false, false, true},
		{"sub/a.log", false, false, true},
		{"sub/keep.log", false, false, false},     // deeper .gitignore re-includes
		{"sub/x/wanted.tmp", false, false, false}, // .ignore beats .gitignore
		{"sub/x/other.tmp", false, false, true},
		{"sub/deep/r.md", false, false, true},
		{"sub/r.md", false, false, false},
		{"secret.txt", false, false, true},
		{"sub/secret.txt", false, false, true},
		{".hidden", false, false, true},
		{".hidden", false, true, false},
		{"plain.go", false, false, false},
	}
	for _, tt := range tests {
		abs := filepath.Join(root, tt.path)
		d := tree.Lookup(filepath.Dir(abs))
		if got := d.Excluded(abs, tt.isDir, tt.hidden); got != tt.want {
			t.Errorf("Excluded(%q, hidden=%v) = %v, want %v", tt.path, tt.hidden, got, tt.want)
		}
	}
	// Outside a repository .gitignore files are not read; .ignore files are.
	plain := t.TempDir()
	for rel, data := range map[string]string{".gitignore": "*.log\n", ".ignore": "*.tmp\n", "repo/.git/HEAD": "x", "repo/.gitignore": "*.md\n"} {
		p := filepath.Join(plain, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"a.log", false},      // no repository: .gitignore not read
		{"a.tmp", true},       // .ignore read anyway
		{"repo/a.md", true},   // the repository's own .gitignore
		{"repo/a.log", false}, // a .gitignore above the repository's root
		{"repo/a.tmp", true},  // .ignore files apply from every ancestor
	} {
		abs := filepath.Join(plain, tt.path)
		if got := tree.Lookup(filepath.Dir(abs)).Excluded(abs, false, false); got != tt.want {
			t.Errorf("Excluded(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}

	var zero *Tree
	if zero.Lookup(root).Excluded(filepath.Join(root, "a.log"), false, false) {
		t.Errorf("a nil Tree must read no ignore file")
	}
}
