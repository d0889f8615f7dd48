//go:build unix

package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPollable_PipeIsPolled: a pipe in blocking mode, as a process's stdin
// arrives, comes back as a file the runtime polls (one with deadlines), so
// waiting for the client's next line parks a goroutine rather than a
// thread; a regular file comes back as it is.
func TestPollable_PipeIsPolled(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fd, err := syscall.Dup(int(r.Fd())) // Fd leaves the pipe blocking
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.NewFile(uintptr(fd), "stdin")
	if err := stdin.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("a blocking pipe has deadlines (%v): the test shows nothing", err)
	}
	f := pollable(stdin)
	defer f.Close()
	if err := f.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Errorf("the pipe after pollable has no deadlines (%v): its reads hold a thread", err)
	}
	go func() { _, _ = w.Write([]byte("line\n")) }()
	buf := make([]byte, 8)
	if n, err := f.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Errorf("read through the polled pipe: %q, %v", buf[:n], err)
	}

	reg, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if got := pollable(reg); got != reg {
		t.Error("a regular file was replaced")
	}
}
