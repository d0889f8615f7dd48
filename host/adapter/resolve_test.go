package adapter

import (
	"encoding/json"
	"testing"

	"github.com/yagent/yagent/host/session"
)

// TestAdapterCall_SendsResolvedArgs: the plugin receives the arguments as
// the guard resolved them, on allow and on an approved ask, and the model
// is told of no repair.
func TestAdapterCall_SendsResolvedArgs(t *testing.T) {
	t.Parallel()
	resolved := map[string]any{"path": "/ws/ a.txt", "replace_all": true}
	for _, tc := range []struct {
		name     string
		d        Decision
		approver *fakeApprover
	}{
		{"allow", Decision{Action: Allow, Args: resolved}, nil},
		{"approved ask", Decision{Action: Ask, Reason: "r", Args: resolved}, &fakeApprover{allowed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			a := newTool(t, editSchema, rec, Options{Workspace: "/ws", Trusted: true})
			if tc.approver != nil {
				a.AttachGuard(&fakeGuard{d: tc.d}, tc.approver)
			} else {
				a.AttachGuard(&fakeGuard{d: tc.d}, nil)
			}
			sess := session.New("s")
			sess.SetAnswerer(silentAnswerer{})
			res := a.Call(t.Context(), sess, json.RawMessage(`{"path":" a.txt","replace_all":true}`))
			if res.Code != "" {
				t.Fatalf("Call: %s %s", res.Code, res.Text)
			}
			if got := rec.args(t)["path"]; got != "/ws/ a.txt" {
				t.Errorf("plugin got path %q, want the resolved %q", got, "/ws/ a.txt")
			}
			if len(res.Repairs) != 0 {
				t.Errorf("Repairs = %v, want none: resolving is not the model's mistake", res.Repairs)
			}
		})
	}
}
