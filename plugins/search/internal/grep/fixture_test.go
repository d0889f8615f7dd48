package grep

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// noRgEnv hides ripgrep from the tests when set to 1, so CI can run the
// whole suite on the Go back-end alone.
const noRgEnv = "YAGENT_TEST_NO_RG"

// testRgPath returns the ripgrep binary the tests use, or "" when it is
// hidden or missing.
func testRgPath(t testing.TB) string {
	t.Helper()
	if os.Getenv(noRgEnv) == "1" {
		return ""
	}
	p, _ := RgPath("", exec.LookPath)
	return p
}

type backendCase struct {
	name   string
	engine *Engine
}

// backends returns the back-ends to run a table against: always Go, and
// ripgrep unless hidden or missing.
func backends(t testing.TB) []backendCase {
	bs := []backendCase{{"go", &Engine{}}}
	if p := testRgPath(t); p != "" {
		bs = append(bs, backendCase{"rg", &Engine{RgPath: p}})
	} else {
		t.Logf("ripgrep hidden or missing: running the Go back-end only")
	}
	return bs
}

// writeTree writes files (relative path -> content) under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func utf16LE(s string) string {
	var b strings.Builder
	b.WriteString("\xff\xfe")
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteByte(byte(u))
		b.WriteByte(byte(u >> 8))
	}
	return b.String()
}

// fixture builds the shared search tree.
func fixture(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".git/HEAD":        "ref: refs/heads/main\n",
		".gitignore":       "*.log\nbuild/\n!important.log\n/rootonly.txt\ndocs/**/*.tmp\n",
		"a.go":             "package a\n\nfunc NewReaderSize() {}\n// deadline here\nvar Deadline = 1\n",
		"b.txt":            "hello world\nHELLO again\nfoo(bar)\nline with trailing space \r\n",
		"important.log":    "hello from log\n",
		"debug.log":        "hello ignored\n",
		"build/out.txt":    "hello build\n",
		"rootonly.txt":     "hello root\n",
		"sub/rootonly.txt": "hello sub\n",
		"sub/.gitignore":   "*.md\n!keep.md\n",
		"sub/x.md":         "hello md\n",
		"sub/keep.md":      "hello keep\n",
		"docs/a/b/c.tmp":   "hello tmp\n",
		"docs/a.tmp":       "hello tmp\n",
		"docs/guide.txt":   "say hello\n",
		".hidden/h.txt":    "hello hidden\n",
		".dotfile":         "hello dot\n",
		"bin.dat":          "hello\x00binary\n",
		"late-bin.dat":     "hello first\n" + strings.Repeat("filler line\n", 20000) + "\x00\nhello after\n",
		"bom.txt":          "\xef\xbb\xbfhello bom\n",
		"u16.txt":          utf16LE("hello utf16\nsecond\n"),
		"crlf.txt":         "hello crlf\r\nend\r\n",
		"unicode.txt":      "héllo wörld\nstraße\nΣίσυφος\n",
		"long.txt":         strings.Repeat("x", 600) + " hello " + strings.Repeat("é", 300) + "\n",
		"noeol.txt":        "first\nlast hello",
		"empty.txt":        "",
		"special.txt":      "x{,3}\na{b\n[a[b]]\nfoo.bar\nfooXbar\n",
		"ctx.txt":          "line 1\nline 2\nneedle 3\nline 4\nneedle 5\nline 6\nline 7\nline 8\nline 9\nneedle 10\n",
		"deep/er/nest.go":  "package er\n\nfunc hello() {}\n",
		"latin1.txt":       "caf\xe9 au lait\nreal \xef\xbf\xbd here\n",
	})
	if err := os.Symlink("a.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(root, "deep", "loop")); err != nil {
		t.Fatal(err)
	}
	return root
}
