//go:build unix

package remote

import (
	"os"
	"syscall"
	"testing"
)

// shutdown ends the socket f is a descriptor of, for every descriptor of
// it in the process, as the exit of a plugin ends its end.
func shutdown(t *testing.T, f *os.File) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
}
