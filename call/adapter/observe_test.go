package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
)

// recordingObserver keeps what it was told; decideErr fails Decide.
type recordingObserver struct {
	started, decided, finished int
	rec                        CallRecord
	code                       string
	decideErr                  error
}

func (o *recordingObserver) Start(ctx context.Context, _ *CallRecord) context.Context {
	o.started++
	return ctx
}

func (o *recordingObserver) Decide(_ context.Context, rec *CallRecord) error {
	o.decided++
	o.rec = *rec
	return o.decideErr
}

func (o *recordingObserver) Finish(_ context.Context, rec *CallRecord, res *Result) {
	o.finished++
	o.rec, o.code = *rec, res.Code
}

// TestObserver_SeesEveryDecision: each way a call is decided reaches the
// observer once, with its grounds and who answered, before the plugin
// runs; input that does not validate is finished without a decision.
func TestObserver_SeesEveryDecision(t *testing.T) {
	t.Parallel()
	ask := Decision{Action: Ask, Reason: "outside the workspace", Paths: []string{"/etc/x"}}
	for _, tc := range []struct {
		name     string
		d        Decision
		approver *fakeApprover
		raw      string
		decided  bool
		allowed  bool
		basis    string
		by       string
		code     string
	}{
		{name: "allowed inside the workspace", d: Decision{Action: Allow, Basis: BasisWorkspace}, decided: true, allowed: true, basis: BasisWorkspace},
		{name: "allowed, no basis given", d: Decision{Action: Allow}, decided: true, allowed: true, basis: BasisGuard},
		{name: "denied by a rule", d: Decision{Action: Deny, Basis: BasisRule, Rule: "deny rm -rf", Reason: "admin rule"}, decided: true, basis: BasisRule, code: sdk.CodeDenied},
		{name: "asked, nobody to ask", d: ask, decided: true, basis: BasisGuard, by: ByNobody, code: sdk.CodeNeedsAuth},
		{name: "asked, the user approved", d: ask, approver: &fakeApprover{allowed: true}, decided: true, allowed: true, basis: BasisGuard, code: ""},
		{name: "asked, declined", d: ask, approver: &fakeApprover{reason: "no"}, decided: true, basis: BasisGuard, code: sdk.CodeDenied},
		{name: "invalid input", d: Decision{Action: Allow}, raw: `{"input": 3}`, code: sdk.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &recordingObserver{}
			rec := &recorder{}
			a := newTool(t, inputSchema, rec, Options{Observer: o})
			var ap Approver
			if tc.approver != nil {
				ap = tc.approver
			}
			a.AttachGuard(&fakeGuard{d: tc.d}, ap)
			sess := session.New("s")
			sess.SetClient("test-client/1")
			sess.SetAnswerer(silentAnswerer{})
			raw := tc.raw
			if raw == "" {
				raw = `{"input": "x"}`
			}
			res := a.Call(context.Background(), sess, json.RawMessage(raw))
			if res.Code != tc.code {
				t.Fatalf("code %q (%s), want %q", res.Code, res.Text, tc.code)
			}
			if o.started != 1 || o.finished != 1 {
				t.Fatalf("started %d, finished %d; want each once", o.started, o.finished)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.decided]; o.decided != want {
				t.Fatalf("decided %d times, want %d", o.decided, want)
			}
			r := o.rec
			if r.Tool != "probe" || r.Family != "test" || r.SessionID != "s" || r.Client != "test-client/1" || r.ID == "" || r.Started.IsZero() {
				t.Errorf("record lacks the call's identity: %+v", r)
			}
			if !tc.decided {
				return
			}
			if r.Allowed != tc.allowed || r.Basis != tc.basis || r.Rule != tc.d.Rule || r.Action != tc.d.Action {
				t.Errorf("record: allowed %v basis %q rule %q action %v; want %v %q %q %v", r.Allowed, r.Basis, r.Rule, r.Action, tc.allowed, tc.basis, tc.d.Rule, tc.d.Action)
			}
			if r.Args["input"] != "x" {
				t.Errorf("record args %v, want the validated input", r.Args)
			}
			if tc.by != "" && (r.Approval == nil || r.Approval.By != tc.by) {
				t.Errorf("approval %+v, want by %q", r.Approval, tc.by)
			}
		})
	}
}

// TestObserver_UnrecordedCallFailsClosed: when the observer cannot record
// an allowed call, the plugin never runs it and the call fails with
// audit_unavailable, saying why; a refused call stays refused.
func TestObserver_UnrecordedCallFailsClosed(t *testing.T) {
	t.Parallel()
	o := &recordingObserver{decideErr: errors.New("audit log: disk full")}
	rec := &recorder{}
	a := newTool(t, inputSchema, rec, Options{Observer: o})
	a.AttachGuard(&fakeGuard{d: Decision{Action: Allow}}, nil)
	res := a.Call(context.Background(), session.New("s"), json.RawMessage(`{"input": "x"}`))
	if res.Code != sdk.CodeAuditUnavailable || !strings.Contains(res.Text, "disk full") {
		t.Fatalf("got %s %q; want audit_unavailable naming the cause", res.Code, res.Text)
	}
	if rec.calls != 0 {
		t.Fatal("the plugin ran a call the audit trail could not record")
	}
	a.AttachGuard(&fakeGuard{d: Decision{Action: Deny, Reason: "rule"}}, nil)
	if res := a.Call(context.Background(), session.New("s"), json.RawMessage(`{"input": "x"}`)); res.Code != sdk.CodeDenied {
		t.Fatalf("a refused call whose record failed: %s, want denied", res.Code)
	}
}
