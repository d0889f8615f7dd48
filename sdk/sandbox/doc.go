// Package sandbox starts a plugin's child processes inside kernel limits
// built for one call: Landlock rules on files (writes to the workspace, the
// approved paths, the temp folder and the toolchain caches; reads of the
// system, the workspace, read roots, approvals and the listed caches, with
// the rest of the home folder private), capabilities dropped to those a
// build needs, a private mount namespace that hides /run and binds the
// session's own temp folder over /tmp, /var/tmp and /dev/shm (Policy.Tmp,
// Policy.TmpOver: the machine's files and sockets there are out of
// reach), an optional empty network namespace, and a seccomp filter
// (package execwatch) that refuses every setuid or setgid mode, io_uring
// and unix datagram sockets, and whose listener lets the plugin judge
// every execve of the tree, make its connects to unix sockets MayConnect
// allows (abstract ones from the starting thread, inside the command's
// Landlock domain), and hear of those refusals.
//
// Probe says which of these layers this kernel has; Start applies those a
// Policy asks for and says which it applied, so a caller can refuse to run
// where a layer it requires is missing, or run as before and say so.
// Permits and Roots say what a Policy's file rules allow, to explain a
// refusal. On other systems (macOS, the BSDs) Probe reports every layer
// missing, naming the system, and Start starts the command as it is; a
// test build can play such a machine on Linux (testLayersEnv).
//
// On Linux there is no helper process: Start applies the layers to a
// goroutine locked to a thread that is never reused (Go ends it when the
// goroutine returns) and starts the command from it, so the command
// inherits them. What can be kept across commands is: the machine's part
// of the rules, each distinct kernel ruleset, and the mount and network
// namespaces, which each command's thread enters with setns (a mount
// namespace per session temp folder, the 16 most recently used kept;
// ForgetTmp lets a session's go).
//
// The bounds of a command's tree (Policy.Pids and MemoryMB: processes and
// threads, memory) are its cgroup's (package cgroup), which the caller
// makes; Start only runs Policy.Join on that thread first, before any
// layer confines it, so that a command bounded through cgroup v1 groups is
// born in them, and the thread leaves them right after the fork.
// Policy.TmpSizeMB carries the size of the session temp folder, and
// Policy.UnixSockets the sockets the admin exposes to commands (the
// profile's sandbox.unix_sockets, which MayConnect lets them reach).
package sandbox
