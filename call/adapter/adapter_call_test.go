package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// recorder is an executor that keeps what it was given.
type recorder struct {
	mu    sync.Mutex
	calls int
	input json.RawMessage
	info  sdk.CallInfo
	ret   func(ctx context.Context, in json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error)
}

func (r *recorder) Execute(ctx context.Context, info sdk.CallInfo, in json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
	r.mu.Lock()
	r.calls++
	r.input = append(json.RawMessage(nil), in...)
	r.info = info
	r.mu.Unlock()
	if r.ret != nil {
		return r.ret(ctx, in, progress)
	}
	return &sdk.Result{Text: "ok"}, nil
}

func (r *recorder) args(t *testing.T) map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == 0 {
		t.Fatal("the executor was not called")
	}
	var m map[string]any
	if err := json.Unmarshal(r.input, &m); err != nil {
		t.Fatalf("executor input %q is not a JSON object: %v", r.input, err)
	}
	return m
}

const inputSchema = `{"type":"object","properties":{"input":{"type":"string"}},"additionalProperties":false}`

func newTool(t *testing.T, schema string, exec Executor, opts Options) *Adapter {
	t.Helper()
	a := New(sdk.Spec{Name: "probe", Description: "A probe.", InputSchema: json.RawMessage(schema), Effect: sdk.EffectNone}, "test", toolspec.Warm, exec, opts)
	if err := a.SchemaError(); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return a
}

func hasRepair(r *Result, kind string) bool {
	for _, rp := range r.Repairs {
		if rp.Kind == kind {
			return true
		}
	}
	return false
}

func TestAdapterCall_UnusableInputFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, raw string }{
		{"half JSON", `{"input": "ls -la`},
		{"literal null", `null`},
		{"empty string", ``},
		{"whitespace", " \n\t"},
		{"trailing garbage", `{"input":"a"} x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			a := newTool(t, inputSchema, rec, Options{Logger: slog.New(slog.DiscardHandler)})
			res := a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
			if res.IsError() {
				t.Fatalf("Call(%q) = %s %q; unusable input must not error", tc.raw, res.Code, res.Text)
			}
			if got := rec.args(t); len(got) != 1 || got["input"] != tc.raw {
				t.Fatalf("executor got %v, want {\"input\": %q}", got, tc.raw)
			}
			if !hasRepair(res, RepairUnusableInput) {
				t.Fatalf("repairs %v lack %s", res.Repairs, RepairUnusableInput)
			}
		})
	}
}

func TestAdapterCall_ValidObjectNotSwallowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema, raw string
		want              map[string]any
	}{
		{"input tool", inputSchema, `{"input":"echo hi"}`, map[string]any{"input": "echo hi"}},
		{"path tool", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}}}`,
			` {"path":"a.go","limit":3} `, map[string]any{"path": "a.go", "limit": float64(3)}},
		{"empty object", `{"type":"object","properties":{"path":{"type":"string"}}}`, `{}`, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			a := newTool(t, tc.schema, rec, Options{Logger: slog.New(slog.DiscardHandler)})
			res := a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
			if res.IsError() || len(res.Repairs) != 0 {
				t.Fatalf("Call(%s) = %+v; want success with no repairs", tc.raw, res)
			}
			got := rec.args(t)
			if len(got) != len(tc.want) {
				t.Fatalf("executor got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("executor got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// captureHandler keeps every slog record.
type captureHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

func TestAdapterCall_UnusableInputWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, reason string }{
		{`null`, "literal null"},
		{``, "empty input"},
		{`{"input":`, "invalid JSON"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			h := &captureHandler{}
			a := newTool(t, inputSchema, &recorder{}, Options{Logger: slog.New(h)})
			a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
			var warns []slog.Record
			for _, r := range h.records {
				if r.Level == slog.LevelWarn {
					warns = append(warns, r)
				}
			}
			if len(warns) != 1 {
				t.Fatalf("got %d warnings, want 1", len(warns))
			}
			attrs := map[string]slog.Value{}
			warns[0].Attrs(func(at slog.Attr) bool { attrs[at.Key] = at.Value; return true })
			if v := attrs["tool"]; v.String() != "probe" {
				t.Errorf("tool = %q, want probe", v)
			}
			if v := attrs["reason"]; !strings.Contains(v.String(), tc.reason) {
				t.Errorf("reason = %q, want it to contain %q", v, tc.reason)
			}
			if v := attrs["raw_len"]; v.Kind() != slog.KindInt64 || v.Int64() != int64(len(tc.raw)) {
				t.Errorf("raw_len = %v, want %d", v, len(tc.raw))
			}
			if v := attrs["raw_prefix"]; v.String() != tc.raw {
				t.Errorf("raw_prefix = %q, want %q", v, tc.raw)
			}
		})
	}
}

func TestAdapterCall_UnusableInputForAToolWithoutInputField(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	a := newTool(t, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, rec, Options{Logger: slog.New(slog.DiscardHandler)})
	res := a.Call(t.Context(), session.New("s"), json.RawMessage(`null`))
	if res.Code != sdk.CodeInvalidInput || rec.calls != 0 {
		t.Fatalf("Call(null) = %s, executor calls %d; want invalid_input and no call", res.Code, rec.calls)
	}
	for _, want := range []string{"not a usable JSON object (literal null)", "input: unknown field", "path: missing", "Valid fields: path (string, required)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, res.Text)
		}
	}
}

const editSchema = `{"type":"object","properties":{
	"path":{"type":"string"},
	"paths":{"type":"array","items":{"type":"string"}},
	"lines":{"type":"array","items":{"type":"integer"}},
	"replace_all":{"type":"boolean"},
	"limit":{"type":"integer"},
	"ratio":{"type":"number"},
	"note":{"type":"string"},
	"edits":{"type":"array","items":{"type":"object","properties":{
		"old_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["old_string"],"additionalProperties":false}}
},"required":["path"],"additionalProperties":false}`

func TestAdapterCall_Repairs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw, kind, field string
		check                  func(map[string]any) bool
	}{
		{"stringified array", `{"path":"a","paths":"[\"x\",\"y\"]"}`, RepairStringifiedArray, "paths",
			func(m map[string]any) bool { p, _ := m["paths"].([]any); return len(p) == 2 && p[1] == "y" }},
		{"stringified array of numbers", `{"path":"a","lines":"[1, 2]"}`, RepairStringifiedArray, "lines",
			func(m map[string]any) bool { p, _ := m["lines"].([]any); return len(p) == 2 && p[0] == float64(1) }},
		{"bare string to array", `{"path":"a","paths":"x"}`, RepairBareStringToArray, "paths",
			func(m map[string]any) bool { p, _ := m["paths"].([]any); return len(p) == 1 && p[0] == "x" }},
		{"null optional", `{"path":"a","limit":null}`, RepairNullOptionalOmitted, "limit",
			func(m map[string]any) bool { _, ok := m["limit"]; return !ok }},
		{"boolean string", `{"path":"a","replace_all":"True"}`, RepairSemanticBooleanString, "replace_all",
			func(m map[string]any) bool { return m["replace_all"] == true }},
		{"integer string", `{"path":"a","limit":" 42"}`, RepairSemanticBooleanString, "limit",
			func(m map[string]any) bool { return m["limit"] == float64(42) }},
		{"number string", `{"path":"a","ratio":"0.5"}`, RepairSemanticBooleanString, "ratio",
			func(m map[string]any) bool { return m["ratio"] == 0.5 }},
		{"nested boolean string", `{"path":"a","edits":[{"old_string":"x","replace_all":"false"}]}`, RepairSemanticBooleanString, "edits[0].replace_all",
			func(m map[string]any) bool {
				e := m["edits"].([]any)[0].(map[string]any)
				return e["replace_all"] == false
			}},
		{"markdown autolink path", `{"path":"docs/[README.md](http://README.md)"}`, RepairMarkdownAutolinkPath, "path",
			func(m map[string]any) bool { return m["path"] == "docs/README.md" }},
		{"description dropped", `{"path":"a","description":"reads a"}`, RepairDescriptionDropped, "description",
			func(m map[string]any) bool { _, ok := m["description"]; return !ok }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			a := newTool(t, editSchema, rec, Options{})
			res := a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
			if res.IsError() {
				t.Fatalf("Call(%s) = %s:\n%s", tc.raw, res.Code, res.Text)
			}
			if len(res.Repairs) != 1 || res.Repairs[0].Kind != tc.kind || res.Repairs[0].Field != tc.field {
				t.Fatalf("repairs = %+v, want one %s on %s", res.Repairs, tc.kind, tc.field)
			}
			if got := rec.args(t); !tc.check(got) {
				t.Fatalf("executor got %v, not repaired", got)
			}
		})
	}
}

func TestAdapterCall_RepairsLeaveAloneWhatTheSchemaAccepts(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"path":"a","note":"true"}`,                 // a string field keeps "true"
		`{"path":"[a](http://b)"}`,                   // link text differs from its target: not an autolink
		`{"path":"a","note":"[1]"}`,                  // a string field keeps "[1]"
		`{"path":"a","paths":["[x](http://y)"]}`,     // not an autolink either
		`{"path":"a","edits":[{"old_string":"42"}]}`, // a nested string keeps its digits
	} {
		rec := &recorder{}
		a := newTool(t, editSchema, rec, Options{})
		res := a.Call(t.Context(), session.New("s"), json.RawMessage(raw))
		if res.IsError() || len(res.Repairs) != 0 {
			t.Errorf("Call(%s) = %s %+v; want success without repairs", raw, res.Code, res.Repairs)
			continue
		}
		if string(rec.input) != raw {
			t.Errorf("Call(%s): executor got %s; an unrepaired input must pass verbatim", raw, rec.input)
		}
	}
}

func TestAdapterCall_RepairGivesUpWhenStillInvalid(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	a := newTool(t, editSchema, rec, Options{})
	// replace_all is repairable, limit is not: the call fails as sent.
	res := a.Call(t.Context(), session.New("s"), json.RawMessage(`{"path":"a","replace_all":"true","limit":"many"}`))
	if res.Code != sdk.CodeInvalidInput || rec.calls != 0 {
		t.Fatalf("Call = %s, executor calls %d; want invalid_input and no call", res.Code, rec.calls)
	}
	if len(res.Repairs) != 0 {
		t.Fatalf("repairs = %+v; giving up must not report repairs it did not keep", res.Repairs)
	}
	for _, want := range []string{"limit: must be an integer, got string", "replace_all: must be a boolean, got string"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("message lacks %q (it must speak of the input as sent):\n%s", want, res.Text)
		}
	}
}

func TestAdapterCall_UnknownFieldListsValidOnes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema, raw string }{
		{"declared additionalProperties false", editSchema, `{"path":"a","file_path":"b"}`},
		{"schema silent on other fields", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`, `{"path":"a","file_path":"b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			a := newTool(t, tc.schema, rec, Options{})
			res := a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
			if res.Code != sdk.CodeInvalidInput || rec.calls != 0 {
				t.Fatalf("Call = %s; want invalid_input", res.Code)
			}
			for _, want := range []string{"file_path: unknown field (did you mean path? file_path is another tool's name for it)", "Valid fields: ", "path (string, required)", "limit (integer)"} {
				if !strings.Contains(res.Text, want) {
					t.Errorf("message lacks %q:\n%s", want, res.Text)
				}
			}
		})
	}
	t.Run("nested", func(t *testing.T) {
		t.Parallel()
		a := newTool(t, editSchema, &recorder{}, Options{})
		res := a.Call(t.Context(), session.New("s"), json.RawMessage(`{"path":"a","edits":[{"old_string":"x","new":"y"}]}`))
		if want := "edits[0].new: unknown field; valid here: old_string, replace_all"; !strings.Contains(res.Text, want) {
			t.Fatalf("message lacks %q:\n%s", want, res.Text)
		}
	})
}

func TestAdapterCall_ValidationMessagesNameTheField(t *testing.T) {
	t.Parallel()
	a := newTool(t, `{"type":"object","properties":{"summary":{"type":"string"},"mode":{"enum":["a","b"]}},"required":["summary"]}`, &recorder{}, Options{})
	for _, tc := range []struct{ raw, want string }{
		{`{}`, "- summary: missing"},
		{`{"summary":42}`, "- summary: must be a string, got float64"},
		{`{"summary":true}`, "- summary: must be a string, got bool"},
		{`{"summary":"x","mode":"c"}`, "- mode: "},
	} {
		res := a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
		if res.Code != sdk.CodeInvalidInput || !strings.Contains(res.Text, tc.want) {
			t.Errorf("Call(%s) = %s %q; want invalid_input containing %q", tc.raw, res.Code, res.Text, tc.want)
		}
	}
}

type fakeGuard struct {
	d   Decision
	got *GuardRequest
}

func (g *fakeGuard) Check(_ context.Context, req GuardRequest) Decision {
	g.got = &req
	return g.d
}

type fakeApprover struct {
	allowed    bool
	reason     string
	paths      []string
	unanswered bool
	asked      int
}

func (f *fakeApprover) Authorize(context.Context, *session.Session, sdk.Spec, Decision) Approval {
	f.asked++
	return Approval{Allowed: f.allowed, Reason: f.reason, Paths: f.paths, Unanswered: f.unanswered}
}

type silentAnswerer struct{}

func (silentAnswerer) Approve(context.Context, session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	return session.ApprovalAnswer{}, nil
}
func (silentAnswerer) Help(context.Context, string) (string, error) { return "", nil }

func TestAdapterCall_GuardAndAuthorization(t *testing.T) {
	t.Parallel()
	ask := Decision{Action: Ask, Reason: "path /etc/x is outside the workspace", Paths: []string{"/etc/x"}, Hint: "add /etc to read_paths in the profile"}
	for _, tc := range []struct {
		name     string
		d        Decision
		approver *fakeApprover
		answerer bool
		code     string
		texts    []string
		runs     bool
	}{
		{name: "allow", d: Decision{Action: Allow}, runs: true},
		{name: "deny", d: Decision{Action: Deny, Reason: "admin rule"}, code: sdk.CodeDenied, texts: []string{"admin rule"}},
		{name: "ask without approver", d: ask, code: sdk.CodeNeedsAuth, texts: []string{"-y", "read_paths", "outside the workspace"}},
		{name: "ask, nobody to answer", d: ask, approver: &fakeApprover{}, code: sdk.CodeNeedsAuth, texts: []string{"-y"}},
		{name: "ask, user declines", d: ask, approver: &fakeApprover{reason: "not that file"}, answerer: true, code: sdk.CodeDenied, texts: []string{"declined", "not that file"}},
		{name: "ask, user approves", d: ask, approver: &fakeApprover{allowed: true, paths: []string{"/etc/x"}}, answerer: true, runs: true},
		{name: "ask, nobody answered", d: ask, approver: &fakeApprover{reason: "timed out", unanswered: true}, answerer: true, code: sdk.CodeNeedsAuth, texts: []string{"-y", "timed out"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			a := newTool(t, editSchema, rec, Options{Workspace: "/ws", Trusted: true})
			g := &fakeGuard{d: tc.d}
			if tc.approver != nil {
				a.AttachGuard(g, tc.approver)
			} else {
				a.AttachGuard(g, nil)
			}
			sess := session.New("s")
			if tc.answerer {
				sess.SetAnswerer(silentAnswerer{})
			}
			res := a.Call(t.Context(), sess, json.RawMessage(`{"path":"a","replace_all":"true"}`))
			if g.got == nil || g.got.Args["replace_all"] != true || g.got.Workspace != "/ws" || !g.got.Trusted || g.got.Session != sess {
				t.Fatalf("guard got %+v; want the repaired, validated args, the workspace, the session and Trusted", g.got)
			}
			if res.Code != tc.code {
				t.Fatalf("code = %q, want %q (%s)", res.Code, tc.code, res.Text)
			}
			for _, want := range tc.texts {
				if !strings.Contains(res.Text, want) {
					t.Errorf("text lacks %q: %s", want, res.Text)
				}
			}
			if (rec.calls > 0) != tc.runs {
				t.Fatalf("executor calls = %d, want runs=%v", rec.calls, tc.runs)
			}
			if tc.approver != nil && tc.approver.allowed && (len(rec.info.ApprovedPaths) != 1 || rec.info.ApprovedPaths[0] != "/etc/x") {
				t.Fatalf("CallInfo.ApprovedPaths = %v, want [/etc/x]", rec.info.ApprovedPaths)
			}
			if !hasRepair(res, RepairSemanticBooleanString) {
				t.Errorf("repairs %v lost on the way", res.Repairs)
			}
		})
	}
}

func TestAdapterCall_GuardNotAskedForInvalidInput(t *testing.T) {
	t.Parallel()
	g := &fakeGuard{d: Decision{Action: Allow}}
	a := newTool(t, editSchema, &recorder{}, Options{})
	a.AttachGuard(g, nil)
	if res := a.Call(t.Context(), session.New("s"), json.RawMessage(`{"limit":1}`)); res.Code != sdk.CodeInvalidInput || g.got != nil {
		t.Fatalf("code %s, guard asked %v; validation comes before the guard", res.Code, g.got != nil)
	}
}

type unmarshalable struct{ C chan int }

func TestAdapterCall_Envelope(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("h", 600) + strings.Repeat("m", 2000) + strings.Repeat("t", 600)
	for _, tc := range []struct {
		name  string
		ret   func(context.Context) (*sdk.Result, error)
		check func(t *testing.T, r *Result)
	}{
		{name: "data marshalled", ret: func(context.Context) (*sdk.Result, error) {
			return &sdk.Result{Data: map[string]int{"n": 1}}, nil
		}, check: func(t *testing.T, r *Result) {
			if r.IsError() || string(r.Data) != `{"n":1}` || r.Text != `{"n":1}` {
				t.Fatalf("got %+v; want data {\"n\":1} and it as text", r)
			}
		}},
		{name: "unserializable data is an error", ret: func(context.Context) (*sdk.Result, error) {
			return &sdk.Result{Text: "fine", Data: unmarshalable{C: make(chan int)}}, nil
		}, check: func(t *testing.T, r *Result) {
			if r.Code != sdk.CodeResultUnencoding || r.Text == "" {
				t.Fatalf("got %+v; want %s with a message", r, sdk.CodeResultUnencoding)
			}
		}},
		{name: "tool error code carried", ret: func(context.Context) (*sdk.Result, error) {
			return nil, &sdk.ToolError{Code: sdk.CodeSearchNotUnique, Message: "3 matches", Data: map[string]int{"matches": 3}}
		}, check: func(t *testing.T, r *Result) {
			if r.Code != sdk.CodeSearchNotUnique || r.Text != "3 matches" || string(r.Data) != `{"matches":3}` {
				t.Fatalf("got %+v", r)
			}
		}},
		{name: "plain error", ret: func(context.Context) (*sdk.Result, error) { return nil, errors.New("disk on fire") }, check: func(t *testing.T, r *Result) {
			if r.Code != sdk.CodeToolFailed || !strings.Contains(r.Text, "disk on fire") {
				t.Fatalf("got %+v", r)
			}
		}},
		{name: "cancelled",
			ret: func(ctx context.Context) (*sdk.Result, error) { return nil, ctx.Err() }, check: func(t *testing.T, r *Result) {
				if r.Code != sdk.CodeCancelled {
					t.Fatalf("got %+v, want cancelled", r)
				}
			}},
		{name: "executor deadline", ret: func(context.Context) (*sdk.Result, error) {
			return nil, context.DeadlineExceeded
		}, check: func(t *testing.T, r *Result) {
			if r.Code != sdk.CodeTimeout {
				t.Fatalf("got %+v, want timeout", r)
			}
		}},
		{name: "notes become repairs", ret: func(context.Context) (*sdk.Result, error) {
			return &sdk.Result{Text: "done", Notes: []sdk.Note{{Kind: "line_endings", Detail: "crlf-applied"}}}, nil
		}, check: func(t *testing.T, r *Result) {
			if len(r.Repairs) != 1 || r.Repairs[0] != (Repair{Kind: "line_endings", Detail: "crlf-applied"}) {
				t.Fatalf("repairs = %+v", r.Repairs)
			}
		}},
		{name: "text capped keeping head and tail", ret: func(context.Context) (*sdk.Result, error) {
			return &sdk.Result{Text: long}, nil
		}, check: func(t *testing.T, r *Result) {
			if !r.Truncated || len(r.Text) > 1024 || !strings.HasPrefix(r.Text, "hhhh") || !strings.HasSuffix(r.Text, "tttt") {
				t.Fatalf("truncated=%v len=%d text=%q", r.Truncated, len(r.Text), r.Text)
			}
			if !strings.Contains(r.Text, "bytes cut") {
				t.Fatalf("the cut is not said: %q", r.Text)
			}
		}},
		{name: "panic", ret: func(context.Context) (*sdk.Result, error) { panic("boom") }, check: func(t *testing.T, r *Result) {
			if r.Code != sdk.CodeToolFailed || !strings.Contains(r.Text, "boom") {
				t.Fatalf("got %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			var cancelNow context.CancelFunc // the cancel case cancels while the tool runs
			if tc.name == "cancelled" {
				ctx, cancelNow = context.WithCancel(ctx)
				defer cancelNow()
			}
			rec := &recorder{ret: func(ctx context.Context, _ json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
				if cancelNow != nil {
					cancelNow()
				}
				return tc.ret(ctx)
			}}
			a := newTool(t, inputSchema, rec, Options{MaxTextBytes: 1024, Logger: slog.New(slog.DiscardHandler)})
			res := a.Call(ctx, session.New("s"), json.RawMessage(`{"input":"x"}`))
			tc.check(t, res)
			if _, err := json.Marshal(res); err != nil {
				t.Fatalf("envelope does not marshal: %v", err)
			}
		})
	}
}

func TestCapText(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", 5000) // two bytes a rune
	got, cut := capText(s, 1000)
	if !cut || len(got) > 1000 {
		t.Fatalf("capText: cut=%v len=%d, want cut and <= 1000", cut, len(got))
	}
	if !strings.Contains(got, "bytes cut") || !json.Valid([]byte(`"`+strings.ReplaceAll(got, "\n", `\n`)+`"`)) {
		t.Fatalf("capText output malformed: %q", got)
	}
	if same, cut := capText("short", 1000); cut || same != "short" {
		t.Fatalf("capText(short) = %q, %v", same, cut)
	}
}

func TestAdapterCall_PublishesEventsAndProgress(t *testing.T) {
	t.Parallel()
	d := bus.New()
	sub := d.Subscribe(16)
	defer sub.Close()
	rec := &recorder{ret: func(_ context.Context, _ json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
		progress(sdk.Progress{Message: "half", Progress: 1, Total: 2})
		return &sdk.Result{Text: "ok"}, nil
	}}
	a := newTool(t, inputSchema, rec, Options{Bus: d})
	var tapped []sdk.Progress
	defer d.Tap(func(ev bus.Event) {
		if p, ok := ev.Payload.(sdk.Progress); ok && ev.CallID == "front-id" {
			tapped = append(tapped, p)
		}
	})()
	sess := session.New("sess-1")
	res := a.Call(WithCallID(t.Context(), "front-id"), sess, json.RawMessage(`{"input":"x"}`))
	if len(tapped) != 1 || tapped[0].Message != "half" {
		t.Fatalf("the bus tap got %v under the front's call id, want the one progress", tapped)
	}
	var types []string
	for range 3 {
		ev := <-sub.Events()
		if ev.SessionID != "sess-1" || ev.Tool != "probe" || ev.CallID != rec.info.ID {
			t.Fatalf("event %+v lacks session, tool or the call id %q", ev, rec.info.ID)
		}
		types = append(types, ev.Type)
		if ev.Type == bus.ToolFinished && ev.Payload != res {
			t.Fatalf("finished payload = %v, want the result", ev.Payload)
		}
	}
	if strings.Join(types, ",") != "tool_started,tool_progress,tool_finished" {
		t.Fatalf("events = %v", types)
	}
	if rec.info.SessionID != "sess-1" || rec.info.Tool != "probe" || rec.info.ID != "front-id" {
		t.Fatalf("CallInfo = %+v", rec.info)
	}
	a.Call(t.Context(), sess, json.RawMessage(`{"input":"x"}`))
	if len(rec.info.ID) != 36 {
		t.Fatalf("a call without an id from its front got id %q, want a fresh UUID", rec.info.ID)
	}
}

func TestAdapterCall_ExecutorSeesTheSession(t *testing.T) {
	t.Parallel()
	sess := session.New("s")
	var seen *session.Session
	rec := &recorder{ret: func(ctx context.Context, _ json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		seen = session.FromContext(ctx)
		return &sdk.Result{}, nil
	}}
	res := newTool(t, inputSchema, rec, Options{}).Call(t.Context(), sess, json.RawMessage(`{}`))
	if seen != sess || res.Text != "(no output)" {
		t.Fatalf("executor saw session %p (want %p); text %q", seen, sess, res.Text)
	}
}

func TestNew_BadSchemaFailsCalls(t *testing.T) {
	t.Parallel()
	a := New(sdk.Spec{Name: "bad", InputSchema: json.RawMessage(`{"type":`)}, "x", toolspec.Cold, &recorder{}, Options{})
	if a.SchemaError() == nil {
		t.Fatal("SchemaError() = nil for a broken schema")
	}
	if res := a.Call(t.Context(), nil, json.RawMessage(`{}`)); res.Code != sdk.CodeToolFailed {
		t.Fatalf("Call = %+v, want tool_failed", res)
	}
}
