package quietio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// socketPair returns two connected Unix sockets as net.FileConn makes them
// (non-blocking, in the poller), as the call channel's are.
func socketPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "end")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return conn(fds[0]), conn(fds[1])
}

func TestConn_ReadsAndWritesWhatTheSocketCarries(t *testing.T) {
	a, b := socketPair(t)
	qa, qb := Conn(a), Conn(b)
	if !Quiet(qa) || !Quiet(qb) {
		t.Fatalf("Conn of a Unix socket: %T, %T, want the raw reader", qa, qb)
	}
	// 4 MiB is many times a socket's buffer: the writer waits in the
	// poller for the reader to drain it.
	want := bytes.Repeat([]byte("0123456789abcdef"), 256<<10)
	var wg sync.WaitGroup
	wg.Go(func() {
		if n, err := qa.Write(want); n != len(want) || err != nil {
			t.Errorf("Write = %d, %v; want %d, nil", n, err, len(want))
		}
		qa.Close()
	})
	got, err := io.ReadAll(qb)
	wg.Wait()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (err %v), want the %d written", len(got), err, len(want))
	}
	if n, err := qb.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after the peer closed = %d, %v; want 0, EOF", n, err)
	}
}

func TestConn_DeadlinesAndCloseUnblock(t *testing.T) {
	a, _ := socketPair(t)
	q := Conn(a)
	if err := q.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var ne net.Error
	if _, err := q.Read(make([]byte, 8)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Read past its deadline: %v, want a timeout", err)
	}
	if err := q.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := q.Read(make([]byte, 8)); done <- err }()
	q.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read when the conn closed: %v, want net.ErrClosed", err)
	}
}

func TestConn_WriteToAClosedPeer(t *testing.T) {
	a, b := socketPair(t)
	q := Conn(a)
	b.Close()
	var err error
	for range 100 { // the first writes may land in the buffer before the reset
		if _, err = q.Write([]byte("x")); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("Write to a closed peer: %v, want EPIPE or ECONNRESET", err)
	}
}

func TestConn_LeavesOthersAlone(t *testing.T) {
	p, _ := net.Pipe()
	defer p.Close()
	if q := Conn(p); q != p || Quiet(q) {
		t.Errorf("Conn(net.Pipe()) = %T, want it returned as it is", q)
	}
}

func TestFile_PipeReadAndWritten(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// os.Pipe's ends are non-blocking and polled, as the stdio front's
	// duplicates are.
	qr, qw := File(r), File(w)
	defer qr.Close()
	if !Quiet(qr) || !Quiet(qw) {
		t.Fatalf("File of a pipe: %T, %T, want the raw reader", qr, qw)
	}
	want := strings.Repeat("line\n", 100_000)
	go func() { io.WriteString(qw, want); qw.Close() }()
	got, err := io.ReadAll(qr)
	if err != nil || string(got) != want {
		t.Fatalf("read %d bytes (err %v), want %d", len(got), err, len(want))
	}
}

// TestConn_WakesNoThreadOnARead: the point of the package. With one
// processor, each message that arrives after an idle spell is read by the
// thread that waited in the poller; os and net's read then wakes the
// runtime's monitor thread (its first system call with every processor
// idle), a raw read does not. Counted in thread switches of this process
// over 40 messages a child writes 3 ms apart (no timer of ours, which
// would wake the monitor itself), plain and raw taking turns.
func TestConn_WakesNoThreadOnARead(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's builds read through the syscall package; make test runs this package without it too")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const msgs = 40
	count := func(quiet bool) int {
		a, b := socketPair(t)
		f, err := b.(*net.UnixConn).File()
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt "+strconv.Itoa(msgs)+" ]; do sleep 0.003; printf x; i=$((i+1)); done")
		cmd.Stdout = f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := a
		if quiet {
			r = Conn(a)
		}
		buf := make([]byte, 1)
		// The first message comes after the start of sh, whose wait the
		// count leaves out.
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
		before := switches(t)
		for range msgs - 1 {
			if _, err := r.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		n := switches(t) - before
		cmd.Wait()
		return n
	}
	var plain, quiet []int
	for range 2 {
		plain = append(plain, count(false))
		quiet = append(quiet, count(true))
	}
	p, q := minOf(plain), minOf(quiet)
	t.Logf("thread switches over %d reads: plain %v, raw %v", msgs-1, plain, quiet)
	// Plain reads wake the monitor once a message (and it sleeps again
	// after a tick or two); raw ones leave it asleep.
	if p-q < (msgs-1)/2 {
		t.Errorf("raw reads took %d thread switches against %d for plain ones: want at least one fewer every two reads", q, p)
	}
}

func minOf(v []int) int {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

// switches sums the voluntary context switches of this process's threads.
func switches(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	total := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				total += n
			}
		}
	}
	return total
}
