package quietio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/proctest"
)

func TestMain(m *testing.M) {
	if os.Getenv("QUIETIO_ECHO_HELPER") != "" {
		echo()
		return
	}
	os.Exit(m.Run())
}

// echo answers each byte on stdin with one on stdout, 20 µs after it came
// (busy: a sleep would take longer), as a plugin answers a short call.
func echo() {
	b := make([]byte, 1)
	for {
		if _, err := os.Stdin.Read(b); err != nil {
			return
		}
		for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
		}
		if _, err := os.Stdout.Write(b); err != nil {
			return
		}
	}
}

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

// socketForChild returns a connected pair: this end as a conn, the other
// as a file for a child's stdin or stdout, to be closed once it started.
func socketForChild(t *testing.T) (net.Conn, *os.File) {
	t.Helper()
	a, b := socketPair(t)
	f, err := b.(*net.UnixConn).File()
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	return a, f
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
		a, f := socketForChild(t)
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
		before := proctest.ThreadSwitches(t)
		for range msgs - 1 {
			if _, err := r.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		n := proctest.ThreadSwitches(t) - before
		cmd.Wait()
		return n
	}
	var plain, quiet []int
	for range 2 {
		plain = append(plain, count(false))
		quiet = append(quiet, count(true))
	}
	p, q := slices.Min(plain), slices.Min(quiet)
	t.Logf("thread switches over %d reads: plain %v, raw %v", msgs-1, plain, quiet)
	// Plain reads wake the monitor once a message (and it sleeps again
	// after a tick or two); raw ones leave it asleep.
	if p-q < (msgs-1)/2 {
		t.Errorf("raw reads took %d thread switches against %d for plain ones: want at least one fewer every two reads", q, p)
	}
}

// TestConn_PeerReadsWakeNoThread: a peer reading what this end wrote wakes
// no thread of this process. The runtime's poller watches what it polls
// for room to write too, and the kernel tells the writer's watchers each
// time its peer reads; a Conn keeps its socket out of that poller. Counted
// in thread switches of this process, idle, while a child reads 40 bytes
// it was sent one at a time, 3 ms apart, with a read of this end waiting
// all along; plain and Conn taking turns.
func TestConn_PeerReadsWakeNoThread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const msgs = 40
	count := func(quiet bool) int {
		a, f := socketForChild(t)
		w := a
		if quiet {
			w = Conn(a)
		}
		for range msgs { // a message each: the kernel frees each when read
			if _, err := w.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		// A read waits on the same socket meanwhile, as the call
		// channel's reader always does: a thread sits in the poller.
		go w.Read(make([]byte, 1))
		cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt "+strconv.Itoa(msgs)+" ]; do sleep 0.003; dd bs=1 count=1 status=none >/dev/null; i=$((i+1)); done")
		cmd.Stdin = f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		before := proctest.ThreadSwitches(t)
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return proctest.ThreadSwitches(t) - before
	}
	var plain, quiet []int
	for range 2 {
		plain = append(plain, count(false))
		quiet = append(quiet, count(true))
	}
	p, q := slices.Min(plain), slices.Min(quiet)
	t.Logf("thread switches while the peer read %d bytes: plain %v, Conn %v", msgs, plain, quiet)
	if p-q < msgs/2 {
		t.Errorf("a Conn's writer took %d thread switches against %d for a plain one: want at least one fewer every two reads of its peer", q, p)
	}
}

// TestConn_NoWatchForRoomLeftArmed: after a write that waited for room, no
// epoll instance of this process is left watching the socket for room
// (each read of the peer would wake it), and none of the runtime's ever
// watches it at all.
func TestConn_NoWatchForRoomLeftArmed(t *testing.T) {
	a, b := socketPair(t)
	q := Conn(a)
	var st syscall.Stat_t
	if err := syscall.Fstat(q.(*sock).fd, &st); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("y"), 4<<20) // many times the buffer: the write waits
	go io.Copy(io.Discard, b)
	if _, err := q.Write(big); err != nil {
		t.Fatal(err)
	}
	for _, w := range epollWatches(t, st.Ino) {
		if w.events&syscall.EPOLLOUT != 0 {
			t.Errorf("an epoll instance (fd %s) watches the socket for room after the write: events %#x", w.epfd, w.events)
		}
	}
	if len(epollWatches(t, st.Ino)) != 2 {
		t.Errorf("the socket is watched by %d epoll instances, want the Conn's two", len(epollWatches(t, st.Ino)))
	}
}

type epollWatch struct {
	epfd   string
	events uint32
}

// epollWatches lists the epoll instances of this process that watch the
// file of inode ino, and for what (their fdinfo).
func epollWatches(t *testing.T, ino uint64) []epollWatch {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var out []epollWatch
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l != "anon_inode:[eventpoll]" {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			var tfd int
			var events uint32
			var data, pos string
			var wino uint64
			if n, _ := fmt.Sscanf(line, "tfd: %d events: %x data: %s pos:%s ino:%x", &tfd, &events, &data, &pos, &wino); n == 5 && wino == ino {
				out = append(out, epollWatch{epfd: fd.Name(), events: events})
			}
		}
	}
	return out
}

// TestSock_KickedReadSpinsForTheAnswer: a read waiting in the poller that
// Kick wakes, with SpinWhile holding, spins until the answer comes and the
// thread never sleeps for it; without the kick the answer wakes the
// thread. A child echoes each byte written 20 µs after it came, as a
// plugin answers a short call; counted in thread switches of this process over 40 round trips,
// kicked and not taking turns.
func TestSock_KickedReadSpinsForTheAnswer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's builds read through the syscall package; make test runs this package without it too")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const trips = 40
	count := func(kick bool) int {
		a, f := socketForChild(t)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "QUIETIO_ECHO_HELPER=1")
		cmd.Stdin, cmd.Stdout = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		c := Conn(a)
		defer func() { c.Close(); cmd.Wait() }()
		s, ok := c.(Spinner)
		if !ok {
			t.Fatalf("Conn gave a %T, not a Spinner", c)
		}
		var waiting atomic.Bool // an answer is due: the reader may spin
		if err := s.SpinWhile(waiting.Load); err != nil {
			t.Fatal(err)
		}
		got := make(chan error)
		go func() {
			b := make([]byte, 1)
			for {
				_, err := c.Read(b)
				waiting.Store(false)
				got <- err
				if err != nil {
					return
				}
			}
		}()
		trip := func() {
			waiting.Store(true)
			if _, err := c.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if kick {
				s.Kick()
			}
			if err := <-got; err != nil {
				t.Fatal(err)
			}
		}
		trip() // the child's start, which the count leaves out
		before := proctest.ThreadSwitches(t)
		for range trips {
			trip()
		}
		return proctest.ThreadSwitches(t) - before
	}
	const rounds = 3
	var waited, kicked []int
	for range rounds {
		waited = append(waited, count(false))
		kicked = append(kicked, count(true))
	}
	sum := func(v []int) (n int) {
		for _, x := range v {
			n += x
		}
		return n
	}
	w, k := sum(waited), sum(kicked)
	t.Logf("thread switches over %d round trips: waiting in the poller %v, kicked to spin %v", trips, waited, kicked)
	// An answer later than the spin's bound, or a hand-off between this
	// process's threads, still costs a switch: not every trip saves one.
	if w-k < rounds*trips/4 {
		t.Errorf("kicked reads took %d thread switches against %d waiting in the poller over %d round trips: want at least one fewer every four", k, w, rounds*trips)
	}
}

// TestSock_SpinEndsAfterItsBound: a read whose answer does not come spins
// for its bound only, then waits in the poller without using the
// processor, however long SpinWhile holds; Close ends it.
func TestSock_SpinEndsAfterItsBound(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a, b := socketPair(t)
	defer b.Close()
	c := Conn(a)
	s, ok := c.(Spinner)
	if !ok {
		t.Fatalf("Conn gave a %T, not a Spinner", c)
	}
	if err := s.SpinWhile(func() bool { return true }); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	s.Kick()
	before := cpu()
	// Nothing comes for 50 ms: a read spinning all along would use them.
	time.Sleep(50 * time.Millisecond)
	if used := cpu() - before; used > 25*time.Millisecond {
		t.Errorf("the process used %v of processor time over 50 ms with nothing to read: the read spun past its bound", used)
	}
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v, want net.ErrClosed", err)
	}
}
