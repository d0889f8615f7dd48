//go:build linux && (amd64 || arm64)

package execwatch

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structs (linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type notification struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type response struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

type notifSizes struct {
	Notif uint16
	Resp  uint16
	Data  uint16
}

var (
	errHangup = errors.New("execwatch: every process under the filter has exited")

	sizesOnce sync.Once
	sizes     notifSizes
	sizesErr  error
)

// kernelSizes asks the kernel how large its notification structs are: a
// newer kernel may have grown them, and RECV writes its own size.
func kernelSizes() (notifSizes, error) {
	sizesOnce.Do(func() {
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sizes)))
		if errno != 0 {
			sizesErr = fmt.Errorf("execwatch: seccomp notification sizes: %w", errno)
		}
	})
	return sizes, sizesErr
}

// listener reads and answers the notifications of one filter.
type listener struct {
	f     *os.File
	rc    syscall.RawConn
	recvN int
	sendN int
}

func newListener(f *os.File) (*listener, error) {
	sz, err := kernelSizes()
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("execwatch: listener: %w", err)
	}
	l := &listener{f: f, rc: rc, recvN: int(sz.Notif), sendN: int(sz.Resp)}
	l.recvN = max(l.recvN, int(unsafe.Sizeof(notification{})))
	l.sendN = max(l.sendN, int(unsafe.Sizeof(response{})))
	return l, nil
}

// recv waits, in the runtime's poller, for the next notification. It
// returns errHangup once no process is left under the filter, and the
// file's error when the listener is closed or its read deadline passes.
func (l *listener) recv() (notification, error) {
	var n notification
	var st recvState
	err := l.rc.Read(func(fd uintptr) bool {
		n, st = l.try(fd)
		return st.kind != recvEmpty
	})
	if err != nil {
		return n, err
	}
	return n, st.err()
}

// recvNow takes a notification already queued, without waiting; errEmpty
// when there is none.
func (l *listener) recvNow() (notification, error) {
	var n notification
	var st recvState
	if err := l.rc.Control(func(fd uintptr) { n, st = l.try(fd) }); err != nil {
		return n, err
	}
	return n, st.err()
}

// recvState is what one receive attempt found.
type recvState struct {
	kind int
	io   error
}

const (
	recvGot = iota
	recvEmpty
	recvHangup
	recvFailed
)

var errEmpty = errors.New("execwatch: no notification queued")

func (s recvState) err() error {
	switch s.kind {
	case recvGot:
		return nil
	case recvEmpty:
		return errEmpty
	case recvHangup:
		return errHangup
	}
	return fmt.Errorf("execwatch: receive: %w", s.io)
}

// try receives one notification if poll says one is queued. RECV itself
// blocks whatever the descriptor's flags, so it runs only after POLLIN.
// None of the listener's calls can block, so they go raw, without the
// runtime's syscall bookkeeping.
func (l *listener) try(fd uintptr) (notification, recvState) {
	buf := make([]uint64, (l.recvN+7)/8) // 8-aligned for the struct's fields
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		var zero unix.Timespec
		if _, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd[0])), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0); errno != 0 {
			if errno == unix.EINTR {
				continue
			}
			return notification{}, recvState{kind: recvFailed, io: errno}
		}
		switch {
		case pfd[0].Revents&unix.POLLIN != 0:
			clear(buf)
			_, _, errno := unix.RawSyscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&buf[0])))
			switch errno {
			case 0:
				return *(*notification)(unsafe.Pointer(&buf[0])), recvState{kind: recvGot}
			case unix.EINTR, unix.ENOENT:
				// ENOENT: the process was killed between poll and receive;
				// its notification is gone.
				continue
			}
			return notification{}, recvState{kind: recvFailed, io: errno}
		case pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0:
			return notification{}, recvState{kind: recvHangup}
		}
		return notification{}, recvState{kind: recvEmpty}
	}
}

// valid says whether notification id still stands: the process has not
// died or been interrupted, so what was read from it is its own.
func (l *listener) valid(id uint64) bool {
	ok := false
	l.rc.Control(func(fd uintptr) {
		_, _, errno := unix.RawSyscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
		ok = errno == 0
	})
	return ok
}

// allow lets the exec go on.
func (l *listener) allow(id uint64) {
	l.send(response{ID: id, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
}

// fail makes the exec return errno.
func (l *listener) fail(id uint64, errno unix.Errno) {
	l.send(response{ID: id, Error: -int32(errno)})
}

// send answers; an error only means the process is gone.
func (l *listener) send(r response) {
	buf := make([]uint64, (l.sendN+7)/8)
	*(*response)(unsafe.Pointer(&buf[0])) = r
	l.rc.Control(func(fd uintptr) {
		for {
			_, _, errno := unix.RawSyscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&buf[0])))
			if errno != unix.EINTR {
				return
			}
		}
	})
}
