package plugintest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// fatalTB records the first Fatalf of Start instead of failing the test.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	if f.msg == "" {
		f.msg = fmt.Sprintf(format, args...)
	}
	f.mu.Unlock()
	runtime.Goexit()
}

// startFails runs Start on p and returns what it failed the test with, ""
// when it did not.
func startFails(t *testing.T, p sdk.Plugin) string {
	t.Helper()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugintest.Start(tb, p, nil)
	}()
	<-done
	return tb.msg
}

type pathIn struct {
	Path string `json:"path"`
}

type commandIn struct {
	Command string `json:"command"`
}

// probe returns what it received: its input and the call's approved paths.
func probe(spec sdk.Spec) sdk.Tool {
	return sdk.NewTool(spec, func(ctx context.Context, in json.RawMessage) (*sdk.Result, error) {
		return &sdk.Result{Text: string(in), Data: sdk.CallFrom(ctx).ApprovedPaths}, nil
	})
}

func TestStart_FailsOnWhatTheHostSkips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec sdk.Spec
		want string
	}{
		{"a static tool's name", sdk.Spec{Name: "read_file", Effect: sdk.EffectRead, InputSchema: objectOf("path")},
			`the host skips tool read_file of plugin mine: a static fs tool; only the fs family's plugin may serve it, not family "mine"`},
		{"a host-native name", sdk.Spec{Name: "agent_exit", Effect: sdk.EffectFlow, InputSchema: objectOf()},
			"the host skips tool agent_exit of plugin mine: a host-native tool; only the host serves it"},
		{"a schema that does not compile", sdk.Spec{Name: "odd", Effect: sdk.EffectNone, InputSchema: json.RawMessage(`{"type": 12}`)},
			"the host skips tool odd of plugin mine: input schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := startFails(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{probe(tt.spec)}})
			if !strings.Contains(got, tt.want) {
				t.Fatalf("Start(%s) failed with %q, want it to say %q", tt.spec.Name, got, tt.want)
			}
		})
	}
	// The family's own plugin serves its static tool.
	if got := startFails(t, sdk.Plugin{Name: "fs", Version: "0", Tools: []sdk.Tool{probe(sdk.Spec{Name: "read_file", Effect: sdk.EffectRead, InputSchema: objectOf("path")})}}); got != "" {
		t.Fatalf("Start(fs serving read_file) failed: %s", got)
	}
}

func readTool() sdk.Tool {
	return probe(sdk.Spec{Name: "peek", Description: "Peek at a file.", Effect: sdk.EffectRead,
		Roles: map[string]sdk.Role{"path": sdk.RolePathRead}, InputSchema: objectOf("path")})
}

// objectOf is the schema of an object of string fields.
func objectOf(fields ...string) json.RawMessage {
	props := map[string]any{}
	for _, f := range fields {
		props[f] = map[string]string{"type": "string"}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

// A read outside the workspace asks: the call fails with the host's
// needs_auth text unless the test's user approves it, and the plugin then
// receives the resolved path with the path approved.
func TestCall_GuardAsks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	ctx := context.Background()

	c := plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{readTool()}}, nil)
	_, err := c.Call(ctx, "peek", sdk.CallInfo{}, pathIn{Path: filepath.Join(outside, "secret")})
	te, ok := sdk.AsToolError(err)
	if !ok || te.Code != sdk.CodeNeedsAuth || !strings.Contains(te.Message, "is outside the workspace") {
		t.Fatalf("peek outside the workspace: got %v, want needs_auth saying it is outside the workspace", err)
	}
	ds := c.Host.Decisions()
	if len(ds) != 1 || ds[0].Action != "ask" || ds[0].Tool != "peek" {
		t.Fatalf("Decisions() = %+v, want one ask on peek", ds)
	}

	var asked []plugintest.Decision
	c = plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{readTool()}},
		&plugintest.Options{Answer: func(d plugintest.Decision) bool { asked = append(asked, d); return true }})
	res, err := c.Call(ctx, "peek", sdk.CallInfo{}, pathIn{Path: filepath.Join(outside, "secret")})
	if err != nil {
		t.Fatalf("peek approved: %v", err)
	}
	want := filepath.Join(resolved(t, outside), "secret")
	if !strings.Contains(res.Text, `"`+want+`"`) || !strings.Contains(string(res.Data.(json.RawMessage)), want) {
		t.Fatalf("peek approved received %s with approved paths %s, want %s in both", res.Text, res.Data, want)
	}
	if len(asked) != 1 || !strings.Contains(asked[0].Reason, "outside the workspace") {
		t.Fatalf("Answer saw %+v, want the one ask", asked)
	}
}

// A relative path reaches the plugin resolved against the workspace:
// one resolution, the host's.
func TestCall_SendsTheResolvedPath(t *testing.T) {
	t.Parallel()
	c := plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{readTool()}}, nil)
	res, err := c.Call(context.Background(), "peek", sdk.CallInfo{}, pathIn{Path: "notes/../a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(resolved(t, c.Workspace), "a.txt")
	if !strings.Contains(res.Text, `"`+want+`"`) {
		t.Fatalf("peek received %s, want the path %s", res.Text, want)
	}
	d, err := c.Check(context.Background(), "peek", sdk.CallInfo{}, pathIn{Path: "a.txt"})
	if err != nil || d.Action != "allow" {
		t.Fatalf("Check(peek a.txt) = %+v, %v; want allow", d, err)
	}
}

// An admin's exec deny refuses the call with the host's text; an unpinned
// plugin's tool asks whatever it declares.
func TestCall_GuardRefusesAndDistrusts(t *testing.T) {
	t.Parallel()
	run := probe(sdk.Spec{Name: "run", Description: "Run a command.", Effect: sdk.EffectExec,
		Roles: map[string]sdk.Role{"command": sdk.RoleCommand}, InputSchema: objectOf("command")})
	deny := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "rm"}}}}
	approve := func(plugintest.Decision) bool { return true }
	c := plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{run}}, &plugintest.Options{Policy: deny, Answer: approve})
	_, err := c.Call(context.Background(), "run", sdk.CallInfo{}, commandIn{Command: "rm -rf build"})
	if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeDenied || !strings.Contains(te.Message, "was refused") {
		t.Fatalf("rm under a deny rule: got %v, want denied", err)
	}
	if ds := c.Host.Decisions(); len(ds) != 1 || ds[0].Action != "deny" {
		t.Fatalf("Decisions() = %+v, want one deny", ds)
	}
	if _, err := c.Call(context.Background(), "run", sdk.CallInfo{}, commandIn{Command: "ls"}); err != nil {
		t.Fatalf("ls: %v", err)
	}

	hello := probe(sdk.Spec{Name: "hi", Effect: sdk.EffectNone, InputSchema: objectOf()})
	c = plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{hello}}, &plugintest.Options{Unpinned: true})
	d, err := c.Check(context.Background(), "hi", sdk.CallInfo{}, map[string]any{})
	if err != nil || d.Action != "ask" || !strings.Contains(d.Reason, "unpinned plugin") {
		t.Fatalf("Check(hi) unpinned = %+v, %v; want an ask naming the unpinned plugin", d, err)
	}
}

func resolved(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A call's input goes through the host's own pipeline before the plugin:
// input the schema rejects fails with the host's invalid_input text and
// never reaches the plugin, input the host repairs arrives repaired, no
// input is {}, and RawInput sends it as given.
func TestCall_InputAsTheHostTakesIt(t *testing.T) {
	t.Parallel()
	ran := 0
	tag := sdk.NewTool(sdk.Spec{Name: "tag", Description: "Tag things.", Effect: sdk.EffectNone,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`)},
		func(_ context.Context, in json.RawMessage) (*sdk.Result, error) {
			ran++
			return &sdk.Result{Text: string(in)}, nil
		})
	ctx := context.Background()
	c := plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{tag}}, nil)

	_, err := c.Call(ctx, "tag", sdk.CallInfo{}, map[string]any{"tgas": []string{"a"}})
	te, ok := sdk.AsToolError(err)
	if !ok || te.Code != sdk.CodeInvalidInput || !strings.Contains(te.Message, "Invalid input for tag:") || !strings.Contains(te.Message, "tgas: unknown field") || ran != 0 {
		t.Fatalf("tag with a misspelt field: got %v (plugin ran %d times), want the host's invalid_input and no run", err, ran)
	}
	res, err := c.Call(ctx, "tag", sdk.CallInfo{}, map[string]any{"tags": "a"})
	if err != nil || res.Text != `{"tags":["a"]}` {
		t.Fatalf("tag with a bare string: got %v, %v; want the host's repair to [\"a\"]", res, err)
	}
	if res, err = c.Call(ctx, "tag", sdk.CallInfo{}, nil); err != nil || res.Text != `{}` {
		t.Fatalf("tag with no input: got %v, %v; want {}", res, err)
	}

	raw := plugintest.Start(t, sdk.Plugin{Name: "mine", Version: "0", Tools: []sdk.Tool{tag}}, &plugintest.Options{RawInput: true})
	if res, err = raw.Call(ctx, "tag", sdk.CallInfo{}, map[string]any{"tags": "a"}); err != nil || res.Text != `{"tags":"a"}` {
		t.Fatalf("RawInput: got %v, %v; want the input as given", res, err)
	}
}
