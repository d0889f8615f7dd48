package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// BenchmarkRunBash_TrueSandbox runs run_bash true with the sandbox off,
// with the sandbox of the built-in profiles (Landlock, dropped
// capabilities, private /run, a cgroup bounding the command to 4096
// processes and 8 GiB, the session's temp folder over /tmp and /dev/shm;
// their exec rules only ask before REPLs, which a command without a
// terminal cannot start, so no exec supervisor), and with an exec deny
// rule as well (every exec judged), one after the other in each
// iteration, so that the machine's noise falls on all three alike; then
// the first command of a new session (its temp folder's mount namespace
// made). It reports each median and the ratios to off.
func BenchmarkRunBash_TrueSandbox(b *testing.B) {
	p, err := exec.LookPath("printenv")
	if err != nil {
		b.Skip("no printenv")
	}
	tool := RunBash(runner.New(runner.Options{StateDir: b.TempDir()}))
	// Outside /tmp, which the session's folder stands for, as the host
	// decides for a workspace there.
	ws, err := os.MkdirTemp("/var/tmp", "bench-ws-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(ws)
	temp := &sdk.TempFolder{Dir: b.TempDir(), Over: []string{"/tmp", "/dev/shm"}}
	ctxFor := func(sb *sdk.Sandbox) context.Context {
		info := sdk.CallInfo{ID: "c1", Tool: RunBashName, SessionID: "s1", Workspace: ws, Sandbox: sb, Temp: temp}
		return sdk.WithCall(context.Background(), info)
	}
	rule := func(interactive bool) []sdk.ExecProgram {
		return []sdk.ExecProgram{{Name: "printenv", Files: []sdk.ProgramFile{{Path: p}}, Interactive: interactive}}
	}
	kinds := []struct {
		name string
		ctx  context.Context
		took []time.Duration
	}{
		{name: "off", ctx: ctxFor(&sdk.Sandbox{Mode: sdk.SandboxOff})},
		{name: "on", ctx: ctxFor(&sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn, Programs: rule(true), Pids: 4096, MemoryMB: 8192, TmpSizeMB: 4096})},
		{name: "deny", ctx: ctxFor(&sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn, Programs: rule(false), Pids: 4096, MemoryMB: 8192, TmpSizeMB: 4096})},
	}
	in := json.RawMessage(`{"command":"true"}`)
	var fresh []time.Duration
	for b.Loop() {
		for i := range kinds {
			start := time.Now()
			if _, err := tool.Call(kinds[i].ctx, in); err != nil {
				b.Fatal(err)
			}
			kinds[i].took = append(kinds[i].took, time.Since(start))
		}
		// A session's first command: a namespace of its own is made.
		dir, err := os.MkdirTemp(temp.Dir, "s")
		if err != nil {
			b.Fatal(err)
		}
		info := sdk.CallInfo{ID: "c2", Tool: RunBashName, SessionID: "new", Workspace: ws,
			Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn, Programs: rule(true)},
			Temp:    &sdk.TempFolder{Dir: dir, Over: temp.Over}}
		start := time.Now()
		if _, err := tool.Call(sdk.WithCall(context.Background(), info), in); err != nil {
			b.Fatal(err)
		}
		fresh = append(fresh, time.Since(start))
		sandbox.ForgetTmp(dir)
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	off := median(kinds[0].took)
	for _, k := range kinds {
		b.ReportMetric(median(k.took), k.name+"-µs")
	}
	b.ReportMetric(median(kinds[1].took)/off, "on-ratio")
	b.ReportMetric(median(kinds[2].took)/off, "deny-ratio")
	b.ReportMetric(median(fresh), "new-session-µs")
	b.ReportMetric(median(fresh)/off, "new-session-ratio")
}
