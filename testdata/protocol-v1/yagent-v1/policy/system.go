package policy

import "slices"

// SandboxAccess is what a sandboxed command may do with a system path.
type SandboxAccess int

// The sandbox column of the system path table.
const (
	// SandboxNone: nothing from this table (the session's temp folder is
	// bound over /tmp by the sandbox itself; /dev/stdout and its kind are
	// links into /proc).
	SandboxNone SandboxAccess = iota
	// SandboxRead: the tree is read and its programs run.
	SandboxRead
	// SandboxList: the folder is listed; its entries are granted one by
	// one, some kept private (/etc).
	SandboxList
	// SandboxDevice: a device read, written and ioctl'd (/dev/null, ttys).
	SandboxDevice
	// SandboxDeviceRead: a device read only (/dev/urandom).
	SandboxDeviceRead
	// SandboxShared: a folder every process writes (/dev/shm).
	SandboxShared
)

// SystemPath is one row of the system path table: a machine's path and
// its two meanings, kept apart because they answer different questions.
type SystemPath struct {
	// Path is absolute, as the machine names it (a merged-/usr /bin is a
	// link; callers resolve it).
	Path string
	// Tree says the row covers everything beneath Path; otherwise only
	// the exact name (a device).
	Tree bool
	// NoAsk says a command may name it without asking the user: nothing
	// in it is the user's or another process's secret.
	NoAsk bool
	// Sandbox is what a sandboxed command may do with it.
	Sandbox SandboxAccess
}

// systemPaths is the one table of the machine's paths. /proc and /sys are
// readable in the sandbox (programs need them) but a command naming them
// asks: /proc/<pid>/environ and the like are another process's secrets.
var systemPaths = []SystemPath{
	{"/usr", true, true, SandboxRead},
	{"/bin", true, true, SandboxRead},
	{"/sbin", true, true, SandboxRead},
	{"/lib", true, true, SandboxRead},
	{"/lib32", true, true, SandboxRead},
	{"/lib64", true, true, SandboxRead},
	{"/libx32", true, true, SandboxRead},
	{"/opt", true, true, SandboxRead},
	{"/proc", true, false, SandboxRead},
	{"/sys", true, false, SandboxRead},
	{"/tmp", true, true, SandboxNone},
	{"/etc", true, false, SandboxList},
	{"/run", true, false, SandboxList},
	{"/var/run", true, false, SandboxList},
	{"/dev/null", false, true, SandboxDevice},
	{"/dev/zero", false, true, SandboxDevice},
	{"/dev/full", false, true, SandboxDevice},
	{"/dev/tty", false, true, SandboxDevice},
	{"/dev/pts", true, false, SandboxDevice},
	{"/dev/ptmx", false, false, SandboxDevice},
	{"/dev/random", false, true, SandboxDeviceRead},
	{"/dev/urandom", false, true, SandboxDeviceRead},
	{"/dev/stdin", false, true, SandboxNone},
	{"/dev/stdout", false, true, SandboxNone},
	{"/dev/stderr", false, true, SandboxNone},
	{"/dev/shm", true, false, SandboxShared},
}

// SystemPaths returns the system path table, in a fixed order.
func SystemPaths() []SystemPath { return slices.Clone(systemPaths) }
