package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestTemp_FilesOfTheSessionsFolder: with the session's temp folder bound
// over /var/tmp, the file tools write and read the paths the host mapped
// into it, list it, and name its files as the session's commands do.
func TestTemp_FilesOfTheSessionsFolder(t *testing.T) {
	e := newEnv(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c", SessionID: "s1", Workspace: e.ws,
		Temp: &sdk.TempFolder{Dir: dir, Over: []string{"/var/tmp"}}})
	p := filepath.Join(dir, "sub", "b.txt") // as the host sends /var/tmp/sub/b.txt
	res, err := e.call(ctx, "write_file", map[string]any{"path": p, "content": "hello\n"})
	if err != nil {
		t.Fatalf("write_file into the session's folder: %v", err)
	}
	if !strings.Contains(res.Text, "/var/tmp/sub/b.txt") || strings.Contains(res.Text, dir) {
		t.Errorf("write_file says %q: want the file named /var/tmp/sub/b.txt", res.Text)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "hello\n" {
		t.Fatalf("the file in the session's folder: %q, %v", b, err)
	}
	res, err = e.call(ctx, "read_file", map[string]any{"path": p})
	if err != nil || !strings.Contains(res.Text, "hello") {
		t.Errorf("read_file: %v, %v", res, err)
	}
	res, err = e.call(ctx, "list_dir", map[string]any{"path": dir})
	if err != nil || !strings.HasPrefix(res.Text, "/var/tmp/") || !strings.Contains(res.Text, "sub/") {
		t.Errorf("list_dir of the folder: %v, %v; want it named /var/tmp/", res, err)
	}
	// Without the folder among the call's roots it is outside the
	// workspace, like any other.
	if _, err := e.call(e.ctx("s1"), "read_file", map[string]any{"path": p}); err == nil {
		t.Error("read_file of the folder's file with no temp folder in the call: want a refusal")
	}
}
