package cgroup

// Limits bound what the processes of one command's tree may use. A zero
// field sets no bound.
type Limits struct {
	// Pids is the most processes and threads the tree may hold at once: a
	// fork or a new thread beyond it fails (EAGAIN).
	Pids int
	// MemoryMB is the most memory the tree may use, in MiB, swap included
	// (it is given none beyond it): at the bound the kernel reclaims what
	// it can, then kills a process of the tree.
	MemoryMB int
}

// The bounds, named as their controllers.
const (
	BoundPids   = "pids"
	BoundMemory = "memory"
)

// bounds lists the bounds in the order they are reported.
var bounds = []string{BoundPids, BoundMemory}

// get returns l's value for bound b.
func (l Limits) get(b string) int {
	if b == BoundPids {
		return l.Pids
	}
	return l.MemoryMB
}

// set sets l's value for bound b.
func (l *Limits) set(b string, v int) {
	if b == BoundPids {
		l.Pids = v
	} else {
		l.MemoryMB = v
	}
}

// The ways a bound is enforced (Enforcement.Via).
const (
	// ViaV2 is the controller of the command's own cgroup v2 (pids.max,
	// memory.max and memory.swap.max), enabled for it through
	// cgroup.subtree_control.
	ViaV2 = "cgroup v2 controller"
	// ViaV1 is a cgroup of the command's own in the controller's cgroup v1
	// hierarchy, named like its cgroup v2 (live-N, bg-N), under this
	// process's cgroup there, in yagent.<pid>/ (pids.max,
	// memory.limit_in_bytes and memory.memsw.limit_in_bytes).
	ViaV1 = "cgroup v1 hierarchy"
)

// Enforcement says how the commands of this process get one bound.
type Enforcement struct {
	// Bound is BoundPids or BoundMemory.
	Bound string
	// Via is ViaV2 or ViaV1, "" where the bound is missing here: commands
	// then run without it.
	Via string
	// Dir is the folder the commands' groups for the bound are made in.
	Dir string
	// Why says, for a missing bound, why and what to do about it.
	Why string
}

// Enforcements says how this process's commands get each bound (pids,
// then memory), from the controllers the kernel mounts and the cgroups
// it is in. It makes nothing; a controller of cgroup v2 is enabled the
// first time a command needs it.
func Enforcements() []Enforcement { return std.enforcements() }

// Hits counts what a group's bounds refused while its command ran (since
// its Bound).
type Hits struct {
	// Forks counts the forks and new threads the process bound refused
	// (pids.events max).
	Forks int
	// OOMKills counts the processes the kernel killed at the memory bound
	// (memory.events oom_kill; memory.oom_control oom_kill in v1).
	OOMKills int
}

// Any says a bound refused something.
func (h Hits) Any() bool { return h.Forks > 0 || h.OOMKills > 0 }

// Bound sets l on g before its command starts: through the cgroup v2
// controllers where they are enabled for g, else through groups of g's
// own in the cgroup v1 hierarchies (made here, named like g, and let go
// with it); a bound l leaves at zero is lifted from a reused group. A
// bound this machine lacks is left off (Enforcements says why); the error
// names each bound that could not be set, and the command runs without it.
func (g *Group) Bound(l Limits) error { return g.bound(l) }

// JoinThread puts the calling thread, which must be locked to its
// goroutine and about to fork g's command, into g's cgroup v1 groups, and
// returns what moves it back to the groups it came from: call that right
// after the fork. The child is born in the groups of the thread that
// forks it, so neither it nor anything it forks runs outside them for an
// instant; the thread itself counts against the process bound until it
// goes back. Where g has no cgroup v1 group it does nothing. sandbox.Start
// calls it on its thread, through Policy.Join.
func (g *Group) JoinThread() (leave func(), err error) { return g.joinThread() }

// Hits reads what g's bounds refused since Bound.
func (g *Group) Hits() Hits { return g.hits() }

// way is how one bound reaches this process's commands; the bounds of one
// cgroup v1 hierarchy share it.
type way struct {
	v1 bool
	// base is the folder the commands' groups are made in: this process's
	// folder (Root) for cgroup v2, <mount><own cgroup>/yagent.<pid> for v1.
	base string
	// own is, for v1, this process's cgroup folder in the hierarchy: the
	// starting thread goes back to it after the fork.
	own string
	// enableOwn says the controller must first be enabled in the
	// cgroup.subtree_control of this process's own cgroup v2.
	enableOwn bool
	// ok says the bound can be set; why says why not.
	ok  bool
	why string
}
