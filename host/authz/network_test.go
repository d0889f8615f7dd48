package authz

import (
	"testing"

	"github.com/yagent/yagent/call/session"
)

// TestApprover_NetworkPassIsPerHost: "session" to a question about one
// host passes that host for the session, not another host, nor a tool.
func TestApprover_NetworkPassIsPerHost(t *testing.T) {
	t.Parallel()
	ap := NewApprover(ApproverOptions{})
	s := session.New("s")
	tty := &countingAnswerer{ans: session.ApprovalAnswer{Approved: true, Scope: session.ScopeSession}}
	s.SetAnswerer(tty)
	for _, host := range []string{"a.example", "a.example", "b.example"} {
		if r := ap.Network(t.Context(), s, host, "unlisted"); !r.Allowed {
			t.Fatalf("%s not approved: %+v", host, r)
		}
	}
	if tty.n() != 2 {
		t.Errorf("asked %d times for a.example twice and b.example once, want 2", tty.n())
	}
	if s.Granted("run_bash") || s.Granted("web_fetch") {
		t.Error("a host's session pass passes a tool")
	}
}
