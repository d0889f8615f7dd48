//go:build unix

package mcpserver

import (
	"io"
	"os"
	"syscall"

	"github.com/yagent/yagent/internal/quietio"
)

// stdio returns f polled (pollable) and, where it is, read and written
// with raw system calls (internal/quietio): a call's line in and answer out
// wake no thread but the front's.
func stdio(f *os.File) io.ReadWriteCloser {
	if p := pollable(f); p != f {
		return quietio.File(p)
	}
	return f
}

// pollable returns a file the Go runtime polls for the pipe or socket f: a
// duplicate of f's descriptor, put in non-blocking mode, so that a read
// waiting for the client's next line parks its goroutine instead of holding
// a thread in read(2), which the runtime then takes the processor back from
// and hands to a thread it has to wake. A terminal or a regular file is
// returned as it is (a terminal's mode is shared with the shell that
// outlives us).
//
// The new file owns its own descriptor: two *os.File over one descriptor
// would each close it, the second time (from the garbage collector, at any
// moment) closing whatever the number had been given to since.
func pollable(f *os.File) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	var fd int
	c, err := f.SyscallConn()
	if err != nil {
		return f
	}
	if cerr := c.Control(func(old uintptr) {
		// Under ForkLock, so no command started meanwhile inherits it.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if fd, err = syscall.Dup(int(old)); err == nil {
			syscall.CloseOnExec(fd)
		}
	}); cerr != nil || err != nil {
		return f
	}
	// Non-blocking is the open file's mode, shared with f: nothing reads
	// through f once its duplicate serves.
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f
	}
	return os.NewFile(uintptr(fd), f.Name()) // nil only for a negative fd
}
