package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// Passes are the three pass layers: YOLO, the session's (one tool, or
// all), the project's. Any layer that covers a call skips every later
// check: the call runs without asking. The zero value grants nothing but
// the session's own passes.
type Passes struct {
	// Yolo (-y) covers every call.
	Yolo bool
	// Projects holds the authorized projects; nil = none.
	Projects *Projects
	// Workspace is the project the host serves.
	Workspace string
}

// Covers reports whether a pass covers a call of tool in sess.
func (p *Passes) Covers(sess *session.Session, tool string) bool {
	return p.coveredBy(sess, tool) != ""
}

// coveredBy names the pass that covers a call of tool in sess (an
// adapter.By* word), "" when none does.
func (p *Passes) coveredBy(sess *session.Session, tool string) string {
	switch {
	case p != nil && p.Yolo:
		return adapter.ByYolo
	case sess != nil && sess.Granted(tool):
		return adapter.BySession
	case p != nil && p.Projects.Authorized(p.Workspace):
		return adapter.ByProject
	}
	return ""
}

// ApproverOptions configures an Approver.
type ApproverOptions struct {
	// Passes are checked before the user is asked; nil = the session's
	// passes only.
	Passes *Passes
	// Loop asks the user; nil = a Loop on a private dispatcher.
	Loop *Loop
	// Logger; nil = slog.Default().
	Logger *slog.Logger
}

// Approver is the adapter.Approver: it resolves the guard's asks with the
// passes, else by asking the session's user through the loop. An answer
// for the session gives the session a pass for the tool (and the call's
// paths for reads); "all" a pass for every tool; "project" authorizes the
// workspace in the settings file.
type Approver struct {
	passes *Passes
	loop   *Loop
	logger *slog.Logger
}

var _ adapter.Approver = (*Approver)(nil)

// NewApprover returns an Approver.
func NewApprover(opts ApproverOptions) *Approver {
	a := &Approver{passes: opts.Passes, loop: opts.Loop, logger: opts.Logger}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	if a.loop == nil {
		a.loop = NewLoop(LoopOptions{Logger: a.logger})
	}
	return a
}

// Loop returns the loop the approver asks through.
func (a *Approver) Loop() *Loop { return a.loop }

// Authorize implements adapter.Approver.
func (a *Approver) Authorize(ctx context.Context, sess *session.Session, spec sdk.Spec, d adapter.Decision) adapter.Approval {
	r := a.ask(ctx, sess, session.ApprovalPrompt{Tool: spec.Name, Reason: d.Reason, Paths: d.Paths, Command: d.Command})
	if r.Allowed {
		r.Paths = d.Paths
	}
	return r
}

// ask resolves one prompt: passes, then the user. A user who cannot be
// reached (no answerer, the answerer failed, the timeout passed) leaves the
// call Unanswered, which fails closed with needs_auth.
func (a *Approver) ask(ctx context.Context, sess *session.Session, prompt session.ApprovalPrompt) adapter.Approval {
	if by := a.passes.coveredBy(sess, prompt.Tool); by != "" {
		return adapter.Approval{Allowed: true, By: by}
	}
	if sess == nil || sess.Answerer() == nil {
		return adapter.Approval{Reason: "nobody can be asked in this session", Unanswered: true, By: adapter.ByNobody}
	}
	ans, err := a.loop.Approve(ctx, sess, Question{
		Prompt:  prompt,
		Covered: func() bool { return a.passes.Covers(sess, prompt.Tool) },
		Settle: func(ans session.ApprovalAnswer) {
			if ans.Approved {
				a.keep(sess, prompt, ans.Scope)
			}
		},
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return adapter.Approval{Reason: ctx.Err().Error(), By: adapter.ByNobody}
	case errors.Is(err, ErrTimeout):
		return adapter.Approval{Reason: fmt.Sprintf("the question timed out (%v)", err), Unanswered: true, By: adapter.ByNobody}
	case errors.Is(err, session.ErrAnswerLater):
		return adapter.Approval{Reason: "the question is put to the user; the call will be retried with the answer", Unanswered: true, By: adapter.ByNobody}
	default:
		a.logger.Warn("the user could not be asked", "tool", prompt.Tool, "session", sess.ID(), "error", err)
		return adapter.Approval{Reason: fmt.Sprintf("the user could not be asked (%v)", err), Unanswered: true, By: adapter.ByNobody}
	}
	return adapter.Approval{Allowed: ans.Approved, Reason: ans.Reason, By: adapter.ByUser}
}

// keep records the pass an approval's scope gives.
func (a *Approver) keep(sess *session.Session, prompt session.ApprovalPrompt, scope string) {
	switch scope {
	case session.ScopeSession:
		sess.GrantTool(prompt.Tool)
		sess.ApprovePaths(a.readable(prompt.Paths)...)
	case session.ScopeAll:
		sess.GrantAll()
		sess.ApprovePaths(a.readable(prompt.Paths)...)
	case session.ScopeProject:
		var err error
		if a.passes == nil || a.passes.Projects == nil {
			err = errors.New("no settings file to keep project passes in")
		} else {
			err = a.passes.Projects.Authorize(filepath.Clean(a.passes.Workspace))
		}
		if err != nil {
			a.logger.Warn("project approval kept for this session only", "tool", prompt.Tool, "session", sess.ID(), "error", err)
			sess.GrantAll()
		}
	}
}

// readable returns the approved paths that become readable for the rest of
// the session: not the root folder nor a folder holding the workspace,
// which an approval of one command must not open to every read, nor a
// device no approval opens (sandbox.JudgeReadGrant).
func (a *Approver) readable(paths []string) []string {
	ws := ""
	if a.passes != nil {
		ws = filepath.Clean(a.passes.Workspace)
	}
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if p == "/" || (ws != "" && (p == ws || strings.HasPrefix(ws, p+"/"))) || sandbox.JudgeReadGrant(p) != "" {
			continue
		}
		out = append(out, p)
	}
	return out
}
