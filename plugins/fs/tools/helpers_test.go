package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// env is one workspace served by one Service.
type env struct {
	t   testing.TB
	svc *Service
	ws  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, svc: New(), ws: ws}
}

func (e *env) ctx(session string, approved ...string) context.Context {
	return sdk.WithCall(context.Background(), sdk.CallInfo{
		ID: "call", SessionID: session, Workspace: e.ws, ApprovedPaths: approved,
	})
}

// tool returns the tool named name.
func (e *env) tool(name string) sdk.Tool {
	for _, tl := range e.svc.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	e.t.Fatalf("no tool %s", name)
	return nil
}

// call runs a tool by name with input marshalled to JSON.
func (e *env) call(ctx context.Context, tool string, input any) (*sdk.Result, error) {
	e.t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.tool(tool).Call(ctx, raw)
}

// run is call in session "s1" that must succeed.
func (e *env) run(tool string, input any) *sdk.Result {
	e.t.Helper()
	res, err := e.call(e.ctx("s1"), tool, input)
	if err != nil {
		e.t.Fatalf("%s(%v): %v", tool, input, err)
	}
	return res
}

// fail is call in session "s1" that must fail with code.
func (e *env) fail(tool string, input any, code string) *sdk.ToolError {
	e.t.Helper()
	res, err := e.call(e.ctx("s1"), tool, input)
	te, ok := sdk.AsToolError(err)
	if !ok {
		e.t.Fatalf("%s(%v): got result %v, err %v; want ToolError %s", tool, input, res, err, code)
	}
	if te.Code != code {
		e.t.Fatalf("%s(%v): got code %s (%s), want %s", tool, input, te.Code, te.Message, code)
	}
	return te
}

func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func noteDetails(res *sdk.Result, kind string) []string {
	var out []string
	for _, n := range res.Notes {
		if n.Kind == kind {
			out = append(out, n.Detail)
		}
	}
	return out
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s %q lacks %q", what, s, sub)
		}
	}
}

func splitKeep(s string) []string { return strings.SplitAfter(s, "\n") }

func itoa(i int) string { return strconv.Itoa(i) }

func quoteQ(s string) string { return strconv.Quote(s) }
