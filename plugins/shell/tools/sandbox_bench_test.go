package tools

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// BenchmarkRunBash_TrueSandboxOn and BenchmarkRunBash_TrueSandboxOff run
// run_bash true side by side with the full sandbox (Landlock, dropped
// capabilities, private /run, the exec supervisor with a deny rule) and
// with sandbox: off.
func BenchmarkRunBash_TrueSandboxOn(b *testing.B) {
	benchSandbox(b, &sdk.Sandbox{Mode: sdk.SandboxOn, Network: true, Programs: benchPrograms(b)})
}

func BenchmarkRunBash_TrueSandboxOff(b *testing.B) {
	benchSandbox(b, &sdk.Sandbox{Mode: sdk.SandboxOff, Network: true})
}

func benchSandbox(b *testing.B, sb *sdk.Sandbox) {
	tool := RunBash(runner.New(runner.Options{StateDir: b.TempDir()}))
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Tool: RunBashName, SessionID: "s1", Workspace: b.TempDir(), Sandbox: sb})
	in := json.RawMessage(`{"command":"true"}`)
	for b.Loop() {
		if _, err := tool.Call(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPrograms is a deny rule's program, so the exec supervisor runs.
func benchPrograms(b *testing.B) []sdk.ExecProgram {
	p, err := exec.LookPath("printenv")
	if err != nil {
		b.Skip("no printenv")
	}
	return []sdk.ExecProgram{{Name: "printenv", Files: []sdk.ProgramFile{{Path: p}}}}
}
