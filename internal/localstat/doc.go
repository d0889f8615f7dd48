// Package localstat reads a path's metadata (lstat, readlink) with a raw
// system call where the path lies on a local file system, and through the
// os package elsewhere. The guard's component-wise resolution of every
// path a call names, and the session's temp folder, read through it.
//
// A system call made through the os package tells the scheduler that it
// may block (entersyscall). After an idle spell, with every processor
// parked, that wakes the runtime's monitor thread (sysmon), which then
// ticks every 20 µs for as long as the call runs: on a host serving one
// client's calls one after another, every call. A raw system call leaves
// it asleep, but a raw call that blocks holds its processor, and the
// runtime cannot hand the processor to another thread: on a network or
// FUSE mount that hangs, the whole host would hang with it. So the raw
// path is taken only where every mount on the way to the path is of a
// local file system (ext4, xfs, btrfs, tmpfs, overlay, ...), as the
// process's mount table (/proc/self/mountinfo) says. The table is read
// again after the kernel reports a mount or an unmount. See
// docs/ARCHITECTURE.md, "Wire".
//
// LstatNoLinks answers for a whole path with no symlink on it in one
// look, openat2 refusing symlinks: one resolution by the kernel for the
// walk's lstat of each component.
//
// The path's folders must be resolved already (no symlink on the way), as
// the guard's walk has them: the mounts checked are those of the path as
// written. Only Linux on amd64 and arm64 takes the raw path; elsewhere
// Lstat and Readlink are os.Lstat and os.Readlink.
package localstat
