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
// returns its listener. The caller has locked the thread and set
// no_new_privs; every process the thread starts after it inherits the
// filter.
func InstallFilter() (*os.File, error) {
	return installFilter()
}

// Supervise answers the listener's notifications with judge until every
// process under the filter has exited or ctx is done, then closes it.
// Execs pending when ctx ends fail with EACCES.
func Supervise(ctx context.Context, listener *os.File, judge Judge) error {
	return supervise(ctx, listener, judge)
}
