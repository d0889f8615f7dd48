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
	defer stdin.Close()
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

// TestPollable_OwnsItsDescriptor: the file pollable returns holds a
// descriptor of its own. Sharing f's, the two files would each close it,
// one of them from the garbage collector at any moment, closing whatever
// the number had since been given to: a listener, a connection, a plugin's
// pipe.
func TestPollable_OwnsItsDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := pollable(r)
	if p == r {
		t.Fatal("a pipe came back as it is: the test shows nothing")
	}
	if p.Fd() == r.Fd() {
		t.Errorf("the polled file shares descriptor %d with the file it came from", p.Fd())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := r.Read(buf); err != nil {
		t.Errorf("closing the polled file closed the one it came from: %v", err)
	}
}
