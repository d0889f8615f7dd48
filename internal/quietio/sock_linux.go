package quietio

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Unix socket the runtime polls is watched for input and for room to
// write alike (the net package registers every descriptor so), and the
// kernel tells the watcher of a socket's writer each time its peer reads:
// the room it made. Across the call channel every frame one process
// writes and the other reads wakes the writer's poller thread for
// nothing, once a frame on each side, a thread switch each.
//
// sock keeps the socket out of the runtime's poller. Two epoll instances
// of its own watch it, and the runtime polls them instead: in for input
// (and the peer's end), always; out for room, only while a write waits
// for it. The peer's reads reach neither.

// sock is a Unix socket read and written with raw system calls, waited on
// through its own epoll instances.
type sock struct {
	net.Conn // the conn it was made from, closed: its addresses
	fd       int
	in, out  *os.File
	inRC     syscall.RawConn
	outRC    syscall.RawConn

	wmu       sync.Mutex // held by a Write throughout
	closeOnce sync.Once
	closed    atomic.Bool // Close began: a failed wait is net.ErrClosed

	// spinWhile, when set, says whether a read that finds nothing spins
	// (SpinWhile); kick is an eventfd that in watches, written to wake a
	// read waiting in the poller.
	spinWhile func() bool
	kmu       sync.Mutex // held by Kick, and by Close as it closes kick
	kick      int
}

// newSock returns uc's socket as a sock, and closes uc; uc as it was, and
// an error, when it cannot.
func newSock(uc *net.UnixConn) (_ *sock, err error) {
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	if cerr := rc.Control(func(s uintptr) { fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	s := &sock{Conn: uc, fd: fd, kick: -1}
	defer func() {
		if err != nil {
			s.closeAll()
		}
	}()
	// The duplicate shares the socket's non-blocking mode, which net set.
	if s.in, s.inRC, err = watcher(fd, unix.EPOLLIN|unix.EPOLLRDHUP, "in"); err != nil {
		return nil, err
	}
	if s.out, s.outRC, err = watcher(fd, 0, "out"); err != nil {
		return nil, err
	}
	_ = uc.Close() // out of the runtime's poller; the duplicate holds the socket
	return s, nil
}

// watcher returns an epoll instance watching fd for events (none: armed
// later), polled by the runtime, and its RawConn.
func watcher(fd int, events uint32, name string) (*os.File, syscall.RawConn, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)}); err != nil {
		unix.Close(ep)
		return nil, nil, os.NewSyscallError("epoll_ctl", err)
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(ep), "epoll-"+name)
	// A file the runtime does not poll has no deadlines: waiting on it
	// would fail.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, rc, nil
}

// Read reads with a raw read; with nothing to read it waits until the
// epoll instance watching for input is ready.
func (s *sock) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.inRC.Read(func(uintptr) (done bool) {
		n, errno, done = readRaw(uintptr(s.fd), p)
		if !done && s.spinWhile != nil {
			n, errno, done = s.spin(p)
		}
		return done // not done: the poller waits on in, then calls again
	})
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// spinFor bounds how long a read spins before it waits in the poller:
// about what a short call through a plugin takes to be answered.
const spinFor = 150 * time.Microsecond

// SpinWhile makes a read that finds nothing read again, letting the
// processor's other goroutines and threads run between tries, for as long
// as while reports true and at most spinFor, before it waits in the
// poller. Call it before the first read.
//
// A read waiting in the poller is woken by the kernel when input comes:
// the writer's system call sends the sleeping thread's processor an
// interrupt, and the thread goes through the scheduler back to the
// goroutine, tens of microseconds on a virtual machine. A thread that is
// running, reading again, pays none of it. while should hold only while an
// answer is due soon and nothing else wants the processor.
func (s *sock) SpinWhile(while func() bool) error {
	k, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return os.NewSyscallError("eventfd", err)
	}
	// Edge-triggered: each write is an event, and the count is never read.
	if err := unix.EpollCtl(int(s.in.Fd()), unix.EPOLL_CTL_ADD, k, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(k)}); err != nil {
		unix.Close(k)
		return os.NewSyscallError("epoll_ctl", err)
	}
	s.kick, s.spinWhile = k, while
	return nil
}

// Kick wakes a read that waits in the poller, which then spins as
// SpinWhile says: the call of an answer to come has just been written.
func (s *sock) Kick() {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if s.kick >= 0 {
		one := uint64(1)
		_, _, _ = syscall.RawSyscall(syscall.SYS_WRITE, uintptr(s.kick), uintptr(unsafe.Pointer(&one)), 8)
	}
}

// spin reads again until something comes, while says to stop, spinFor
// passes, or the socket is closing; done is false when nothing came.
// Between two tries the processor's other goroutines run (Gosched), and so
// do the other threads this thread's processor has ready (sched_yield):
// the peer whose answer is awaited may have been woken on this processor,
// the writer's, and would otherwise wait for the spin to end.
func (s *sock) spin(p []byte) (n int, errno syscall.Errno, done bool) {
	start := time.Now()
	for s.spinWhile() && !s.closed.Load() {
		runtime.Gosched()
		_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		if n, errno, done = readRaw(uintptr(s.fd), p); done {
			return n, errno, true
		}
		if time.Since(start) > spinFor {
			break
		}
	}
	return 0, 0, false
}

// Write writes with raw writes; when the socket is full it arms the
// watch for room, waits until it is ready, and disarms it once done (or
// stopped by a deadline or Close). Writers take turns: one's disarming
// never meets another's wait.
func (s *sock) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var done int
	var failed error
	armed := false
	err := s.outRC.Read(func(uintptr) bool {
		for done < len(p) {
			r, e := sysWrite(uintptr(s.fd), p[done:])
			switch e {
			case 0:
				done += r
				continue
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				if !armed {
					// Armed, then tried again: room made in between
					// shows in one or the other.
					if err := s.watchOut(unix.EPOLLOUT); err != nil {
						failed = err
						return true
					}
					armed = true
					continue
				}
				return false // the poller waits on out, then calls again
			}
			failed = os.NewSyscallError("write", e)
			break
		}
		return true
	})
	if armed {
		_ = s.watchOut(0)
	}
	if err == nil {
		err = failed
	}
	if err != nil {
		return done, s.opError("write", err)
	}
	return done, nil
}

// watchOut sets what out watches the socket for.
func (s *sock) watchOut(events uint32) error {
	var err error
	if cerr := s.outRC.Control(func(ep uintptr) {
		err = unix.EpollCtl(int(ep), unix.EPOLL_CTL_MOD, s.fd, &unix.EpollEvent{Events: events, Fd: int32(s.fd)})
	}); cerr != nil {
		return cerr
	}
	if err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// opError names a failed read or write as the net package would, a wait
// that Close ended net.ErrClosed.
func (s *sock) opError(op string, err error) error {
	if s.closed.Load() && !errors.Is(err, os.ErrDeadlineExceeded) {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: "unix", Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
}

// Close wakes the reads and writes that wait, waits for them to return
// (each epoll file's Close does), then closes the socket: no raw call is
// left to meet its number reused.
func (s *sock) Close() error {
	err := s.opError("close", net.ErrClosed)
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		err = s.closeAll()
	})
	return err
}

func (s *sock) closeAll() error {
	if s.in != nil {
		s.in.Close()
	}
	if s.out != nil {
		s.out.Close()
	}
	s.kmu.Lock()
	if s.kick >= 0 {
		unix.Close(s.kick)
		s.kick = -1
	}
	s.kmu.Unlock()
	if err := unix.Close(s.fd); err != nil {
		return s.opError("close", os.NewSyscallError("close", err))
	}
	return nil
}

func (s *sock) SetDeadline(t time.Time) error {
	return errors.Join(s.in.SetReadDeadline(t), s.out.SetReadDeadline(t))
}

func (s *sock) SetReadDeadline(t time.Time) error  { return s.in.SetReadDeadline(t) }
func (s *sock) SetWriteDeadline(t time.Time) error { return s.out.SetReadDeadline(t) }
