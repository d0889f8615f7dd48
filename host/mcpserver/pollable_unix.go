//go:build unix

package mcpserver

import (
	"os"
	"syscall"
)

// pollable returns f as a file the Go runtime polls: a pipe or socket put
// in non-blocking mode, so that a read waiting for the client's next line
// parks its goroutine instead of holding a thread in read(2), which the
// runtime then takes the processor back from and hands to a thread it has
// to wake. A terminal or a regular file is returned as it is (a terminal's
// mode is shared with the shell that outlives us).
func pollable(f *os.File) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	fd := int(f.Fd()) // leaves f in blocking mode; the new file takes over
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	if p := os.NewFile(uintptr(fd), f.Name()); p != nil {
		return p
	}
	return f
}
