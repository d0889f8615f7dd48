// Package execwatch judges every execve of a process tree: a seccomp filter
// that turns execve and execveat into user notifications (InstallFilter,
// run on the thread that starts the tree), and a supervisor (Supervise)
// that reads each one's program and argv from the process, identifies the
// program (through #! lines, the dynamic loader and execveat descriptors),
// asks a Judge and lets the exec go on or fails it with EACCES. The same
// filter refuses every mode with the setuid or setgid bit, and io_uring,
// whose requests it cannot see; the supervisor fails and reports those
// the filter hands it (Filter.Report). With Filter.Sockets it also hands
// every connect to the supervisor (Supervise), which reads the address
// once and connects the process's socket itself, taken with pidfd_getfd:
// a pathname unix socket only when the judge allows the file the name
// resolves to in the process's view, an abstract one through a Proxy
// inside the tree's Landlock domain; and it refuses unix datagram
// sockets, whose sends could name any socket path. A Matcher
// names the exec rule programs an exec may be (by name, file identity or a
// byte-identical copy), so only those cost the host a round trip.
//
// Identification reads through /proc/PID (memory, folder, descriptors and
// root, so a chrooted process is read inside its root and /proc/self means
// it, not the supervisor) and trusts what it read only once the kernel
// confirms the notification still stands. A program with no file to name
// (a memfd, a deleted file, an unreadable name or argument) is
// Unidentified, which Match treats as every rule program. The supervisor
// needs ptrace access to the tree: as root, or the same user where Yama
// allows it (a child reparented away from the plugin is then unreadable,
// so Unidentified).
package execwatch
