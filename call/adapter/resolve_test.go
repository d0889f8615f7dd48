package adapter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
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

// TestAdapterCall_SpacedPathNamed: a path that begins or ends with white
// space is sent as written, and the result says so: as a warning, and in
// the text of a failed call, where the spaces are the likeliest reason.
func TestAdapterCall_SpacedPathNamed(t *testing.T) {
	t.Parallel()
	spec := sdk.Spec{Name: "reader", Description: "Reads.", InputSchema: json.RawMessage(editSchema), Effect: sdk.EffectRead,
		Roles: map[string]sdk.Role{"path": sdk.RolePathRead}}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"runs", nil},
		{"fails", sdk.Errorf(sdk.CodeNotFound, "the file does not exist")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{ret: func(context.Context, json.RawMessage, func(sdk.Progress)) (*sdk.Result, error) {
				if tc.err != nil {
					return nil, tc.err
				}
				return &sdk.Result{Text: "ok"}, nil
			}}
			a := New(spec, "test", toolspec.Warm, rec, Options{Workspace: "/ws", Trusted: true})
			res := a.Call(t.Context(), session.New("s"), json.RawMessage(`{"path":" a.txt"}`))
			if got := rec.args(t)["path"]; got != " a.txt" {
				t.Errorf("plugin got path %q, want it as written", got)
			}
			if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"a.txt"`) {
				t.Errorf("Warnings = %q, want one naming the path without its spaces", res.Warnings)
			}
			if named := strings.Contains(res.Text, `call again without it`); named != (tc.err != nil) {
				t.Errorf("text %q: the spaces named in it = %v, want %v", res.Text, named, tc.err != nil)
			}
		})
	}
}
