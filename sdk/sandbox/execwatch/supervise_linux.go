//go:build linux && (amd64 || arm64)

package execwatch

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

func supervise(ctx context.Context, f *os.File, s Supervision) error {
	if f == nil {
		return errors.New("execwatch: no listener")
	}
	defer f.Close()
	if v, ok := primings.LoadAndDelete(f); ok {
		// The first exec is the primer's: receiving before it is answered
		// could judge it.
		select {
		case <-v.(*priming).done:
		case <-ctx.Done():
			// The primer still holds its copy: the first exec, should it
			// come, goes on; every later one fails once that copy closes.
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
	socks := &inflight{}
	defer func() {
		cancel()      // withdraw the asks still open: their execs fail now
		socks.abort() // and the connects still under way
		wg.Wait()     // every call received has its answer
	}()
	for {
		n, err := l.recv()
		switch {
		case err == nil:
			wg.Add(1)
			if c, errno, ok := refusedCall(&n.Data); ok {
				go refuse(l, &n, c, errno, s.Refused, wg.Done)
				continue
			}
			if call, ok := socketCall(&n.Data); ok {
				go answerSocket(jctx, l, &n, call, s, socks, wg.Done)
				continue
			}
			go answer(jctx, l, &n, s.Judge, wg.Done)
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
				errno := unix.EACCES
				if _, e, ok := refusedCall(&n.Data); ok {
					errno = e
				}
				l.fail(n.ID, errno)
			}
			return ctx.Err()
		default:
			return err
		}
	}
}

// identifiedHook runs once an exec has been read; tests kill its process
// there, as if it had died while being read.
var identifiedHook atomic.Pointer[func(Exec)]

// answer judges one exec, in its own goroutine so an ask blocks only it,
// and calls answered once the exec has its answer: when ctx ends that is at
// once, whether or not judge has returned.
func answer(ctx context.Context, l *listener, n *notification, judge Judge, answered func()) {
	var once sync.Once
	done := func() { once.Do(answered) }
	defer done()
	if judge == nil {
		// The filter hands no exec to this supervision.
		l.fail(n.ID, unix.EACCES)
		return
	}
	e, errno := identify(n)
	defer e.closeFiles()
	if h := identifiedHook.Load(); h != nil {
		(*h)(e)
	}
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

// refuse fails a call the filter refused with errno, once refused has been
// told of it, and then calls answered.
func refuse(l *listener, n *notification, c modeCall, errno unix.Errno, refused func(Refusal), answered func()) {
	defer answered()
	if refused != nil {
		r := Refusal{Pid: int(n.Pid), Call: c.name, Errno: errno}
		if c.mode >= 0 {
			r.Mode = uint32(n.Data.Args[c.mode]) & 0o7777
			r.Path = callPath(int(n.Pid), c, &n.Data)
		}
		// What was read is the process's only while the notification
		// stands; one that went (the process died, or a signal interrupted
		// the call, which comes again) is not told.
		if l.valid(n.ID) {
			refused(r)
		}
	}
	l.fail(n.ID, errno)
}
