package sdk

import (
	"context"
	"time"
)

// CallInfo is what the host says about one call.
type CallInfo struct {
	// ID identifies the call; progress and approvals refer to it.
	ID string
	// Tool is the name of the tool called.
	Tool string
	// SessionID identifies the agent session; per-session state keys on it.
	SessionID string
	// Workspace is the absolute path of the workspace root.
	Workspace string
	// ApprovedPaths are absolute paths outside the workspace the user has
	// approved for this call.
	ApprovedPaths []string
	// Deadline is when the host stops waiting, zero when none.
	Deadline time.Time
	// Sandbox is the containment of the processes the call starts; nil
	// when the host sets none (off).
	Sandbox *Sandbox
	// Temp is the session's own temp folder, nil when the host keeps
	// none: the path arguments the host sends already name files in it
	// (TempFolder.Map); a plugin that resolves symlinks itself maps their
	// targets the same way.
	Temp *TempFolder
}

// Host is what a plugin can ask of the host while a call runs.
type Host interface {
	// Progress reports progress of the current call.
	Progress(ctx context.Context, p Progress) error
	// RequestApproval asks the user through the host and blocks for the answer.
	RequestApproval(ctx context.Context, req ApprovalRequest) (ApprovalResponse, error)
	// ReportProcessGroup tells the host that a process group started (live)
	// or ended (!live), so the host can kill it if the plugin dies.
	ReportProcessGroup(ctx context.Context, pgid int, live bool) error
}

// ApprovalStdin is the Kind of an ApprovalRequest for input typed into a
// running program (the shell plugin's write_stdin). The host judges it
// itself rather than only asking: input to a shell is checked as the
// command it is, input to any other program asks.
const ApprovalStdin = "stdin"

// ApprovalRequest asks the user to allow something a running call needs.
type ApprovalRequest struct {
	// Reason says, for the user, what is asked and why.
	Reason string
	// Paths are paths outside the workspace the call wants to touch.
	Paths []string
	// Command is a command line the call wants to run.
	Command string

	// Kind is "" for a plain question (Reason, Paths, Command, put to the
	// user) or ApprovalStdin.
	Kind string
	// TaskID names the task the input goes to (ApprovalStdin).
	TaskID string
	// Program is the file the task's foreground program runs, "" when it
	// cannot be told (ApprovalStdin).
	Program string
	// Shell says Program is a shell, identified by the file it runs, so
	// that Input is a command line (ApprovalStdin).
	Shell bool
	// Input is the text the program will read: for a shell, the whole line
	// typed since the last one it ran (ApprovalStdin).
	Input string
	// Dir is the shell's working folder, against which its relative paths
	// resolve; "" when unknown (ApprovalStdin).
	Dir string
	// Unseen says the shell's line also holds text nobody can see: keys
	// that complete, recall or move on it (tab, up, left...) changed it
	// since it was judged (ApprovalStdin).
	Unseen bool
	// Ahead is the text that may wait in the terminal for whoever reads
	// next, perhaps a shell: what was typed while the program was not
	// waiting for input, and what follows the first line of a write to one
	// that was, this write's included (ApprovalStdin).
	Ahead string

	// Argv are the exec's arguments, argv[0] first (ApprovalExec).
	Argv []string
	// Interpreters are the files the #! lines of Program name
	// (ApprovalExec).
	Interpreters []string
	// Terminal says the exec's stdin is a terminal (ApprovalExec).
	Terminal bool
}

// ApprovalResponse is the host's answer.
type ApprovalResponse struct {
	Approved bool
	// Reason is the user's optional word back to the model, or why the
	// request was refused.
	Reason string
	// Unanswered says nobody could be asked (no answerer, or it failed or
	// timed out): the call should fail closed with CodeNeedsAuth, not as
	// a refusal.
	Unanswered bool
}

type callKey struct{}
type hostKey struct{}

// WithCall returns ctx carrying info.
func WithCall(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callKey{}, info)
}

// CallFrom returns the CallInfo of the call ctx belongs to.
func CallFrom(ctx context.Context) CallInfo {
	info, _ := ctx.Value(callKey{}).(CallInfo)
	return info
}

// WithHost returns ctx carrying h.
func WithHost(ctx context.Context, h Host) context.Context {
	return context.WithValue(ctx, hostKey{}, h)
}

// HostFrom returns the Host of the call ctx belongs to; a Host that does
// nothing and approves nothing when none is attached.
func HostFrom(ctx context.Context) Host {
	if h, ok := ctx.Value(hostKey{}).(Host); ok && h != nil {
		return h
	}
	return noHost{}
}

// ReportProgress reports progress of the current call; errors are dropped
// because progress is advisory.
func ReportProgress(ctx context.Context, message string, progress, total float64) {
	_ = HostFrom(ctx).Progress(ctx, Progress{Message: message, Progress: progress, Total: total})
}

type noHost struct{}

func (noHost) Progress(context.Context, Progress) error { return nil }
func (noHost) RequestApproval(context.Context, ApprovalRequest) (ApprovalResponse, error) {
	return ApprovalResponse{Approved: false, Reason: "no host attached to ask the user"}, nil
}
func (noHost) ReportProcessGroup(context.Context, int, bool) error { return nil }
