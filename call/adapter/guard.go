package adapter

import (
	"context"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
)

// Guard decides, from a tool's Effect and parameter roles, whether a
// validated call may run, must ask the user, or is refused.
type Guard interface {
	Check(ctx context.Context, req GuardRequest) Decision
}

// GuardRequest is one validated call the guard judges.
type GuardRequest struct {
	Spec sdk.Spec
	// Args are the validated arguments.
	Args      map[string]any
	Workspace string
	Session   *session.Session
	// Trusted is false for tools of unpinned external plugins, whose
	// declared Effect and roles the host does not believe.
	Trusted bool
	// Temp is the session's own temp folder, nil when the host keeps
	// none: a path under a temp folder it stands for is judged, and sent,
	// as the file in it (sdk.TempFolder.Map).
	Temp *sdk.TempFolder
}

// Action is the guard's verdict.
type Action int

// Actions.
const (
	Allow Action = iota
	Ask
	Deny
)

func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "action(?)"
}

// Decision is the guard's answer on one call.
type Decision struct {
	Action Action
	// Reason says, for the user and the model, why the call asks or is refused.
	Reason string
	// Paths outside the workspace the call touches; approving the call
	// approves them for it. On Allow they are the outside paths the guard
	// allows without asking (the read whitelist, a pass), passed to the
	// plugin as the call's approved paths.
	Paths []string
	// Writes are the Paths an approval lets the call write (resolved);
	// it may only read the others: a reading command's, and the folder
	// before the part of a word only known when the command runs.
	Writes []string
	// URLs are the http(s) URLs the call opens, as the guard judged them;
	// approving the call approves their origins for it (a browser's pages
	// may then reach them; see the sandbox's egress).
	URLs []string
	// Command is the command line that made the call ask.
	Command string
	// Hint says how to allow such calls without asking (a profile line).
	Hint string
	// Basis says, for the audit trail, on what ground the guard decided:
	// one of the Basis* words. "" is BasisGuard.
	Basis string
	// Rule is the profile rule that decided, as the profile writes it,
	// when one did.
	Rule string
	// Args are the call's arguments with each role argument as the guard
	// resolved and judged it (absolute paths, URLs with their scheme): the
	// input the plugin receives. nil = the validated arguments unchanged.
	Args map[string]any
}

// Grounds of a Decision (Decision.Basis), for the audit trail.
const (
	// BasisGuard: the guard's own judgement, no finer ground given.
	BasisGuard = "guard"
	// BasisNoEffect: the tool touches nothing (EffectNone).
	BasisNoEffect = "no_effect"
	// BasisWorkspace: every path the call touches is inside the workspace.
	BasisWorkspace = "workspace"
	// BasisReadRoot: a read of a path the profile's read roots allow.
	BasisReadRoot = "read_root"
	// BasisRule: a rule of the profile (Decision.Rule).
	BasisRule = "rule"
	// BasisSessionPaths: paths the session was allowed before.
	BasisSessionPaths = "session_paths"
	// BasisSessionTemp: a path in the session's own temp folder, which
	// its commands and file tools read and write.
	BasisSessionTemp = "session_temp"
	// BasisNoGuard: the surface has no guard (tests, the Go API without one).
	BasisNoGuard = "no_guard"
)

// Approver resolves an Ask: session passes, YOLO, or the session's user.
type Approver interface {
	Authorize(ctx context.Context, sess *session.Session, spec sdk.Spec, d Decision) Approval
}

// Approval is an Approver's answer on one call.
type Approval struct {
	// Allowed says the call may run.
	Allowed bool
	// Reason is the user's word back to the model, or why nobody answered.
	Reason string
	// Paths are the external paths approved for the call.
	Paths []string
	// Unanswered says nobody could be asked, or nobody answered (the
	// answerer failed or timed out): the call fails closed with needs_auth
	// rather than as the user's refusal.
	Unanswered bool
	// By says, for the audit trail, who or what answered: one of the By*
	// words.
	By string
}

// Who answered an ask (Approval.By).
const (
	ByYolo    = "yolo_pass"    // -y
	BySession = "session_pass" // an earlier "for the session" answer
	ByProject = "project_pass" // the project is authorized
	ByUser    = "user"         // the session's user, now
	ByNobody  = "nobody"       // nobody could be asked, or answered
)

// SandboxPolicy is implemented by a Guard that also sets the containment
// of each call's processes (sdk.CallInfo.Sandbox). spec is the called
// tool's; approved says d was an ask that the user, a pass or -y approved
// for this call.
type SandboxPolicy interface {
	Sandbox(spec sdk.Spec, sess *session.Session, d Decision, approved bool) *sdk.Sandbox
}
