package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestTemp_ResultsNameTheSessionsFolderAsItsCommandsDo: grep and
// search_files in the session's temp folder (bound over /var/tmp), with
// ripgrep and without it, name its files /var/tmp/..., never by the
// folder's own path, which the session's commands do not see.
func TestTemp_ResultsNameTheSessionsFolderAsItsCommandsDo(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("needle here\n"), 0o644)
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Workspace: ws,
		Temp: &sdk.TempFolder{Dir: dir, Over: []string{"/var/tmp"}}})
	for _, hide := range [][]string{nil, {"rg"}} {
		cfg := Config{LookPath: lookPath(hide...)}
		for _, c := range []struct {
			tool  sdk.Tool
			input any
		}{
			{Grep(cfg), map[string]any{"pattern": "needle", "path": dir}},
			{SearchFiles(cfg), map[string]any{"pattern": "*.txt", "path": dir}},
		} {
			raw, _ := json.Marshal(c.input)
			res, err := c.tool.Call(ctx, raw)
			if err != nil {
				t.Fatalf("%s (hidden %v): %v", c.tool.Spec().Name, hide, err)
			}
			if !strings.Contains(res.Text, "/var/tmp/notes.txt") || strings.Contains(res.Text, dir) {
				t.Errorf("%s (hidden %v) says:\n%s\nwant /var/tmp/notes.txt, never %s", c.tool.Spec().Name, hide, res.Text, dir)
			}
		}
	}
}
