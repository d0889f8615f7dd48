// Package execwatch judges every execve of a process tree: a seccomp filter
// that turns execve and execveat into user notifications (InstallFilter,
// run on the thread that starts the tree), and a supervisor (Supervise)
// that reads each one's program and argv from the process, identifies the
// program (through #! lines, the dynamic loader and execveat descriptors),
// asks a Judge and lets the exec go on or fails it with EACCES.
package execwatch
