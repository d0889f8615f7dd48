package authz

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// PluginHost answers the approval requests plugins make while a call runs
// (sdk.Host.RequestApproval), through the same passes and loop as the
// guard's asks. It implements pluginmgr.HostServices: a request comes with
// the call's own context, whose session (session.FromContext) is the one
// asked. Input typed into a running program (sdk.ApprovalStdin) is judged
// here: for a shell, by the guard, as the command it is; for any other
// program, by asking. A program a running command's tree is about to
// exec (sdk.ApprovalExec) is judged by the profile's exec rules, as a
// command written out would be. Safe for concurrent use.
type PluginHost struct {
	a        *Approver
	guard    adapter.Guard
	recorder ApprovalRecorder
}

// ApprovalRecorder records each request a running call's plugin makes and
// its answer (the audit trail). It must be safe for concurrent use.
type ApprovalRecorder interface {
	RecordApproval(ctx context.Context, r ApprovalRecord)
}

// ApprovalRecord is one plugin request and how it was answered.
type ApprovalRecord struct {
	CallID, SessionID, Tool, Plugin string
	// Ask is the request's kind: "exec", "stdin", "paths" or "question".
	Ask     string
	Program string
	Argv    []string
	Command string
	Paths   []string
	// Approved is the answer; By who gave it (an adapter.By* word), ""
	// when the rules decided without asking anyone.
	Approved bool
	By       string
	Reason   string
}

// Ask kinds of an ApprovalRecord.
const (
	AskExec     = "exec"
	AskStdin    = "stdin"
	AskPaths    = "paths"
	AskQuestion = "question"
)

// SetRecorder makes r record every request from now on; nil = none. Call
// it before plugins run.
func (h *PluginHost) SetRecorder(r ApprovalRecorder) { h.recorder = r }

// NewPluginHost returns a PluginHost asking through a and judging input to
// shells with g (nil: such input asks like any other).
func NewPluginHost(a *Approver, g adapter.Guard) *PluginHost {
	return &PluginHost{a: a, guard: g}
}

// stdinParam is the parameter of the spec input to a shell is judged
// under: a command, as run_bash's command is.
const stdinParam = "input"

// RequestApproval judges or asks for a request of plugin during call. A
// context without a session (a call that is not in flight, or not run
// through an adapter) has nobody to ask: refused with the reason.
func (h *PluginHost) RequestApproval(ctx context.Context, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	sess := session.FromContext(ctx)
	resp, by := h.judge(ctx, sess, plugin, call, req)
	if h.recorder != nil {
		h.record(ctx, sess, plugin, call, req, resp, by)
	}
	return resp, nil
}

// judge answers a request; by names who answered an ask (adapter.By*),
// "" when the rules decided alone.
func (h *PluginHost) judge(ctx context.Context, sess *session.Session, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, string) {
	if req.Kind == sdk.ApprovalExec {
		return h.exec(ctx, sess, plugin, call, req)
	}
	if sess == nil {
		return sdk.ApprovalResponse{Reason: fmt.Sprintf("call %q of plugin %s is not in flight, so nobody can be asked", call.ID, plugin)}, adapter.ByNobody
	}
	tool := call.Tool
	if tool == "" {
		tool = plugin
	}
	switch req.Kind {
	case "":
		return answered(h.a.ask(ctx, sess, session.ApprovalPrompt{Tool: tool, Reason: req.Reason, Paths: req.Paths, Command: req.Command}), req.Reason)
	case sdk.ApprovalStdin:
		return h.stdin(ctx, sess, tool, call, req)
	}
	return sdk.ApprovalResponse{Reason: fmt.Sprintf("plugin %s asked for an approval of kind %q, which this host does not know", plugin, req.Kind)}, ""
}

// record hands a request and its answer to the recorder.
func (h *PluginHost) record(ctx context.Context, sess *session.Session, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest, resp sdk.ApprovalResponse, by string) {
	r := ApprovalRecord{CallID: call.ID, Tool: call.Tool, Plugin: plugin, Program: req.Program, Argv: req.Argv,
		Command: req.Command, Paths: req.Paths, Approved: resp.Approved, By: by, Reason: resp.Reason}
	if sess != nil {
		r.SessionID = sess.ID()
	}
	switch {
	case req.Kind == sdk.ApprovalExec:
		r.Ask = AskExec
	case req.Kind == sdk.ApprovalStdin:
		// Text typed into a shell is a command; into any other program
		// it may be a password at its prompt, and is not recorded.
		r.Ask, r.Command = AskStdin, ""
		if req.Shell {
			r.Command = req.Input
		}
	case len(req.Paths) > 0:
		r.Ask = AskPaths
	default:
		r.Ask = AskQuestion
	}
	h.recorder.RecordApproval(ctx, r)
}

// stdin judges input typed into a task's foreground program. A shell runs
// it as a command line, so it gets run_bash's check (paths, exec rules with
// the admin's deny, the read-only classifier); what any other program does
// with text nobody can tell, so it asks. Passes (-y, the session's) turn
// an ask into allow; a deny stands.
func (h *PluginHost) stdin(ctx context.Context, sess *session.Session, tool string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, string) {
	prog := req.Program
	if prog == "" {
		prog = "a program the shell plugin could not identify"
	}
	if !req.Shell || h.guard == nil {
		// What the program has not read waits in the terminal for whoever
		// reads next, perhaps a shell (one this input starts, or the one
		// behind the program).
		if req.Ahead != "" && h.guard != nil {
			if d := h.check(ctx, sess, tool, call, req.Ahead); d.Action == adapter.Deny {
				return sdk.ApprovalResponse{Reason: fmt.Sprintf("the text typed into task %s goes to %s, and what it has not read waits in the terminal for whoever reads next, which a shell would run as a command the rules refuse: %s; this rule stands. Send one line per write_stdin, to a program waiting for it", req.TaskID, prog, d.Reason)}, ""
			}
		}
		reason := fmt.Sprintf("the text typed into task %s goes to %s, not a shell at its prompt, so the host cannot judge what it does with it", req.TaskID, prog)
		if req.Shell {
			reason = fmt.Sprintf("the text typed into task %s goes to the shell %s, and this host has no guard to judge it", req.TaskID, prog)
		}
		return answered(h.a.ask(ctx, sess, session.ApprovalPrompt{Tool: tool, Reason: reason, Command: req.Input}), reason)
	}
	d := h.check(ctx, sess, tool, call, req.Input)
	if d.Action == adapter.Deny {
		return sdk.ApprovalResponse{Reason: fmt.Sprintf("the text typed into the shell %s of task %s is a command the rules refuse: %s; this rule stands", prog, req.TaskID, d.Reason)}, ""
	}
	// The check reads the line as run_bash's command, in the workspace root
	// and whole; a shell elsewhere, or a line edited out of sight, is
	// more than the check saw.
	var more []string
	if d.Action == adapter.Ask {
		more = append(more, d.Reason)
	}
	if dir := filepath.Clean(req.Dir); req.Dir == "" || !sameDir(dir, call.Workspace) {
		where := "an unknown folder"
		if req.Dir != "" {
			where = dir
		}
		more = append(more, fmt.Sprintf("the shell works in %s, not the workspace root its paths are judged against", where))
	}
	if req.Unseen {
		more = append(more, "the line was changed with keys (completion, history, cursor) whose result nobody saw")
	}
	if len(more) == 0 {
		return sdk.ApprovalResponse{Approved: true}, ""
	}
	reason := fmt.Sprintf("the text typed into the shell %s of task %s runs as a command, and %s", prog, req.TaskID, strings.Join(more, "; "))
	return answered(h.a.ask(ctx, sess, session.ApprovalPrompt{Tool: tool, Reason: reason, Paths: d.Paths, Command: req.Input}), reason)
}

// ExecJudge applies the profile's exec rules to a program a running
// command's tree is about to exec (guard.WorkspaceGuard.JudgeExec).
type ExecJudge interface {
	JudgeExec(program string, argv, interpreters []string, terminal bool) (action, rule string)
}

// execJudgeIn is an ExecJudge that also knows the exec's folder, for the
// read-only classifier (git's config is the repository's).
type execJudgeIn interface {
	JudgeExecIn(program string, argv, interpreters []string, terminal bool, dir string) (action, rule string)
}

// exec judges a program a command's tree is about to run with the
// profile's exec rules, as the guard judges a command written out: deny
// refuses (and stands under -y), allow approves without asking, ask goes
// through the passes and the user. Without a session in flight nobody can
// be asked: only an allow gets through.
func (h *PluginHost) exec(ctx context.Context, sess *session.Session, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, string) {
	action, rule := policy.ExecAllow, ""
	if j, ok := h.guard.(execJudgeIn); ok {
		action, rule = j.JudgeExecIn(req.Program, req.Argv, req.Interpreters, req.Terminal, req.Dir)
	} else if j, ok := h.guard.(ExecJudge); ok {
		action, rule = j.JudgeExec(req.Program, req.Argv, req.Interpreters, req.Terminal)
	} else if h.guard != nil || req.Program == "" {
		// A guard that cannot judge execs, or a program nobody can
		// name, is not waved through.
		action, rule = policy.ExecAsk, "(no exec rules could be applied)"
	}
	what := execText(req)
	switch action {
	case policy.ExecAllow:
		return sdk.ApprovalResponse{Approved: true}, ""
	case policy.ExecDeny:
		if req.Program == "" {
			return sdk.ApprovalResponse{Reason: fmt.Sprintf("the command's tree tried to run %s; with the profile rule %s in force an unidentified program is refused; this rule stands: run programs from files", what, rule)}, ""
		}
		return sdk.ApprovalResponse{Reason: fmt.Sprintf("the command's tree tried to run %s, which the profile rule %s denies; this rule stands, whatever runs it (a script, make, an interpreter, a copy)", what, rule)}, ""
	}
	reason := fmt.Sprintf("the command's tree is about to run %s, which the profile rule %s asks about", what, rule)
	if req.Program == "" {
		reason = fmt.Sprintf("the command's tree is about to run %s, which gets the profile's strictest exec rule, %s", what, rule)
	}
	if sess == nil {
		return sdk.ApprovalResponse{Reason: fmt.Sprintf("%s, and call %q of plugin %s is not in flight, so nobody can be asked", reason, call.ID, plugin)}, adapter.ByNobody
	}
	tool := call.Tool
	if tool == "" {
		tool = plugin
	}
	return answered(h.a.ask(ctx, sess, session.ApprovalPrompt{Tool: tool, Reason: reason, Command: strings.Join(req.Argv, " ")}), reason)
}

// execText names an exec for a message: the file and its command line.
func execText(req sdk.ApprovalRequest) string {
	prog := req.Program
	if prog == "" {
		why := "a memfd or a deleted file"
		if req.Reason != "" {
			why = req.Reason
		}
		prog = fmt.Sprintf("a program the sandbox could not identify (%s)", why)
	}
	if len(req.Argv) == 0 {
		return prog
	}
	return fmt.Sprintf("%s (%s)", prog, strings.Join(req.Argv, " "))
}

// check is the guard's verdict on text run as a command, as run_bash's
// command would get it.
func (h *PluginHost) check(ctx context.Context, sess *session.Session, tool string, call sdk.CallInfo, text string) adapter.Decision {
	return h.guard.Check(ctx, adapter.GuardRequest{
		Spec: sdk.Spec{
			Name:   tool,
			Effect: sdk.EffectExec,
			Roles:  map[string]sdk.Role{stdinParam: sdk.RoleCommand},
		},
		Args:      map[string]any{stdinParam: text},
		Workspace: call.Workspace,
		Session:   sess,
		// The host judges the text itself here; whether the plugin's own
		// spec is believed was settled when the call was let through.
		Trusted: true,
		Temp:    sess.Temp(),
	})
}

// sameDir reports whether dir is the workspace root ws, symlinks resolved.
func sameDir(dir, ws string) bool {
	if ws == "" {
		return false
	}
	if dir == filepath.Clean(ws) {
		return true
	}
	real, err := filepath.EvalSymlinks(ws)
	return err == nil && real == dir
}

// answered is response with who answered.
func answered(r adapter.Approval, why string) (sdk.ApprovalResponse, string) {
	return response(r, why), r.By
}

// response is the plugin's view of an ask's outcome; why is what was asked.
func response(r adapter.Approval, why string) sdk.ApprovalResponse {
	switch {
	case r.Allowed:
		return sdk.ApprovalResponse{Approved: true, Reason: r.Reason}
	case r.Unanswered && why != "":
		return sdk.ApprovalResponse{Unanswered: true, Reason: fmt.Sprintf("%s, and %s", why, r.Reason)}
	case r.Unanswered:
		return sdk.ApprovalResponse{Unanswered: true, Reason: r.Reason}
	case r.Reason == "":
		return sdk.ApprovalResponse{Reason: "the user declined"}
	}
	return sdk.ApprovalResponse{Reason: r.Reason}
}
