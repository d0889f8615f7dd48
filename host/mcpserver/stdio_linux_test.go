package mcpserver

import (
	"os"
	"syscall"
	"testing"

	"github.com/yagent/yagent/internal/quietio"
)

// TestStdio_PipesReadRaw: a pipe on stdin or stdout is read and written
// with raw system calls (internal/quietio), a regular file as it is.
func TestStdio_PipesReadRaw(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd, err := syscall.Dup(int(r.Fd())) // blocking, as a process's stdin arrives
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.NewFile(uintptr(fd), "stdin")
	defer stdin.Close()
	in := stdio(stdin)
	defer in.Close()
	if !quietio.Quiet(in) {
		t.Errorf("stdio(a pipe) = %T, not read with raw system calls", in)
	}
	go func() { _, _ = w.Write([]byte("line\n")) }()
	buf := make([]byte, 8)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Errorf("Read = %q, %v", buf[:n], err)
	}
	reg, err := os.CreateTemp(t.TempDir(), "reg")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if got := stdio(reg); got != reg || quietio.Quiet(got) {
		t.Errorf("stdio(a regular file) = %T, want it as it is: a raw read of a blocking file would hold the processor", got)
	}
}
