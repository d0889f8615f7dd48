//go:build linux && (amd64 || arm64)

package execwatch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The primer answers the first notification of every new filter: the exec
// of the command itself, by the child cmd.Start forks. It is the program
// the plugin chose (bash), not one the tree chose, so it is allowed
// unjudged; Supervise takes over every later exec.
//
// Go forks with vfork: the thread calling cmd.Start stays suspended,
// holding its P, until the child's exec goes on. A stop-the-world begun
// then waits for that P forever, and no goroutine could run to answer. So
// the answer comes from one goroutine that entered the kernel in the
// syscall state when the first filter was made and never comes back to
// Go (no P needed to wake, receive and answer): an assembly loop waiting
// on an epoll set that holds, one shot each, a copy of every listener not
// yet primed. Installing a filter costs an epoll_ctl, and the child's exec
// one wake of a thread already waiting.
type primer struct {
	epfd    int
	results *os.File // the loop's reports, 16 bytes each
	next    atomic.Uint32
	pending sync.Map // token → *priming
}

// priming is one listener waiting for its first exec's answer.
type priming struct {
	listener *os.File // the caller's, the key of primings
	fd       int      // the primer's own copy, in the epoll set
	done     chan struct{}
	misses   int // wakes with nothing answered, the tree still there
}

// maxMisses bounds the wakes a priming may have with nothing to answer
// (each time the first exec was interrupted before it was received).
// Past it, Supervise gets the listener and judges that exec as any other.
const maxMisses = 16

// primings maps a listener InstallFilter returned to its priming, until
// Supervise takes it or the priming ends. It is package state because the
// contract hands the caller a bare *os.File between InstallFilter and
// Supervise.
var primings sync.Map

// The loop's buffers, referenced from here so they live for good.
var primeBufs struct {
	ev     [2]uint64 // one epoll_event (12 bytes on amd64, 16 on arm64)
	notif  []uint64
	resp   []uint64
	report [2]uint64 // epoll data (fd | token<<32), answered (0 or 1)
}

// primeLoop is in prime_$GOARCH.s: it sets *ready and then, for good,
// waits for an event of epfd, receives that listener's notification,
// answers it to continue, and writes the event's data and whether it
// answered to out.
func primeLoop(epfd, out int32, ev, notif, resp, report *uint64, ready *uint32)

// The runtime's own syscall bracket (syscall.Syscall's): between the two
// the goroutine holds no P, so a stop-the-world neither waits for it nor
// stops it.
//
//go:linkname entersyscall runtime.entersyscall
func entersyscall()

// primeForever enters the syscall state and stays in it.
//
//go:nosplit
func primeForever(epfd, out int32, ready *uint32) {
	entersyscall()
	primeLoop(epfd, out, &primeBufs.ev[0], &primeBufs.notif[0], &primeBufs.resp[0], &primeBufs.report[0], ready)
}

var thePrimer = sync.OnceValues(newPrimer)

func newPrimer() (*primer, error) {
	sz, err := kernelSizes()
	if err != nil {
		return nil, err
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("execwatch: primer: %w", err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("execwatch: primer: %w", err)
	}
	// The read end is the dispatcher's, in the runtime's poller; the loop
	// writes to the other, blocking, 16 bytes at a time (atomic on a pipe).
	if err := unix.SetNonblock(p[0], true); err != nil {
		unix.Close(epfd)
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, fmt.Errorf("execwatch: primer: %w", err)
	}
	primeBufs.notif = make([]uint64, (max(int(sz.Notif), int(unsafe.Sizeof(notification{})))+7)/8)
	primeBufs.resp = make([]uint64, (max(int(sz.Resp), int(unsafe.Sizeof(response{})))+7)/8)
	*(*response)(unsafe.Pointer(&primeBufs.resp[0])) = response{Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	pr := &primer{epfd: epfd, results: os.NewFile(uintptr(p[0]), "execwatch-primer")}
	ready := new(uint32)
	go primeForever(int32(epfd), int32(p[1]), ready)
	// Once, for the life of the process: the loop must be in the kernel
	// before the first fork it may have to answer.
	for atomic.LoadUint32(ready) == 0 {
		runtime.Gosched()
	}
	go pr.dispatch()
	return pr, nil
}

// prime hands the primer a copy of listener f, before the fork whose exec
// it answers.
func (pr *primer) prime(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("execwatch: listener: %w", err)
	}
	// A copy of its own: the caller may close f (cmd.Start failed) while
	// the primer waits, and the number could then name another command's
	// listener.
	fd := -1
	var derr error
	rc.Control(func(raw uintptr) { fd, derr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) })
	if derr != nil {
		return fmt.Errorf("execwatch: listener: %w", derr)
	}
	token := pr.next.Add(1)
	pg := &priming{listener: f, fd: fd, done: make(chan struct{})}
	pr.pending.Store(token, pg)
	primings.Store(f, pg)
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(fd), Pad: int32(token)}
	if err := unix.EpollCtl(pr.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		pr.pending.Delete(token)
		primings.Delete(f)
		unix.Close(fd)
		return fmt.Errorf("execwatch: primer: %w", err)
	}
	return nil
}

// dispatch reads the loop's reports. A listener whose first exec has its
// answer, or whose tree is gone before it came, leaves the epoll set and
// its priming ends; one the loop woke for with nothing to answer (the
// notification vanished: its process was interrupted, or killed with the
// tree still there) waits again, up to maxMisses times.
func (pr *primer) dispatch() {
	var rec [16]byte
	for {
		if _, err := io.ReadFull(pr.results, rec[:]); err != nil {
			// The pipe never closes; a read error leaves every later
			// first exec unanswered, which their commands' timeouts end.
			panic(errors.Join(errors.New("execwatch: the primer's reports stopped"), err))
		}
		data := *(*uint64)(unsafe.Pointer(&rec[0]))
		answered := *(*uint64)(unsafe.Pointer(&rec[8])) == 1
		fd, token := int(int32(data)), uint32(data>>32)
		v, ok := pr.pending.Load(token)
		if !ok {
			continue
		}
		pg := v.(*priming)
		if !answered && !hungUp(fd) && pg.misses < maxMisses {
			pg.misses++
			ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(fd), Pad: int32(token)}
			if unix.EpollCtl(pr.epfd, unix.EPOLL_CTL_MOD, fd, &ev) == nil {
				continue
			}
		}
		if h := unprimeHook.Load(); h != nil {
			(*h)()
		}
		unix.EpollCtl(pr.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		unix.Close(fd)
		pr.pending.Delete(token)
		primings.CompareAndDelete(pg.listener, pg)
		close(pg.done)
	}
}

// unprimeHook runs as a priming ends; tests hold it to widen the moment
// between the primer's answer and the end of its watch.
var unprimeHook atomic.Pointer[func()]

// hungUp says whether no process is left under listener fd's filter.
func hungUp(fd int) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Ppoll(pfd, &unix.Timespec{}, nil)
		if err != unix.EINTR {
			return err != nil || pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
		}
	}
}

// startPrimer readies the answer to f's first exec.
func startPrimer(f *os.File) error {
	pr, err := thePrimer()
	if err != nil {
		return err
	}
	return pr.prime(f)
}
