package policytest

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	//go:embed testdata/tree.txt
	treeText string
	//go:embed testdata/paths.tsv
	pathsText string
)

// Tree makes the corpus's tree of files in a temporary folder and returns
// the folder, its symlinks resolved. Each line of testdata/tree.txt is
// "dir P", "file P" or "link P TARGET", tab-separated, P relative to the
// folder, "$T" in a target standing for the folder. The workspace of the cases is $T/ws,
// the home folder $T/home.
func Tree(t testing.TB) string {
	t.Helper()
	return Build(t, treeText)
}

// Build makes the tree text describes, in the format of
// testdata/tree.txt, in a temporary folder and returns the folder, its
// symlinks resolved.
func Build(t testing.TB, text string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		f := strings.Split(line, "\t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := filepath.Join(root, f[1])
		switch {
		case f[0] == "dir" && len(f) == 2:
			err = os.MkdirAll(p, 0o755)
		case f[0] == "file" && len(f) == 2:
			err = os.WriteFile(p, []byte(f[1]), 0o644)
		case f[0] == "link" && len(f) == 3:
			err = os.Symlink(strings.ReplaceAll(f[2], "$T", root), p)
		default:
			t.Fatalf("tree: %q is not dir P, file P or link P TARGET", line)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// PathCase is a path a model may give, and the one answer every resolver
// must give for it.
type PathCase struct {
	// In is the path as given: relative to the workspace, absolute, "~/".
	In string
	// Want is where it resolves, absolute and clean; "" when it must be
	// refused (WantErr says why).
	Want string
	// WantErr is why the path is refused: "url", "nul" or "loop".
	WantErr string
	// NotDir says a component of Want is a file: a guard judges the path
	// by its name, an opener refuses it.
	NotDir bool
}

// PathCases returns the corpus's cases with "$T" replaced by root (Tree's
// folder) and "\x00" by a NUL byte.
func PathCases(t testing.TB, root string) []PathCase {
	t.Helper()
	var out []PathCase
	for line := range strings.Lines(pathsText) {
		line = strings.TrimRight(line, "\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		in, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("testdata/paths.tsv: %q has no tab", line)
		}
		c := PathCase{In: strings.ReplaceAll(strings.ReplaceAll(in, `\x00`, "\x00"), "$T", root)}
		if e, ok := strings.CutPrefix(want, "ERR:"); ok {
			c.WantErr = e
		} else {
			want, c.NotDir = strings.CutSuffix(want, " (notdir)")
			c.Want = strings.ReplaceAll(want, "$T", root)
		}
		out = append(out, c)
	}
	return out
}
