package guard

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/host/bus"
	"github.com/yagent/yagent/host/session"
	"github.com/yagent/yagent/sdk"
)

// ApproverOptions configures an Approver.
type ApproverOptions struct {
	// Yolo (-y) approves everything without asking.
	Yolo bool
	// Bus receives user_help_needed / user_help_response for every prompt.
	Bus *bus.Dispatcher
	// Logger; nil = slog.Default().
	Logger *slog.Logger
}

// Approver resolves the guard's asks: YOLO, then the session's passes, then
// the session's answerer. Without an answerer it refuses, and the adapter
// turns that into needs_auth.
type Approver struct {
	opts   ApproverOptions
	logger *slog.Logger
}

var _ adapter.Approver = (*Approver)(nil)

// NewApprover returns an Approver.
func NewApprover(opts ApproverOptions) *Approver {
	l := opts.Logger
	if l == nil {
		l = slog.Default()
	}
	return &Approver{opts: opts, logger: l}
}

// Authorize implements adapter.Approver. An answer with session (or project)
// scope gives the session a pass for the tool; project passes are kept for
// the session only until project persistence lands.
func (a *Approver) Authorize(ctx context.Context, sess *session.Session, spec sdk.Spec, d adapter.Decision) (bool, string, []string) {
	if a.opts.Yolo || sess.Granted(spec.Name) {
		return true, "", d.Paths
	}
	ans := sess.Answerer()
	if ans == nil {
		return false, "nobody to ask in this session", nil
	}
	prompt := session.ApprovalPrompt{RequestID: uuid.NewString(), Tool: spec.Name, Reason: d.Reason, Paths: d.Paths, Command: d.Command}
	ev := bus.Event{Type: bus.UserHelpNeeded, SessionID: sess.ID(), RequestID: prompt.RequestID, Tool: spec.Name, Payload: prompt}
	a.opts.Bus.Publish(ev)
	answer, err := ans.Approve(ctx, prompt)
	ev.Type, ev.Payload = bus.UserHelpResponse, answer
	a.opts.Bus.Publish(ev)
	if err != nil {
		return false, fmt.Sprintf("the user could not be asked: %v", err), nil
	}
	if !answer.Approved {
		return false, answer.Reason, nil
	}
	switch answer.Scope {
	case session.ScopeSession, session.ScopeProject:
		sess.GrantTool(spec.Name)
		if answer.Scope == session.ScopeProject {
			a.logger.Info("project approval kept for this session only", "tool", spec.Name, "session", sess.ID())
		}
	}
	return true, answer.Reason, d.Paths
}
