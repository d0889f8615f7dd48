package audit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/call/adapter"
)

// TestRoundTrip_ReaderReadsWhatTheObserverWrites: the reader decodes the
// writer's lines field for field, so `yagent audit` and the host agree on
// the format.
func TestRoundTrip_ReaderReadsWhatTheObserverWrites(t *testing.T) {
	dir := t.TempDir()
	o := New(Options{Writer: NewWriter(WriterOptions{Dir: dir})})
	ctx := context.Background()
	rec := &adapter.CallRecord{ID: "c1", SessionID: "s1", Client: "client/1", Tool: "run_bash", Family: "shell", Effect: "exec",
		Trusted: true, Args: map[string]any{"command": "mysql -pSECRET db"}, Started: time.Now(),
		Decided: true, Action: adapter.Ask, Basis: adapter.BasisRule, Rule: "ask mysql", Reason: "mysql asks",
		Approval: &adapter.Approval{Allowed: true, By: adapter.ByUser, Reason: "fine"}, Allowed: true}
	if err := o.Decide(ctx, rec); err != nil {
		t.Fatal(err)
	}
	o.Finish(ctx, rec, &adapter.Result{Code: "timeout", Text: "12345"})
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	var got []*Line
	if err := (&Reader{Dir: dir}).Read(ctx, func(l *Line) error { got = append(got, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d lines, want the decision and the call", len(got))
	}
	d, c := got[0], got[1]
	if d.Kind != "decision" || d.Call != "c1" || d.Session != "s1" || d.Client != "client/1" || d.Tool != "run_bash" ||
		d.Family != "shell" || d.Effect != "exec" || !d.Trusted || d.Decision != "ask" || d.Basis != "rule" ||
		d.Rule != "ask mysql" || d.Answer == nil || !d.Answer.Approved || d.Answer.By != "user" || d.Allowed == nil || !*d.Allowed {
		t.Errorf("decision line read back as %+v (answer %+v)", d, d.Answer)
	}
	if cmd := string(d.Args["command"]); cmd == "" || strings.Contains(cmd, "SECRET") {
		t.Errorf("command read back as %s: want it there, redacted", cmd)
	}
	if c.Kind != "call" || c.Code != "timeout" || c.Bytes != 5 || c.DurationMS <= 0 || c.Time.Before(d.Time) {
		t.Errorf("call line read back as %+v", c)
	}
}
