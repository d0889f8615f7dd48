package remote

import (
	"context"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// recordingHost remembers the context and request of each approval.
type recordingHost struct {
	sdk.Host // the sdk's own, which ignores reports
	ctxs     []context.Context
	reqs     []sdk.ApprovalRequest
	resp     sdk.ApprovalResponse
}

func (h *recordingHost) RequestApproval(ctx context.Context, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	h.ctxs = append(h.ctxs, ctx)
	h.reqs = append(h.reqs, req)
	return h.resp, nil
}

type callerKey struct{}

// TestHostServer_ApprovalRunsUnderTheCallsContext: the host's callback
// sees what the caller of Call put in its context (the host's session)
// and ends with the call; a call not in flight never reaches the host.
func TestHostServer_ApprovalRunsUnderTheCallsContext(t *testing.T) {
	t.Parallel()
	host := &recordingHost{Host: sdk.HostFrom(t.Context()), resp: sdk.ApprovalResponse{Reason: "nobody", Unanswered: true}}
	r := newClient(t.Context(), nil, nil, host, sdk.ProtocolVersion)
	callCtx, endCall := context.WithCancel(context.WithValue(t.Context(), callerKey{}, "session-7"))
	info := sdk.CallInfo{ID: "c-1", Tool: "write_stdin", SessionID: "s-1"}
	call := &inflight{ctx: callCtx, info: info, host: host}
	if err := r.register(call); err != nil {
		t.Fatal(err)
	}
	hs := &hostServer{r: r}

	resp, err := hs.RequestApproval(t.Context(), &pluginpb.ApprovalRequest{
		CallId: "c-1", Kind: sdk.ApprovalStdin, TaskId: "sh-1", Program: "/usr/bin/python3", Shell: false, Input: "print(1)", Dir: "/ws", Unseen: true,
	})
	if err != nil || resp.GetApproved() || !resp.GetUnanswered() || resp.GetReason() != "nobody" {
		t.Fatalf("RequestApproval = %+v, %v; want the host's answer, unanswered", resp, err)
	}
	if len(host.ctxs) != 1 {
		t.Fatalf("host asked %d times, want 1", len(host.ctxs))
	}
	got := host.ctxs[0]
	if v, _ := got.Value(callerKey{}).(string); v != "session-7" {
		t.Errorf("callback context lacks the call's values: got %q, want session-7", v)
	}
	if ci := sdk.CallFrom(got); ci.ID != "c-1" || ci.Tool != "write_stdin" {
		t.Errorf("callback CallInfo = %+v, want the call's", ci)
	}
	want := sdk.ApprovalRequest{Kind: sdk.ApprovalStdin, TaskID: "sh-1", Program: "/usr/bin/python3", Input: "print(1)", Dir: "/ws", Unseen: true}
	if g := host.reqs[0]; g.Kind != want.Kind || g.TaskID != want.TaskID || g.Program != want.Program || g.Shell || g.Input != want.Input || g.Dir != want.Dir || !g.Unseen {
		t.Errorf("request = %+v, want %+v", g, want)
	}
	endCall()
	if got.Err() == nil {
		t.Error("the callback's context outlives its call")
	}

	r.unregister(call)
	resp, err = hs.RequestApproval(t.Context(), &pluginpb.ApprovalRequest{CallId: "c-1", SessionId: "s-1", Reason: "late"})
	if err != nil || resp.GetApproved() || !resp.GetUnanswered() || !strings.Contains(resp.GetReason(), "not in flight") {
		t.Fatalf("request for a finished call = %+v, %v; want unanswered, not in flight", resp, err)
	}
	if len(host.ctxs) != 1 {
		t.Errorf("a request for a call not in flight reached the host")
	}
}
