package sdk

import "github.com/yagent/yagent/policy"

// Sandbox modes, set by the profile's sandbox.mode (policy owns them; the
// names stay here for plugin authors).
const (
	// SandboxOff runs a call's processes as docs/ARCHITECTURE.md#sandbox-off
	// describes: the guard's parse-time check only.
	SandboxOff = policy.SandboxOff
	// SandboxOn applies every kernel layer the machine has and says which
	// are missing.
	SandboxOn = policy.SandboxOn
	// SandboxRequired refuses to run processes where a layer is missing.
	SandboxRequired = policy.SandboxRequired
)

// ApprovalExec is the Kind of an ApprovalRequest for a program a running
// command's tree is about to exec (the shell plugin's exec supervisor):
// the host applies the profile's exec rules to it and asks where one says
// ask. Program, Argv, Interpreters and Terminal describe the exec.
const ApprovalExec = "exec"

// Sandbox is the containment the host sets for the processes of one call,
// from the profile and the session's grants at that moment. The plugin adds
// its own defaults (system paths, the workspace, the temp folder, the
// toolchain caches).
type Sandbox struct {
	// Mode is SandboxOff, SandboxOn or SandboxRequired; "" is on
	// (policy.SandboxMode). A nil *Sandbox sets none.
	Mode string
	// Network false puts the call's processes in an empty network
	// namespace.
	Network bool
	// Read are roots the processes may read beyond the defaults: read
	// roots, session approvals, the profile's sandbox.read; absolute,
	// resolved.
	Read []string
	// Write are roots they may read and write: the profile's
	// sandbox.write, the admin's word; absolute, resolved.
	Write []string
	// Granted are the paths an ask approved for this call to write
	// (absolute, resolved): the plugin opens each as the host judged it,
	// and never a kernel filesystem (/proc, /sys, /dev), a home folder, or
	// a path that resolves elsewhere by the time the command starts.
	Granted []string
	// Programs are the programs of the profile's ask and deny exec rules:
	// an exec of any other program needs no word from the host.
	Programs []ExecProgram
	// Pids is the most processes and threads the tree of one command may
	// hold at once (the profile's sandbox.pids); 0 sets no bound.
	Pids int
	// MemoryMB is the most memory, in MiB, the tree of one command may use,
	// swap included (sandbox.memory_mb); 0 sets no bound.
	MemoryMB int
	// TmpSizeMB is the size, in MiB, of the session temp folder
	// (sandbox.tmp_size_mb); 0 gives it no size of its own.
	TmpSizeMB int
	// UnixSockets are the Unix sockets the admin exposes to the call's
	// processes (sandbox.unix_sockets): absolute, resolved.
	UnixSockets []string
}

// ExecProgram is the program of an ask or deny exec rule and the files it
// resolves to on this machine.
type ExecProgram struct {
	// Name is the rule's program, a basename such as "printenv".
	Name string
	// Files are the executables of that name the host found, each a copy
	// of which is the same program.
	Files []ProgramFile
	// Interactive says every rule on the program is an ask rule limited to
	// its REPL (interactive: true): it only matches an exec whose stdin is a
	// terminal, so a command without one needs no exec supervision for it.
	Interactive bool
}

// ProgramFile is one file a rule's program is.
type ProgramFile struct {
	Path   string
	Size   int64
	SHA256 string // hex
}
