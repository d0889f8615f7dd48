package sdk

import (
	"testing"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

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

// TestSandboxFromWire_NetworkOfTheFirstProtocol: a host that sets only the
// boolean network is read as on or off, never as the empty string (on) for
// a sandbox that wanted the network cut.
func TestSandboxFromWire_NetworkOfTheFirstProtocol(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		w    *pluginpb.Sandbox
		want string
	}{
		{&pluginpb.Sandbox{Mode: SandboxOn}, NetworkOff},
		{&pluginpb.Sandbox{Mode: SandboxOn, Network: true}, NetworkOn},
		{&pluginpb.Sandbox{Mode: SandboxOn, NetworkMode: NetworkProxy}, NetworkProxy},
	} {
		if got := sandboxFromWire(c.w).Network; got != c.want {
			t.Errorf("sandboxFromWire(%v).Network = %q, want %q", c.w, got, c.want)
		}
	}
}
