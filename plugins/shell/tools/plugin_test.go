package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// TestPlugin_OverGRPC runs the tools as the host reaches them: over real
// gRPC, with process groups reported through the broker, also for a task
// that ends after the call that started it returned.
func TestPlugin_OverGRPC(t *testing.T) {
	t.Parallel()
	m := runner.New(runner.Options{StateDir: t.TempDir()})
	c := plugintest.Start(t, sdk.Plugin{Name: "shell", Version: Version, Tools: All(m), OnShutdown: m.Shutdown}, &plugintest.Options{
		Approve: func(context.Context, sdk.CallInfo, sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
			return sdk.ApprovalResponse{Approved: true}, nil
		},
	})
	ctx := context.Background()
	info := sdk.CallInfo{SessionID: "s1"}

	res, err := c.Call(ctx, RunBashName, info, map[string]any{"command": "echo over-grpc"})
	if err != nil || res.Text != "over-grpc\n" {
		t.Fatalf("run_bash = %v, %v; want over-grpc", res, err)
	}

	res, err = c.Call(ctx, RunBashName, info, map[string]any{"command": "read -r line; echo got $line", "mode": "pty", "yield_time_ms": 200})
	if err != nil {
		t.Fatalf("run_bash pty: %v", err)
	}
	id := taskID(t, res.Text)
	if _, err := c.Call(ctx, WriteStdinName, info, map[string]any{"task_id": id, "input": "x", "keys": []string{"enter"}}); err != nil {
		t.Fatalf("write_stdin: %v", err)
	}
	// The input was put to the host before it was typed: to bash, whose
	// read takes it, as a line.
	if a := c.Host.Approvals(); len(a) != 1 || a[0].Request.Kind != sdk.ApprovalStdin || !a[0].Request.Shell || a[0].Request.Input != "x\n" || a[0].Call.Tool != WriteStdinName {
		t.Errorf("approvals = %+v, want one stdin request of write_stdin for bash's line x", a)
	}
	res, err = c.Call(ctx, ShellWaitName, info, map[string]any{"task_id": id, "timeout_ms": 5000})
	if err != nil && !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("shell_wait: %v", err)
	}
	if live := c.Host.LiveGroups(); len(live) != 0 {
		t.Errorf("host still sees live groups %v after every command ended", live)
	}
	reports := c.Host.GroupReports()
	if len(reports) != 4 {
		t.Errorf("group reports = %+v, want a start and an end for each of the two commands", reports)
	}
}

// taskID finds "task sh-N" in a yield receipt.
func taskID(t *testing.T, text string) string {
	t.Helper()
	i := strings.Index(text, "as task ")
	if i < 0 {
		t.Fatalf("no task id in %q", text)
	}
	f := strings.Fields(text[i+len("as task "):])
	return f[0]
}
