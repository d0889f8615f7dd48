package sdk

import "testing"

// TestApprovalToWire_NamesTheCall: a plugin's approval request names the
// call, its session and its tool, which the host finds the call by. The
// round trips of both directions run in internal/remote's tests.
func TestApprovalToWire_NamesTheCall(t *testing.T) {
	t.Parallel()
	w := approvalToWire(CallInfo{ID: "c1", SessionID: "s1", Tool: "run_bash"}, ApprovalRequest{Reason: "r"})
	if w.GetCallId() != "c1" || w.GetSessionId() != "s1" || w.GetTool() != "run_bash" || w.GetReason() != "r" {
		t.Errorf("approvalToWire: call %q session %q tool %q reason %q, want the call's and the request's", w.GetCallId(), w.GetSessionId(), w.GetTool(), w.GetReason())
	}
}
