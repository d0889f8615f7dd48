package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// TestEndSession_ForgetsItsPlanAndTodos: the host's EndSession, over gRPC,
// drops the ended session's todos and plan from memory and disk; another
// session's stay, and so does a file of another plugin in the folder.
func TestEndSession_ForgetsItsPlanAndTodos(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := plugintest.Start(t, newPlugin(options{StateDir: dir}), nil)
	ctx := context.Background()
	in := func(session string) sdk.CallInfo { return sdk.CallInfo{SessionID: session} }
	for _, s := range []string{"ended", "other"} {
		if _, err := c.Call(ctx, "todo_write", in(s), map[string]any{"todos": []map[string]any{{"id": "1", "content": "todo of " + s, "status": "pending"}}}); err != nil {
			t.Fatalf("todo_write in %s: %v", s, err)
		}
		if _, err := c.Call(ctx, "update_plan", in(s), map[string]any{"plan": []map[string]any{{"step": "plan of " + s, "status": "pending"}}}); err != nil {
			t.Fatalf("update_plan in %s: %v", s, err)
		}
	}
	ended := filepath.Join(sdk.SessionDir(dir, "ended"), stateFileName)
	if _, err := os.Stat(ended); err != nil {
		t.Fatalf("the ended session's state was never saved: %v", err)
	}

	otherPlugins := filepath.Join(filepath.Dir(ended), "shell.log")
	if err := os.WriteFile(otherPlugins, []byte("a background command's log"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.EndSession(ctx, "ended"); err != nil {
		t.Fatalf("EndSession: %v", err)
	}
	if _, err := os.Stat(ended); !os.IsNotExist(err) {
		t.Errorf("the ended session's state file is still there (stat: %v)", err)
	}
	if _, err := os.Stat(otherPlugins); err != nil {
		t.Errorf("another plugin's file in the session folder went with the state: %v", err)
	}
	res, err := c.Call(ctx, "todo_read", in("ended"), map[string]any{})
	if err != nil || strings.Contains(res.Text, "todo of ended") {
		t.Errorf("todo_read of the ended session = %v, %v; want no todos", res, err)
	}
	res, err = c.Call(ctx, "todo_read", in("other"), map[string]any{})
	if err != nil || !strings.Contains(res.Text, "todo of other") {
		t.Errorf("todo_read of the other session = %v, %v; want its todo", res, err)
	}
	again := newStore(dir) // a restarted plugin reads the other's from disk
	if s, _ := again.read("other"); len(s.Plan) != 1 {
		t.Errorf("the other session's saved plan = %+v, want its step", s.Plan)
	}
}
