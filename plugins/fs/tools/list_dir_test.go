package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestListDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, f := range []string{"b.txt", "a/x.go", "a/deep/y.go", "a/deep/deeper/z.go", ".git/HEAD", "C.md"} {
		e.write(f, "")
	}
	if err := os.Symlink("b.txt", filepath.Join(e.ws, "link")); err != nil {
		t.Fatal(err)
	}
	res := e.run("list_dir", map[string]any{})
	want := "./\n  C.md\n  a/\n    deep/\n    x.go\n  b.txt\n  link -> b.txt\n"
	if res.Text != want {
		t.Errorf("depth 2:\n got %q\nwant %q", res.Text, want)
	}
	res = e.run("list_dir", map[string]any{"path": "a", "depth": 1})
	if want := "a/\n  deep/\n  x.go\n"; res.Text != want {
		t.Errorf("a, depth 1:\n got %q\nwant %q", res.Text, want)
	}
	res = e.run("list_dir", map[string]any{"path": "a", "depth": 99})
	if !strings.Contains(res.Text, "z.go") || len(noteDetails(res, "depth_capped")) != 1 {
		t.Errorf("depth 99: got %q, notes %v; want the whole tree and a depth_capped note", res.Text, res.Notes)
	}
	te := e.fail("list_dir", map[string]any{"path": "b.txt"}, sdk.CodeInvalidInput)
	mustContain(t, "error", te.Message, "read_file")
	e.fail("list_dir", map[string]any{"path": "nope"}, sdk.CodeNotFound)
}

// TestListDir_EntryCap lowers maxListEntries; serial.
func TestListDir_EntryCap(t *testing.T) {
	old := maxListEntries
	maxListEntries = 10
	t.Cleanup(func() { maxListEntries = old })
	e := newEnv(t)
	for i := range 25 {
		e.write(fmt.Sprintf("f%02d", i), "")
	}
	res := e.run("list_dir", map[string]any{})
	if n := strings.Count(res.Text, "\n  f"); n != 10 {
		t.Errorf("listed %d entries, want the cap of 10", n)
	}
	mustContain(t, "result", res.Text, "stopped at 10 entries")
	if d := res.Data.(ListDirData); !d.Cut {
		t.Errorf("data: %+v, want cut", d)
	}
}
