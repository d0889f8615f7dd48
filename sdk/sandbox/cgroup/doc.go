// Package cgroup gives each command a cgroup v2 of its own, so that its
// whole tree, setsid and double-forked children included, is killed at
// once (cgroup.kill) while the call that started it is in flight, and let
// go, never killed later, once the call has returned.
//
// The groups of one process live under its own cgroup (found from
// /proc/self/mountinfo and /proc/self/cgroup: /sys/fs/cgroup/unified on
// hybrid hosts, /sys/fs/cgroup elsewhere), in yagent.<pid>/: live-N for a
// command in flight, bg-N for a background one. A live-N group released
// with processes still in it is marked so (an xattr; without user xattrs
// its processes move to kept-N). A dead plugin's host kills the unmarked
// live-N groups of its folder and nothing else. Where there is no writable, delegated cgroup v2, Root and
// New say why and commands run in their process groups only.
//
// A group also bounds its command's tree (Group.Bound: the most
// processes and threads, the most memory, swap included). Each bound goes
// through its cgroup v2 controller (pids.max; memory.max, with
// memory.swap.max 0) where the controller can be had for the commands'
// groups: enabled by this process's cgroup for its children, or enabled
// there on first use through cgroup.subtree_control (pids can be beside
// the process; memory, a domain controller, only at the root). Else it
// goes through the controller's cgroup v1 hierarchy, on hybrid hosts: a
// group of the command's own, named like its cgroup v2 one, under this
// process's cgroup there in yagent.<pid>/ (pids.max; memory.limit_in_bytes
// and memory.memsw.limit_in_bytes). The command is born in those too:
// CLONE_INTO_CGROUP covers cgroup v2 alone, so the thread that forks it
// joins them first (Group.JoinThread, writing itself, "0", into their
// tasks files) and leaves right after the fork; the child inherits the
// thread's groups, so nothing of its tree is ever outside them. A v1
// group is let go with its cgroup v2: removed, or, with processes left in
// it, swept once empty; its bounds hold what is left. Without either a
// bound is missing (Enforcements says why) and commands run without it.
// After the command Hits reads what the bounds refused: pids.events max,
// memory.events oom_kill (memory.oom_control in v1).
package cgroup
