//go:build linux && (amd64 || arm64)

package execwatch

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Classic BPF opcodes the filter uses.
const (
	bpfLdAbsW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJsetK   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfJgtK    = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
	bpfRetK    = unix.BPF_RET | unix.BPF_K
	bpfAluAndK = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K

	offNr   = 0  // seccomp_data.nr
	offArch = 4  // seccomp_data.arch
	offArgs = 16 // seccomp_data.args
)

// program assembles a BPF program whose jumps name labels, resolved once
// every instruction is in place (hand-counted skips go wrong silently).
type program struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string // instruction → (true label, false label)
	labels map[string]int
	nodes  int // labels search made
}

func (p *program) label(name string) { p.labels[name] = len(p.ins) }

// target is a call number the filter tells apart, and the label it goes to.
type target struct {
	nr uint32
	to string
}

// search sends the call number in the accumulator to the label of its
// target among ts, and any other number to miss, by a binary search: the
// kernel walks the filter once for each number to cache its verdict when
// it is installed, so the path of the numbers that are no target, nearly
// all of them, must stay short.
func (p *program) search(ts []target, miss string) {
	ts = slices.SortedFunc(slices.Values(ts), func(a, b target) int { return cmp.Compare(a.nr, b.nr) })
	var walk func(ts []target)
	walk = func(ts []target) {
		if len(ts) <= 3 {
			for i, t := range ts {
				no := ""
				if i == len(ts)-1 {
					no = miss
				}
				p.jump(bpfJeqK, t.nr, t.to, no)
			}
			return
		}
		mid := len(ts) / 2
		p.nodes++
		upper := fmt.Sprintf("search%d", p.nodes)
		p.jump(bpfJgtK, ts[mid-1].nr, upper, "")
		walk(ts[:mid])
		p.label(upper)
		walk(ts[mid:])
	}
	walk(ts)
}

func (p *program) stmt(code uint16, k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump; "" falls through.
func (p *program) jump(code uint16, k uint32, yes, no string) {
	p.jumps[len(p.ins)] = [2]string{yes, no}
	p.stmt(code, k)
}

func (p *program) assemble() ([]unix.SockFilter, error) {
	for at, to := range p.jumps {
		for i, name := range to {
			if name == "" {
				continue
			}
			dest, ok := p.labels[name]
			skip := dest - at - 1
			if !ok || skip < 0 || skip > 255 {
				return nil, fmt.Errorf("execwatch: bad jump to %q", name)
			}
			if i == 0 {
				p.ins[at].Jt = uint8(skip)
			} else {
				p.ins[at].Jf = uint8(skip)
			}
		}
	}
	return p.ins, nil
}

// The set-id bits of a mode, and the open flags that make open and openat
// create a file (O_CREAT, and O_TMPFILE without its O_DIRECTORY); the same
// in every ABI the filter reads.
const (
	setIDBits   = unix.S_ISUID | unix.S_ISGID
	createFlags = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY
)

// sockTypeMask is the type bits of socket's type argument (the rest are
// SOCK_NONBLOCK and SOCK_CLOEXEC); socketcall's calls that make or connect
// a socket.
const (
	sockTypeMask      = 0xf
	sysCallSocket     = 1
	sysCallConnect    = 3
	sysCallSocketpair = 8
)

// socketCalls are the numbers of the socket calls in one ABI; socketcall
// is 0 where the ABI has none.
type socketCalls struct {
	socket, socketpair, connect, socketcall uint32
}

// The calls numbered alike in every ABI (those added since Linux 5.1).
const (
	sysIOURingSetup = 425
	sysOpenat2      = 437
	sysFchmodat2    = 452
)

// modeCall is a system call that gives a file a mode.
type modeCall struct {
	name  string
	nr    uint32
	path  int // argument index of the file's name, after the folder's descriptor for the *at calls; -1 for fchmod, whose argument 0 is the file's descriptor
	flags int // argument index of the open flags, for a call that creates only with createFlags; -1 when it always creates or changes the mode
	mode  int // argument index of the mode
}

// The calls common to every ABI: fchmod and the *at calls.
func atCalls(fchmod, openat, mkdirat, mknodat, fchmodat uint32) []modeCall {
	return []modeCall{
		{"fchmod", fchmod, -1, -1, 1},
		{"openat", openat, 1, 2, 3},
		{"mkdirat", mkdirat, 1, -1, 2},
		{"mknodat", mknodat, 1, -1, 2},
		{"fchmodat", fchmodat, 1, -1, 2},
		{"fchmodat2", sysFchmodat2, 1, -1, 2},
	}
}

// The calls only older ABIs have, on names alone.
func pathCalls(open, creat, mkdir, mknod, chmod uint32) []modeCall {
	return []modeCall{
		{"open", open, 0, 1, 2},
		{"creat", creat, 0, -1, 1},
		{"mkdir", mkdir, 0, -1, 1},
		{"mknod", mknod, 0, -1, 1},
		{"chmod", chmod, 0, -1, 1},
	}
}

// argLow is the offset in seccomp_data of the low 32 bits of argument i
// (args[6] from offset 16, little-endian here); a mode and open flags are
// 32-bit values, whatever the upper half holds.
func argLow(i int) uint32 { return uint32(offArgs + 8*i) }

// filter assembles the filter f describes: in every ABI a set-id mode
// fails with EPERM, and openat2 and io_uring_setup with ENOSYS (with
// Report, the set-id modes and io_uring_setup become notifications); with
// Exec the native execve and execveat become notifications and the execs
// of the ABIs the supervisor cannot read (x32, the 32-bit compat arch)
// fail with EACCES. Everything else is allowed. The verdict of a call that
// takes no mode depends on its number alone, so the kernel caches it and
// runs the filter only for the calls with a mode.
func filter(f Filter) ([]unix.SockFilter, error) {
	p := &program{jumps: map[int][2]string{}, labels: map[string]int{}}
	setID := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	uring := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	if f.Report {
		setID, uring = unix.SECCOMP_RET_USER_NOTIF, unix.SECCOMP_RET_USER_NOTIF
	}
	p.stmt(bpfLdAbsW, offArch)
	p.jump(bpfJeqK, nativeArch, "", "foreign")
	p.stmt(bpfLdAbsW, offNr)
	if x32Bit != 0 {
		// x32 numbers the calls that take a mode as the native ABI does,
		// with x32Bit: past its execs, it is checked as native.
		p.jump(bpfJsetK, x32Bit, "", "native")
		if f.Exec {
			for _, nr := range x32Execs {
				p.jump(bpfJeqK, nr, "refuse", "")
			}
		}
		p.stmt(bpfAluAndK, ^uint32(x32Bit))
	}
	p.label("native")
	native := modeTargets(nativeModeCalls)
	if f.Exec {
		native = append(native, target{sysExecve, "notify"}, target{sysExecveat, "notify"})
	}
	if f.Sockets {
		native = append(native, target{nativeSockets.connect, "notify"},
			target{nativeSockets.socket, "unix"}, target{nativeSockets.socketpair, "unix"})
	}
	p.search(native, "allow")

	p.label("foreign")
	p.jump(bpfJeqK, compatArch, "", "allow")
	p.stmt(bpfLdAbsW, offNr)
	compat := modeTargets(compatModeCalls)
	if f.Exec {
		compat = append(compat, target{compatExecve, "refuse"}, target{compatExecat, "refuse"})
	}
	if f.Sockets {
		// The supervisor reads 64-bit pointers: a 32-bit program may make
		// stream sockets but not connect them.
		compat = append(compat, target{compatSockets.connect, "refuse"},
			target{compatSockets.socket, "compatunix"}, target{compatSockets.socketpair, "compatunix"})
		if compatSockets.socketcall != 0 {
			compat = append(compat, target{compatSockets.socketcall, "socketcall"})
		}
	}
	p.search(compat, "allow")
	p.label("allow")
	p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	if f.Sockets {
		// A unix socket of any type but stream and seqpacket (datagram,
		// and raw, which the kernel makes a datagram one) could send to
		// any socket path with sendto or sendmsg, whose address no filter
		// can read: it is refused where it is made.
		unixType := func(label, dgram string) {
			p.label(label)
			p.stmt(bpfLdAbsW, argLow(0))
			p.jump(bpfJeqK, unix.AF_UNIX, "", "sockallow")
			p.stmt(bpfLdAbsW, argLow(1))
			p.stmt(bpfAluAndK, sockTypeMask)
			p.jump(bpfJeqK, unix.SOCK_STREAM, "sockallow", "")
			p.jump(bpfJeqK, unix.SOCK_SEQPACKET, "sockallow", dgram)
		}
		unixType("unix", "dgram")
		unixType("compatunix", "refuse")
		if compatSockets.socketcall != 0 {
			p.label("socketcall")
			p.stmt(bpfLdAbsW, argLow(0))
			p.jump(bpfJeqK, sysCallSocket, "refuse", "")
			p.jump(bpfJeqK, sysCallConnect, "refuse", "")
			p.jump(bpfJeqK, sysCallSocketpair, "refuse", "sockallow")
		}
		p.label("dgram")
		if f.Report {
			p.stmt(bpfRetK, unix.SECCOMP_RET_USER_NOTIF)
		} else {
			p.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
		}
		// Jumps go forward only: the checks above allow here.
		p.label("sockallow")
		p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)
	}

	// The argument checks the ABIs share: for each shape, the open flags
	// (when the call creates only with them), then the mode.
	for _, flags := range []int{1, 2} {
		p.label(fmt.Sprintf("flags%d", flags))
		p.stmt(bpfLdAbsW, argLow(flags))
		p.jump(bpfJsetK, createFlags, fmt.Sprintf("mode%d", flags+1), "")
		p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)
	}
	for _, mode := range []int{1, 2, 3} {
		p.label(fmt.Sprintf("mode%d", mode))
		p.stmt(bpfLdAbsW, argLow(mode))
		p.jump(bpfJsetK, setIDBits, "setid", "")
		p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)
	}

	p.label("setid")
	p.stmt(bpfRetK, setID)
	p.label("uring")
	p.stmt(bpfRetK, uring)
	p.label("nosys")
	p.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	p.label("notify")
	p.stmt(bpfRetK, unix.SECCOMP_RET_USER_NOTIF)
	p.label("refuse")
	p.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	return p.assemble()
}

// modeTargets sends calls, openat2 and io_uring_setup to the checks of
// their arguments.
func modeTargets(calls []modeCall) []target {
	ts := []target{{sysOpenat2, "nosys"}, {sysIOURingSetup, "uring"}}
	for _, c := range calls {
		to := fmt.Sprintf("mode%d", c.mode)
		if c.flags >= 0 {
			to = fmt.Sprintf("flags%d", c.flags)
		}
		ts = append(ts, target{c.nr, to})
	}
	return ts
}

// refusedCall names the call of notification data d that the filter
// refused, and how; ok is false for an exec.
func refusedCall(d *seccompData) (c modeCall, errno unix.Errno, ok bool) {
	nr, calls := uint32(d.Nr), nativeModeCalls
	switch {
	case d.Arch == compatArch:
		calls = compatModeCalls
	case d.Arch != nativeArch:
		return modeCall{}, 0, false
	case x32Bit != 0 && nr&x32Bit != 0:
		nr &^= x32Bit
	}
	if nr == sysIOURingSetup {
		return modeCall{name: "io_uring_setup", nr: nr, path: -1, flags: -1, mode: -1}, unix.ENOSYS, true
	}
	for _, c := range calls {
		if c.nr == nr {
			return c, unix.EPERM, true
		}
	}
	return modeCall{}, 0, false
}

// assembled are the filters, each assembled once; the kernel copies them.
var assembled = func() map[Filter]func() ([]unix.SockFilter, error) {
	m := map[Filter]func() ([]unix.SockFilter, error){}
	for _, exec := range []bool{false, true} {
		for _, report := range []bool{false, true} {
			for _, sockets := range []bool{false, true} {
				f := Filter{Exec: exec, Report: report, Sockets: sockets}
				m[f] = sync.OnceValues(func() ([]unix.SockFilter, error) { return filter(f) })
			}
		}
	}
	return m
}()

func installFilter(f Filter) (*os.File, error) {
	if unix.Gettid() == unix.Getpid() {
		return nil, errMainThread
	}
	ins, err := assembled[f]()
	if err != nil {
		return nil, err
	}
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	var flags uintptr
	if f.Exec || f.Report || f.Sockets {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	// A raw seccomp(2) without SECCOMP_FILTER_FLAG_TSYNC filters the calling
	// thread only: the plugin's other threads stay free.
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return nil, fmt.Errorf("execwatch: install the filter: %w", errno)
	}
	if flags == 0 {
		return nil, nil
	}
	// The kernel makes the listener close-on-exec, so the child's copy
	// closes at its exec and no process of the tree can answer itself.
	// Non-blocking makes it pollable: Supervise waits in the runtime's
	// poller, costing nothing while the tree is idle.
	if err := unix.SetNonblock(int(fd), true); err != nil {
		unix.Close(int(fd))
		return nil, fmt.Errorf("execwatch: listener: %w", err)
	}
	l := os.NewFile(fd, "seccomp-listener")
	if !f.Exec {
		// No exec is notified, so there is no first exec to answer: the
		// tree's first notification waits for Supervise.
		return l, nil
	}
	// The primer lets the first notification go on unread: the command's
	// exec, since between the fork and its exec the child makes no call
	// that takes a mode or sets up io_uring.
	if err := startPrimer(l); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
