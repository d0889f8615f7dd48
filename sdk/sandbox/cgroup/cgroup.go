package cgroup

import (
	"errors"
	"path/filepath"
	"sync"
	"syscall"
)

// Group is one command's cgroup.
type Group struct {
	// Path is the cgroup's folder as New made it (Dir follows a move to
	// kept-N at Release).
	Path string
	fd   int

	// forceSignals makes Kill take the fallback path (freeze, then SIGKILL
	// each process) even where cgroup.kill exists: a test seam.
	forceSignals bool

	t          *tree
	background bool
	n          int64 // the N of live-N, bg-N, kept-N

	mu       sync.Mutex
	dir      string // the folder now: Path, or kept-N once its processes moved
	released bool
	pooled   bool // released empty, its folder kept for another command
	// killed says Kill ran: such a group is never handed to another
	// command, since a process cloned into a cgroup soon after its
	// cgroup.kill can be killed with the old ones.
	killed bool

	// The bounds (Bound): what was set, the groups of the cgroup v1
	// hierarchies that hold some, and the counters of hits when the
	// command got the group (those of an earlier command, for a reused
	// one).
	limits Limits
	v1     []*v1group
	base   Hits
	reused bool
}

// v1group is a command's group in one cgroup v1 hierarchy.
type v1group struct {
	// way is the hierarchy's (shared by the bounds it holds).
	way   *way
	dir   string
	dirFD int // the folder, for its files
	tasks int // its tasks file, open for writing: JoinThread writes to it
}

// ErrUnavailable says this machine has no writable cgroup v2: commands run
// in process groups only.
var ErrUnavailable = errors.New("no writable cgroup v2 here")

// Folder name prefixes under a process's yagent.<pid> folder.
const (
	// PrefixLive names the group of a command whose call (or yielded task)
	// is in flight: a dead plugin's host kills these.
	PrefixLive = "live-"
	// PrefixBackground names the group of an is_background command: never
	// killed but by shell_cancel.
	PrefixBackground = "bg-"
	// PrefixKept names the group that a released group's processes moved
	// to where the released mark cannot be set: they outlived their call
	// and are never killed.
	PrefixKept = "kept-"
	// PrefixProcess starts the folder of one plugin process's groups,
	// yagent.<pid>.
	PrefixProcess = "yagent."
)

// testLayersEnv names, in a test build only, the variable whose value
// "none" makes Root and New fail as on a machine without a writable cgroup
// v2: `go build -ldflags "-X
// github.com/yagent/yagent/sdk/sandbox/cgroup.testLayersEnv=NAME"`
// (package sandbox has the same seam for its layers). A release build
// leaves it empty and reads no variable.
var testLayersEnv string

// Root returns the cgroup v2 folder under which this process makes
// command cgroups (<mount><own cgroup>/yagent.<pid>), or an error saying
// why there is none (wrapping ErrUnavailable). It makes nothing.
func Root() (string, error) { return std.rootDir() }

// New makes a cgroup for one command and opens its folder for
// SysProcAttr.UseCgroupFD/CgroupFD. background says it belongs to a
// command that outlives its call (bg-N: never killed with the plugin);
// otherwise it is live-N, in flight.
func New(background bool) (*Group, error) { return std.newGroup(background) }

// FD is the descriptor for SysProcAttr.UseCgroupFD/CgroupFD.
func (g *Group) FD() int { return g.fd }

// Background says the group is a bg-N one.
func (g *Group) Background() bool { return g.background }

// Dir is the group's folder now: Path, or the kept-N group Release moved
// the processes left in it to where it could not mark it released.
func (g *Group) Dir() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dir
}

// Name is the base name of Dir (live-3, bg-4, kept-3).
func (g *Group) Name() string { return filepath.Base(g.Dir()) }

// Kill kills every process in the group (and in any group under it): it
// writes cgroup.kill, or where the kernel has none (before 5.14) freezes
// the group and SIGKILLs each of its processes until none is left. After
// Release it kills nothing.
func (g *Group) Kill() error { return g.kill() }

// Signal sends sig to every process in the group now (a graceful stop
// before Kill). After Release it signals nothing.
func (g *Group) Signal(sig syscall.Signal) { g.signal(sig) }

// Procs counts the processes in the group now.
func (g *Group) Procs() int { return g.procs() }

// Release lets the group go: it is never killed after this. Its folder is
// removed when empty (or, a live one, kept for the next New to reuse).
// Otherwise it is marked released (a user.yagent.released xattr; where
// cgroupfs has no user xattrs, before Linux 5.7, the processes left move
// to a kept-N group instead, since cgroup v2 has no rename), so that no
// one kills them (a dead plugin's host kills unreleased live-N groups
// only), and a later sweep removes it once empty.
func (g *Group) Release() { g.release() }

// Released reports whether the group at dir was released: marked so, or
// a kept-N one. Only tests call it: plugins/shell/runner's, which an
// export_test.go of this package cannot reach.
func Released(dir string) bool { return released(dir) }

// Of returns the folder of process pid's cgroup v2. Only tests call it:
// plugins/shell/runner's, which an export_test.go of this package cannot
// reach.
func Of(pid int) (string, error) { return groupOf(pid) }

// DirOf returns the folder under which process pid (a plugin) makes its
// command cgroups, from its /proc entry: read it while the process lives.
func DirOf(pid int) (string, error) { return dirOf(pid) }

// KillLive kills every live-N group under dir, the folder of a plugin
// process (DirOf), that was not released, and returns how many it killed:
// the host calls it when that plugin died with commands in flight. bg-N,
// kept-N and released groups are never touched.
func KillLive(dir string) (int, error) { return killLive(dir) }

// RemoveEmpty removes the empty groups under dir, the folder of a plugin
// process that is gone (DirOf), then dir itself, and reports whether dir is
// gone: the host calls it once that plugin's live groups were killed and
// have emptied. A group something still runs in stays, and so does dir.
func RemoveEmpty(dir string) bool { return removeEmpty(dir) }

// Cleanup removes this process's released groups that have emptied (and
// those kept for reuse), and its own folder when nothing is left in it: the plugin calls it as it
// shuts down.
func Cleanup() { std.cleanup() }
