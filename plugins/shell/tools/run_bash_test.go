package tools

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

func newCallCtx(t testing.TB, ws string) context.Context {
	return sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Tool: RunBashName, SessionID: "s1", Workspace: ws})
}

func call(t *testing.T, tool sdk.Tool, ws string, input string) (*sdk.Result, error) {
	t.Helper()
	return tool.Call(newCallCtx(t, ws), json.RawMessage(input))
}

// TestExecuteRunBash pins the exact foreground output: the baseline every
// change of the receipts' shape must meet first.
func TestExecuteRunBash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		command  string
		want     string
		wantCode int
	}{
		{name: "foreground success", command: "echo hello", want: "hello\n"},
		{name: "foreground failure", command: "echo out; echo err >&2; exit 3", want: "out\nerr\n(exit code 3)", wantCode: 3},
		{name: "success without output", command: "true", want: "(no output)"},
		{name: "failure without output", command: "exit 2", want: "(no output)\n(exit code 2)", wantCode: 2},
		{name: "stderr only", command: "echo warn >&2", want: "warn\n"},
		{name: "no trailing newline", command: "printf 'a\\nb'; exit 1", want: "a\nb\n(exit code 1)", wantCode: 1},
		{name: "runs in the workspace root", command: "test -f marker && echo here", want: "here\n"},
	}
	m := runner.New(runner.Options{StateDir: t.TempDir()})
	tool := RunBash(m)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			if err := exec.Command("touch", ws+"/marker").Run(); err != nil {
				t.Fatal(err)
			}
			input, _ := json.Marshal(map[string]any{"command": tt.command})
			res, err := call(t, tool, ws, string(input))
			if err != nil {
				t.Fatalf("run_bash(%q): %v", tt.command, err)
			}
			if res.Text != tt.want {
				t.Errorf("run_bash(%q) text = %q, want %q", tt.command, res.Text, tt.want)
			}
			d, ok := res.Data.(*runner.Data)
			if !ok || d.ExitCode == nil || *d.ExitCode != tt.wantCode || d.Status != "exited" {
				t.Errorf("run_bash(%q) data = %+v, want exited with code %d", tt.command, res.Data, tt.wantCode)
			}
		})
	}
}

func TestRunBash_InvalidInputSaysWhatToDo(t *testing.T) {
	t.Parallel()
	tool := RunBash(runner.New(runner.Options{StateDir: t.TempDir()}))
	for _, in := range []string{`{"command":""}`, `{"command":"true","mode":"tty"}`} {
		_, err := call(t, tool, t.TempDir(), in)
		te, ok := sdk.AsToolError(err)
		if !ok || te.Code != sdk.CodeInvalidInput {
			t.Errorf("run_bash(%s) = %v, want invalid_input", in, err)
		}
	}
}

func TestAll_SpecsAreTheFamilysTools(t *testing.T) {
	t.Parallel()
	want := map[string]sdk.Effect{
		RunBashName: sdk.EffectExec, ShellCancelName: sdk.EffectExec, ShellTasksName: sdk.EffectNone,
		ShellWaitName: sdk.EffectNone, WriteStdinName: sdk.EffectExec,
	}
	tools := All(runner.New(runner.Options{}))
	if len(tools) != len(want) {
		t.Fatalf("All() has %d tools, want %d", len(tools), len(want))
	}
	prev := ""
	for _, tl := range tools {
		s := tl.Spec()
		if eff, ok := want[s.Name]; !ok || eff != s.Effect {
			t.Errorf("tool %s effect %q, want %q", s.Name, s.Effect, eff)
		}
		if s.Name <= prev {
			t.Errorf("All() not sorted: %s after %s", s.Name, prev)
		}
		prev = s.Name
		if s.Description == "" || s.Brief == "" {
			t.Errorf("tool %s has no description or brief", s.Name)
		}
		var schema map[string]any
		if err := json.Unmarshal(s.InputSchema, &schema); err != nil || schema["additionalProperties"] != false {
			t.Errorf("tool %s schema %s: want an object refusing unknown fields", s.Name, s.InputSchema)
		}
	}
	roles := RunBash(runner.New(runner.Options{})).Spec().Roles
	if roles["command"] != sdk.RoleCommand || roles["is_dangerous"] != sdk.RoleDangerFlag {
		t.Errorf("run_bash roles = %v, want command and danger_flag", roles)
	}
}

func TestOptions_KeepHandshakeOutOfCommands(t *testing.T) {
	t.Parallel()
	opts, err := Options(map[string]string{"state_dir": "/x/state"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.StateDir != "/x/state" {
		t.Errorf("StateDir = %q, want the setting", opts.StateDir)
	}
	found := false
	for _, e := range opts.DropEnv {
		found = found || e == sdk.Handshake.MagicCookieKey
	}
	if !found {
		t.Errorf("DropEnv = %v, want the magic cookie key %s", opts.DropEnv, sdk.Handshake.MagicCookieKey)
	}
}

// BenchmarkRunBash_True and BenchmarkExecBash_True run the same command
// side by side: through the tool (decode, process group, reports, receipt)
// and with exec directly.
func BenchmarkRunBash_True(b *testing.B) {
	tool := RunBash(runner.New(runner.Options{StateDir: b.TempDir()}))
	ctx := newCallCtx(b, b.TempDir())
	in := json.RawMessage(`{"command":"true"}`)
	for b.Loop() {
		if _, err := tool.Call(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunBash_BackgroundHoldsPipes runs `sleep 97 & echo started`
// through the tool with the default wait delay and quiet spell, and
// reports the median time from call to answer: bash exits at once, the
// sleep holds the output pipe. Each answer must be the held-open receipt;
// the sleep it left (in bash's process group) is killed after each call.
func BenchmarkRunBash_BackgroundHoldsPipes(b *testing.B) {
	tool := RunBash(runner.New(runner.Options{StateDir: b.TempDir()}))
	ctx := newCallCtx(b, b.TempDir())
	in := json.RawMessage(`{"command":"sleep 97 & echo started"}`)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := tool.Call(ctx, in)
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		d := res.Data.(*runner.Data)
		_ = syscall.Kill(-d.PID, syscall.SIGKILL)
		if !d.HeldOpen || d.ExitCode == nil || *d.ExitCode != 0 {
			b.Fatalf("data = %+v, want exit code 0 with output_held_open", d)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
}

func BenchmarkExecBash_True(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
