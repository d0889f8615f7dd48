package execwatch

import (
	"context"
	"os"
)

// Exec is one execve or execveat of the tree, as the supervisor read it.
type Exec struct {
	// Pid is the process that calls exec.
	Pid int
	// Path is the absolute path of the file the kernel is asked to run
	// (relative names resolved against the process's folder, execveat's
	// descriptor followed); for the dynamic loader run as a program, the
	// program it loads.
	Path string
	// Argv are the arguments, argv[0] first.
	Argv []string
	// Interpreters are the files the #! lines of Path name, first the one
	// of Path itself.
	Interpreters []string
	// Loader says Path was run through the dynamic loader (ld-linux.so PROG).
	Loader bool
	// Terminal says the process's stdin is a terminal.
	Terminal bool
	// Unidentified says why the program cannot be identified (a memfd, a
	// deleted file, an unreadable argument); "" when it was. Such an exec
	// is treated like the strictest rule.
	Unidentified string
	// Truncated says Argv holds only what fitted in its bounds (8192
	// entries, 1 MiB in all).
	Truncated bool

	// files are the program files, open while the exec is judged: Path's
	// (or the loader's and its program's) and each interpreter's.
	files []*os.File
}

func (e *Exec) closeFiles() {
	for _, f := range e.files {
		f.Close()
	}
}

// Verdict is a Judge's answer.
type Verdict struct {
	// Allow lets the exec go on; otherwise it fails with EACCES.
	Allow bool
}

// Judge decides one exec. It may block (an ask); the exec waits.
type Judge func(ctx context.Context, e Exec) Verdict

// InstallFilter installs the exec filter on the calling OS thread and
// returns its listener. The caller has locked the thread for good (see
// RunLocked: not the main thread, which Go never ends, or the listener
// would never report the tree's exit) and set no_new_privs; every process
// the thread starts after it inherits the filter. The thread must then
// start the command (cmd.Start): its exec, the first notification, is
// allowed unjudged by the time cmd.Start returns, and Supervise judges
// every later one. Only the native ABI's execve and execveat are judged;
// the x32 and 32-bit compat ABIs' execs fail with EACCES (their pointers
// cannot be read here), so a 32-bit program under the filter cannot exec.
func InstallFilter() (*os.File, error) {
	return installFilter()
}

// Supervise answers the listener's notifications with judge until every
// process under the filter has exited (it returns nil, or ctx's error if
// ctx ended first) or ctx is done (it returns ctx's error), then closes it. Each exec is judged in its own
// goroutine, so an ask blocks only that exec; judge's context ends with
// the supervision. Execs pending when ctx ends fail with EACCES, as does
// one whose verdict comes after; once the listener is closed the kernel
// fails any later exec with ENOSYS. An exec of a file that does not exist
// (ENOENT, ENOTDIR, ENAMETOOLONG, ELOOP) fails with that error unjudged: a
// shell's or execvp's PATH search costs no judgment. Allowing continues
// the exec: a multithreaded process can change its argument memory after
// the check (and the dynamic loader opens its program after the exec), a
// stated limit of exec rules; Landlock is the wall for files.
func Supervise(ctx context.Context, listener *os.File, judge Judge) error {
	return supervise(ctx, listener, judge)
}
