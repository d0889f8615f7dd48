package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/host/session"
	"github.com/yagent/yagent/sdk"
)

// PluginHost answers the approval requests plugins make while a call runs
// (sdk.Host.RequestApproval), through the same passes and loop as the
// guard's asks. It implements pluginmgr.HostServices. The calls it can
// answer for are those run through an executor it wraps with Track, which
// is how it finds the call's session. Safe for concurrent use.
type PluginHost struct {
	a *Approver

	mu    sync.Mutex
	calls map[string]*session.Session // in flight, by call id
}

// NewPluginHost returns a PluginHost asking through a.
func NewPluginHost(a *Approver) *PluginHost {
	return &PluginHost{a: a, calls: map[string]*session.Session{}}
}

// Track wraps exec so that the session of each call it runs is known to
// the PluginHost while the call is in flight.
func (h *PluginHost) Track(exec adapter.Executor) adapter.Executor {
	return adapter.ExecutorFunc(func(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
		if sess := session.FromContext(ctx); sess != nil && info.ID != "" {
			h.mu.Lock()
			h.calls[info.ID] = sess
			h.mu.Unlock()
			defer func() {
				h.mu.Lock()
				delete(h.calls, info.ID)
				h.mu.Unlock()
			}()
		}
		return exec.Execute(ctx, info, input, progress)
	})
}

// RequestApproval asks the user of the call's session. A call the host
// does not know (finished, or not tracked) is refused with the reason.
func (h *PluginHost) RequestApproval(ctx context.Context, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	h.mu.Lock()
	sess := h.calls[call.ID]
	h.mu.Unlock()
	if sess == nil {
		return sdk.ApprovalResponse{Reason: fmt.Sprintf("call %q of plugin %s is not in flight, so nobody can be asked", call.ID, plugin)}, nil
	}
	tool := call.Tool
	if tool == "" {
		tool = plugin
	}
	r := h.a.ask(ctx, sess, session.ApprovalPrompt{Tool: tool, Reason: req.Reason, Paths: req.Paths, Command: req.Command})
	if !r.Allowed && r.Reason == "" {
		r.Reason = "the user declined"
	}
	return sdk.ApprovalResponse{Approved: r.Allowed, Reason: r.Reason}, nil
}
