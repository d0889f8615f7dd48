//go:build linux && (amd64 || arm64)

package execwatch

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Classic BPF opcodes the filter uses.
const (
	bpfLdAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJsetK  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRetK   = unix.BPF_RET | unix.BPF_K

	offNr   = 0 // seccomp_data.nr
	offArch = 4 // seccomp_data.arch
)

// program assembles a BPF program whose jumps name labels, resolved once
// every instruction is in place (hand-counted skips go wrong silently).
type program struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string // instruction → (true label, false label)
	labels map[string]int
}

func (p *program) label(name string) { p.labels[name] = len(p.ins) }

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

// filter is the exec filter: the native execve and execveat become user
// notifications; the execs of ABIs the supervisor cannot read (x32, the
// 32-bit compat arch) fail with EACCES; everything else is allowed.
func filter() ([]unix.SockFilter, error) {
	p := &program{jumps: map[int][2]string{}, labels: map[string]int{}}
	p.stmt(bpfLdAbsW, offArch)
	p.jump(bpfJeqK, nativeArch, "", "foreign")
	p.stmt(bpfLdAbsW, offNr)
	if x32Bit != 0 {
		p.jump(bpfJsetK, x32Bit, "x32", "")
	}
	p.jump(bpfJeqK, sysExecve, "notify", "")
	p.jump(bpfJeqK, sysExecveat, "notify", "")
	p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	p.label("x32")
	for _, nr := range x32Execs {
		p.jump(bpfJeqK, nr, "refuse", "")
	}
	p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	p.label("foreign")
	p.jump(bpfJeqK, compatArch, "", "allow")
	p.stmt(bpfLdAbsW, offNr)
	p.jump(bpfJeqK, compatExecve, "refuse", "")
	p.jump(bpfJeqK, compatExecat, "refuse", "")
	p.label("allow")
	p.stmt(bpfRetK, unix.SECCOMP_RET_ALLOW)

	p.label("notify")
	p.stmt(bpfRetK, unix.SECCOMP_RET_USER_NOTIF)
	p.label("refuse")
	p.stmt(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	return p.assemble()
}

// assembled is the filter, assembled once; the kernel copies it.
var assembled = sync.OnceValues(filter)

func installFilter() (*os.File, error) {
	if unix.Gettid() == unix.Getpid() {
		return nil, errMainThread
	}
	ins, err := assembled()
	if err != nil {
		return nil, err
	}
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	// A raw seccomp(2) without SECCOMP_FILTER_FLAG_TSYNC filters the calling
	// thread only: the plugin's other threads stay free.
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return nil, fmt.Errorf("execwatch: install the exec filter: %w", errno)
	}
	// The kernel makes the listener close-on-exec, so the child's copy
	// closes at its exec and no process of the tree can answer itself.
	// Non-blocking makes it pollable: Supervise waits in the runtime's
	// poller, costing nothing while the tree is idle.
	if err := unix.SetNonblock(int(fd), true); err != nil {
		unix.Close(int(fd))
		return nil, fmt.Errorf("execwatch: listener: %w", err)
	}
	f := os.NewFile(fd, "seccomp-listener")
	if err := startPrimer(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
