package tools

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestShownPath: the host sends paths absolute; inside the workspace the
// model reads them relative, as it names its files.
func TestShownPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	abs := e.write("docs/a.txt", "one\n")
	for _, tc := range []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"write_file", map[string]any{"path": filepath.Join(e.ws, "docs", "b.txt"), "content": "x\n"}, "docs/b.txt"},
		{"list_dir", map[string]any{"path": filepath.Join(e.ws, "docs")}, "docs/"},
		{"search_replace_in_file", map[string]any{"path": abs, "old_string": "one", "new_string": "two"}, "Edited docs/a.txt"},
	} {
		res := e.run(tc.tool, tc.input)
		if !strings.Contains(res.Text, tc.want) || strings.Contains(res.Text, e.ws) {
			t.Errorf("%s(%v) = %q, want it to show %q, not the workspace's absolute path", tc.tool, tc.input, res.Text, tc.want)
		}
	}
	if te := e.fail("read_file", map[string]any{"path": filepath.Join(e.ws, "nope.txt")}, "not_found"); !strings.HasPrefix(te.Message, "nope.txt ") {
		t.Errorf("read_file of a missing file: %q, want it named nope.txt", te.Message)
	}
}
