//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockCall is a socket call a Sockets filter hands the supervisor.
type sockCall int

const (
	callConnect sockCall = iota + 1
	callSocket
	callSocketpair
)

// socketCall says which socket call notification data d is; the 32-bit
// ABIs' are refused by the filter itself and never come here.
func socketCall(d *seccompData) (sockCall, bool) {
	if d.Arch != nativeArch {
		return 0, false
	}
	nr := uint32(d.Nr) &^ x32Bit
	switch nr {
	case nativeSockets.connect:
		return callConnect, true
	case nativeSockets.socket:
		return callSocket, true
	case nativeSockets.socketpair:
		return callSocketpair, true
	}
	return 0, false
}

// maxSockaddr is sizeof(struct sockaddr_storage): the kernel refuses a
// longer address with EINVAL before it looks at it.
const maxSockaddr = 128

// inflight are the sockets the supervisor is connecting for the tree; once
// the tree is gone, abort ends the connects still waiting (a TCP handshake
// can wait minutes), so the supervision need not wait for them.
type inflight struct {
	mu    sync.Mutex
	socks map[int]bool
	done  bool
}

// add records sock; false once the supervision is ending.
func (f *inflight) add(sock int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return false
	}
	if f.socks == nil {
		f.socks = map[int]bool{}
	}
	f.socks[sock] = true
	return true
}

func (f *inflight) remove(sock int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.socks, sock)
}

func (f *inflight) abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	for sock := range f.socks {
		unix.Shutdown(sock, unix.SHUT_RDWR)
	}
}

// answerSocket answers a socket call of a Sockets filter, then calls
// answered: a unix datagram socket fails with EACCES, a connect is made
// by the supervisor (or its proxy) with the address it read, as s allows.
func answerSocket(ctx context.Context, l *listener, n *notification, call sockCall, s Supervision, socks *inflight, answered func()) {
	defer answered()
	if call != callConnect {
		// The filter hands over only unix sockets of a type that can send
		// to an address.
		name := "socket"
		if call == callSocketpair {
			name = "socketpair"
		}
		if s.Refused != nil && l.valid(n.ID) {
			s.Refused(Refusal{Pid: int(n.Pid), Call: name, Errno: unix.EACCES})
		}
		l.fail(n.ID, unix.EACCES)
		return
	}
	if s.Proxy != nil && int(n.Pid) == s.Proxy.Tid() {
		// The proxy's own connect: its address sits in the plugin's
		// memory, which no process of the tree can reach.
		l.allow(n.ID)
		return
	}
	errno, refusal := connectFor(ctx, l, n, s, socks)
	if refusal != nil && s.Refused != nil && l.valid(n.ID) {
		s.Refused(*refusal)
	}
	l.fail(n.ID, errno) // 0: the connect succeeded
}

// connectFor makes the connect of notification n on the process's socket,
// with the address read once from its memory: what was judged is what is
// connected, whatever its threads write meanwhile.
func connectFor(ctx context.Context, l *listener, n *notification, s Supervision, socks *inflight) (unix.Errno, *Refusal) {
	pid := int(n.Pid)
	fd := int(int32(n.Data.Args[0]))
	ptr, size := n.Data.Args[1], uint32(n.Data.Args[2])
	if size > maxSockaddr {
		return unix.EINVAL, nil
	}
	addr := make([]byte, size)
	if size > 0 {
		if errno := readMemory(pid, ptr, addr); errno != 0 {
			return errno, nil
		}
	}
	sock, errno := takeFD(pid, fd)
	if errno != 0 {
		return errno, nil
	}
	defer unix.Close(sock)
	// What was read is the process's only while the notification stands.
	if !l.valid(n.ID) {
		return unix.EINTR, nil
	}
	if !socks.add(sock) {
		return unix.EINTR, nil
	}
	defer socks.remove(sock)
	if size <= 2 || *(*uint16)(unsafe.Pointer(&addr[0])) != unix.AF_UNIX {
		// Another family (its network namespace is the socket's), or an
		// unnamed unix address, which the kernel refuses.
		return rawConnect(sock, addr), nil
	}
	if addr[2] == 0 {
		name := "@" + string(bytes.TrimRight(addr[3:], "\x00"))
		var errno unix.Errno
		if s.Proxy != nil {
			errno = s.Proxy.Connect(sock, addr)
		} else {
			errno = rawConnect(sock, addr)
		}
		if errno == unix.EPERM {
			// Landlock's scope: the socket is not the tree's own.
			return errno, &Refusal{Pid: pid, Call: "connect", Path: name, Errno: errno}
		}
		return errno, nil
	}
	named := string(addr[2:])
	if i := strings.IndexByte(named, 0); i >= 0 {
		named = named[:i]
	}
	return connectPath(ctx, pid, sock, named, s)
}

// connectPath connects sock to the socket file named resolves to in
// process pid's view, when s.Connect allows that file.
func connectPath(ctx context.Context, pid, sock int, named string, s Supervision) (unix.Errno, *Refusal) {
	if named[0] == '/' && slices.Contains(s.Exposed, filepath.Clean(named)) {
		return connectExposed(ctx, pid, sock, named, filepath.Clean(named), s)
	}
	p, err := openProcess(pid)
	if err != nil {
		return unix.ESRCH, nil
	}
	defer p.close()
	abs := named
	if named[0] != '/' {
		base, o := p.base(unix.AT_FDCWD)
		if o != nil {
			if o.errno != 0 {
				return o.errno, nil
			}
			return unix.EACCES, &Refusal{Pid: pid, Call: "connect", Path: named, Errno: unix.EACCES}
		}
		abs = base + "/" + named
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	file, err := unix.Openat2(p.rootFD, abs, &how)
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) && errno != unix.EXDEV {
			return errno, nil
		}
		// A /proc link on the way: not a name this judges.
		return unix.EACCES, &Refusal{Pid: pid, Call: "connect", Path: abs, Errno: unix.EACCES}
	}
	defer unix.Close(file)
	var st unix.Stat_t
	if err := unix.Fstat(file, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unix.ECONNREFUSED, nil // as the kernel answers for a file that is no socket
	}
	at := "/proc/self/fd/" + strconv.Itoa(file)
	target, err := os.Readlink(at)
	if err != nil || !strings.HasPrefix(target, "/") {
		return unix.EACCES, &Refusal{Pid: pid, Call: "connect", Path: abs, Errno: unix.EACCES}
	}
	c := Connect{Pid: pid, Named: named, Path: p.inside(target), Dev: uint64(st.Dev), Ino: st.Ino}
	// A socket file with another name elsewhere is a hard link a command
	// made of another program's socket into a folder it may use: no
	// server binds a socket to two names.
	if st.Nlink != 1 || s.Connect == nil || !s.Connect(ctx, c).Allow {
		return unix.EACCES, &Refusal{Pid: pid, Call: "connect", Path: c.Path, Errno: unix.EACCES}
	}
	// The file judged, through the descriptor that holds it: a rename or
	// a link put in its place since cannot redirect the connect.
	return rawConnect(sock, sockaddrUnix(at)), nil
}

// connectExposed connects sock to the exposed socket file at path (one of
// s.Exposed) as the supervisor's view has it, no link followed, when
// s.Connect allows it.
func connectExposed(ctx context.Context, pid, sock int, named, path string, s Supervision) (unix.Errno, *Refusal) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	file, err := unix.Openat2(unix.AT_FDCWD, path, &how)
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) && errno != unix.ELOOP {
			return errno, nil
		}
		return unix.EACCES, &Refusal{Pid: pid, Call: "connect", Path: path, Errno: unix.EACCES}
	}
	defer unix.Close(file)
	var st unix.Stat_t
	if err := unix.Fstat(file, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unix.ECONNREFUSED, nil
	}
	c := Connect{Pid: pid, Named: named, Path: path, Dev: uint64(st.Dev), Ino: st.Ino}
	if st.Nlink != 1 || s.Connect == nil || !s.Connect(ctx, c).Allow {
		return unix.EACCES, &Refusal{Pid: pid, Call: "connect", Path: path, Errno: unix.EACCES}
	}
	return rawConnect(sock, sockaddrUnix("/proc/self/fd/"+strconv.Itoa(file))), nil
}

// sockaddrUnix is the struct sockaddr_un of a pathname.
func sockaddrUnix(path string) []byte {
	b := make([]byte, 2+len(path)+1)
	*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_UNIX
	copy(b[2:], path)
	return b
}

// rawConnect connects sock to the raw address addr; it may block as the
// process's own connect would (the socket's flags are the process's).
func rawConnect(sock int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(addr)))
	if errno == unix.EINTR {
		// Interrupted here, not in the process: the connect goes on in the
		// kernel; wait for its outcome as a non-blocking caller would.
		return connectOutcome(sock)
	}
	return errno
}

// connectOutcome waits for a connect already under way on sock and
// returns how it ended.
func connectOutcome(sock int) unix.Errno {
	fds := []unix.PollFd{{Fd: int32(sock), Events: unix.POLLOUT}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			break
		}
	}
	v, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return err.(unix.Errno)
	}
	return unix.Errno(v)
}

// readMemory fills buf from process pid's memory at addr, in one
// process_vm_readv; EFAULT when it cannot, as the kernel would answer for
// an unmapped address.
func readMemory(pid int, addr uint64, buf []byte) unix.Errno {
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	switch {
	case err == unix.ESRCH:
		return unix.ESRCH
	case err != nil || n != len(buf):
		return unix.EFAULT
	}
	return 0
}

// takeFD duplicates descriptor fd of thread pid's process into the
// supervisor; EBADF when it has none.
func takeFD(pid, fd int) (int, unix.Errno) {
	// The thread itself (Linux 6.9): its descriptor table is the
	// process's, and it is there even when the leader has exited.
	pidfd, err := unix.PidfdOpen(pid, unix.PIDFD_THREAD)
	if err == unix.EINVAL {
		pidfd, err = unix.PidfdOpen(pid, 0)
	}
	if err == unix.EINVAL {
		// pid is a thread other than the leader: open its process.
		if tgid := threadGroup(pid); tgid > 0 {
			pidfd, err = unix.PidfdOpen(tgid, 0)
		}
	}
	if err != nil {
		return -1, unix.ESRCH
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		if err == unix.EBADF {
			return -1, unix.EBADF
		}
		return -1, unix.ESRCH
	}
	return sock, 0
}

// threadGroup is the process of thread tid, 0 when it cannot be read.
func threadGroup(tid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// ThreadProxy is a Proxy served by the thread that made it: the thread
// that installed the filter and started the command, so it is in the
// command's Landlock domain and namespaces.
type ThreadProxy struct {
	tid   int
	calls chan proxyCall
	gone  chan struct{}
}

type proxyCall struct {
	sock int
	addr []byte
	done chan syscall.Errno
}

// NewThreadProxy makes a proxy for the calling thread, which must then
// call Serve.
func NewThreadProxy() *ThreadProxy {
	return &ThreadProxy{tid: unix.Gettid(), calls: make(chan proxyCall), gone: make(chan struct{})}
}

// Tid is the serving thread's id.
func (p *ThreadProxy) Tid() int { return p.tid }

// Connect has the serving thread connect sock to addr; once it has stopped
// serving, the connect is refused (ECONNREFUSED).
func (p *ThreadProxy) Connect(sock int, addr []byte) syscall.Errno {
	c := proxyCall{sock, addr, make(chan syscall.Errno, 1)}
	select {
	case p.calls <- c:
		return <-c.done
	case <-p.gone:
		return unix.ECONNREFUSED
	}
}

// Serve makes the connects asked of p on the calling thread, the one that
// made it, until done is closed.
func (p *ThreadProxy) Serve(done <-chan struct{}) {
	defer close(p.gone)
	for {
		select {
		case c := <-p.calls:
			c.done <- rawConnect(c.sock, c.addr)
		case <-done:
			return
		}
	}
}
