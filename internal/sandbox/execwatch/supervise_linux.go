//go:build linux && (amd64 || arm64)

package execwatch

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// primers maps a listener InstallFilter returned to a channel closed once
// its primer is done (the entry goes with it). It is package state because the contract hands the
// caller a bare *os.File between InstallFilter and Supervise.
var primers sync.Map

// primeWait bounds how long the primer holds its thread in the kernel
// waiting for the first exec (the child's, a fork away; longer only when
// cmd.Start failed and no child will come). After it, a goroutine in the
// poller waits instead.
var primeWait = unix.Timespec{Sec: 10}

// primeOnce is in prime_$GOARCH.s.
func primeOnce(fd int32, ready *uint32, pfd *unix.PollFd, ts *unix.Timespec, notif *uint64, resp *uint64) uintptr

// The runtime's own syscall bracket (syscall.Syscall's): between the two
// the goroutine holds no P, so a stop-the-world neither waits for it nor
// stops it.
//
//go:linkname entersyscall runtime.entersyscall
func entersyscall()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// prime runs primeOnce as one system call: it waits, receives and answers
// with no P, whatever the scheduler is doing meanwhile.
//
//go:nosplit
func prime(fd int32, ready *uint32, pfd *unix.PollFd, ts *unix.Timespec, notif *uint64, resp *uint64) uintptr {
	entersyscall()
	r := primeOnce(fd, ready, pfd, ts, notif, resp)
	exitsyscall()
	return r
}

// startPrimer answers the first notification of a new filter: the exec of
// the command itself, by the child cmd.Start forks. It is the program the
// plugin chose (bash), not one the tree chose, so it is allowed unjudged;
// Supervise takes over every later exec.
//
// Go forks with vfork: the thread calling cmd.Start stays suspended, holding
// its P, until the child's exec goes on. A stop-the-world begun then waits
// for that P forever, and no goroutine can run to answer. So the answer
// comes from assembly already waiting in the kernel in the syscall state
// (no P needed to wake, receive and answer); startPrimer returns once it is
// there.
func startPrimer(f *os.File) {
	done := make(chan struct{})
	primers.Store(f, done)
	l, err := newListener(f)
	if err != nil {
		close(done)
		return
	}
	// The assembly gets a descriptor of its own: the caller may close f
	// (cmd.Start failed) while it waits, and the number could then name
	// another command's listener.
	fd := int32(-1)
	l.rc.Control(func(raw uintptr) {
		if n, err := unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0); err == nil {
			fd = int32(n)
		}
	})
	notif := make([]uint64, (l.recvN+7)/8)
	resp := make([]uint64, (l.sendN+7)/8)
	*(*response)(unsafe.Pointer(&resp[0])) = response{Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	pfd := &unix.PollFd{Fd: fd, Events: unix.POLLIN}
	ts := primeWait
	ready := new(uint32)
	go func() {
		// Done, the primer leaves nothing behind: Supervise finds no entry
		// and knows the first exec has been answered.
		defer primers.Delete(f)
		defer close(done)
		answered := false
		if fd >= 0 {
			answered = prime(fd, ready, pfd, &ts, &notif[0], &resp[0]) == 1
			unix.Close(int(fd))
		} else {
			atomic.StoreUint32(ready, 1)
		}
		if !answered {
			if n, err := l.recv(); err == nil {
				l.allow(n.ID)
			}
		}
	}()
	for atomic.LoadUint32(ready) == 0 {
		runtime.Gosched()
	}
}

func supervise(ctx context.Context, f *os.File, judge Judge) error {
	if f == nil {
		return errors.New("execwatch: no listener")
	}
	defer f.Close()
	if done, ok := primers.LoadAndDelete(f); ok {
		select {
		case <-done.(chan struct{}):
		case <-ctx.Done():
			f.SetReadDeadline(time.Now())
			<-done.(chan struct{})
			return ctx.Err()
		}
	}
	l, err := newListener(f)
	if err != nil {
		return err
	}
	// Judges get a context that ends with the supervision, so an ask for a
	// tree that has exited is withdrawn.
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	defer stop()

	var wg sync.WaitGroup
	defer func() {
		cancel()  // withdraw the asks still open: their execs fail now
		wg.Wait() // every exec received has its answer
	}()
	for {
		n, err := l.recv()
		switch {
		case err == nil:
			wg.Add(1)
			go answer(jctx, l, &n, judge, wg.Done)
			continue
		case errors.Is(err, errHangup):
			return ctx.Err() // nil unless ctx ended first
		case ctx.Err() != nil:
			// Execs received and not yet answered fail as their judges see
			// jctx end; those still queued fail here. Once the listener is
			// closed, the kernel fails any later exec with ENOSYS.
			for {
				n, err := l.recvNow()
				if err != nil {
					break
				}
				l.fail(n.ID, unix.EACCES)
			}
			return ctx.Err()
		default:
			return err
		}
	}
}

// answer judges one exec, in its own goroutine so an ask blocks only it,
// and calls answered once the exec has its answer: when ctx ends that is at
// once, whether or not judge has returned.
func answer(ctx context.Context, l *listener, n *notification, judge Judge, answered func()) {
	var once sync.Once
	done := func() { once.Do(answered) }
	defer done()
	e, errno := identify(n)
	defer e.closeFiles()
	// What was read is the process's only while the notification stands:
	// had it died, its pid could name another process by now.
	if !l.valid(n.ID) {
		return
	}
	if errno != 0 {
		l.fail(n.ID, errno)
		return
	}
	// The judge runs here; should ctx end first, the exec fails at once and
	// the verdict, when it comes, is dropped. Whichever claims the answer
	// first gives it.
	var claimed atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		if claimed.CompareAndSwap(false, true) {
			l.fail(n.ID, unix.EACCES)
			done()
		}
	})
	v := judge(ctx, e)
	stop()
	if !claimed.CompareAndSwap(false, true) {
		return
	}
	// A verdict that comes as ctx ends is too late.
	if v.Allow && ctx.Err() == nil {
		l.allow(n.ID)
		return
	}
	l.fail(n.ID, unix.EACCES)
}
