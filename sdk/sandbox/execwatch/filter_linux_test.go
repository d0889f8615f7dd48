//go:build linux && (amd64 || arm64)

package execwatch

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const (
	retNotify = unix.SECCOMP_RET_USER_NOTIF
	retAllow  = unix.SECCOMP_RET_ALLOW
	retRefuse = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// machine runs filter f in a classic BPF machine: what the kernel would
// answer a call of arch numbered nr with args.
type machine func(arch, nr uint32, args ...uint64) uint32

func newMachine(t *testing.T, f Filter) machine {
	t.Helper()
	ins, err := assembled[f]()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.RawInstruction, len(ins))
	for i, in := range ins {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("the filter has an instruction the machine does not know: %v", prog)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	return func(arch, nr uint32, args ...uint64) uint32 {
		// seccomp_data as the kernel's 32-bit loads see it on a
		// little-endian machine, laid out for the machine's big-endian
		// loads: each argument's low half first.
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[offNr:], nr)
		binary.BigEndian.PutUint32(data[offArch:], arch)
		for i, a := range args {
			binary.BigEndian.PutUint32(data[offArgs+8*i:], uint32(a))
			binary.BigEndian.PutUint32(data[offArgs+8*i+4:], uint32(a>>32))
		}
		got, err := vm.Run(data)
		if err != nil {
			t.Fatalf("arch %#x nr %d: %v", arch, nr, err)
		}
		return uint32(got)
	}
}

// TestFilter_Verdicts runs the assembled exec filter in a classic BPF
// machine on the system calls it must tell apart. It holds where the
// kernel cannot show them: a machine whose kernel faults int 0x80 before
// any filter sees it still ships a filter that must refuse i386's execve
// on the machines that do not.
func TestFilter_Verdicts(t *testing.T) {
	type verdict struct {
		name     string
		arch, nr uint32
		want     uint32
	}
	cases := []verdict{
		{"native execve", nativeArch, sysExecve, retNotify},
		{"native execveat", nativeArch, sysExecveat, retNotify},
		{"native getpid", nativeArch, uint32(unix.SYS_GETPID), retAllow},
		{"compat execve", compatArch, compatExecve, retRefuse},
		{"compat execveat", compatArch, compatExecat, retRefuse},
		{"compat getpid", compatArch, 20, retAllow},
		{"another arch's execve", unix.AUDIT_ARCH_PPC64LE, sysExecve, retAllow},
	}
	for _, nr := range x32Execs {
		cases = append(cases, verdict{"x32 exec", nativeArch, nr, retRefuse})
	}
	for _, report := range []bool{false, true} {
		run := newMachine(t, Filter{Exec: true, Report: report})
		for _, c := range cases {
			if got := run(c.arch, c.nr); got != c.want {
				t.Errorf("report %v, %s (arch %#x, nr %d): %#x, want %#x", report, c.name, c.arch, c.nr, got, c.want)
			}
		}
	}
	// Without exec rules no exec waits, and a 32-bit program's execs run.
	run := newMachine(t, Filter{Report: true})
	for _, c := range cases {
		if got := run(c.arch, c.nr); got != retAllow {
			t.Errorf("no exec rules, %s (arch %#x, nr %d): %#x, want it allowed", c.name, c.arch, c.nr, got)
		}
	}
}

// abi is one way into the kernel and the calls with a mode it numbers.
type abi struct {
	name  string
	arch  uint32
	or    uint32 // bits set in each number (x32's)
	calls []modeCall
}

func abis() []abi {
	out := []abi{{"native", nativeArch, 0, nativeModeCalls}, {"compat", compatArch, 0, compatModeCalls}}
	if x32Bit != 0 {
		out = append(out, abi{"x32", nativeArch, x32Bit, nativeModeCalls})
	}
	return out
}

// TestFilter_SetIDModes: in every ABI and every filter, each call that
// gives a file a mode is refused when the mode has the setuid or setgid
// bit (EPERM, or a notification with Report) and allowed with a plain
// mode, sticky bit included; open and openat only when their flags create
// (O_CREAT, O_TMPFILE), whatever the mode argument holds otherwise; the
// upper half of an argument is not read, as the kernel does not. openat2,
// whose mode is behind a pointer, and io_uring_setup fail with ENOSYS.
func TestFilter_SetIDModes(t *testing.T) {
	for _, f := range []Filter{{}, {Exec: true}, {Report: true}, {Exec: true, Report: true}} {
		run := newMachine(t, f)
		setID, uring := retEPERM, retENOSYS
		if f.Report {
			setID, uring = retNotify, retNotify
		}
		for _, a := range abis() {
			for _, c := range a.calls {
				call := func(flags uint32, mode uint64) uint32 {
					args := make([]uint64, 6)
					for i := range args {
						args[i] = 0xdead0000 // a name's or descriptor's value
					}
					if c.flags >= 0 {
						args[c.flags] = uint64(flags)
					}
					args[c.mode] = mode
					return run(a.arch, c.nr|a.or, args...)
				}
				check := func(what string, flags uint32, mode uint64, want uint32) {
					t.Helper()
					if got := call(flags, mode); got != want {
						t.Errorf("%+v, %s %s (nr %d) %s: %#x, want %#x", f, a.name, c.name, c.nr|a.or, what, got, want)
					}
				}
				creat := uint32(unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC)
				for _, mode := range []uint64{0o4755, 0o2755, 0o6000, 0o4000, 0o2000, 0o7777, 1<<32 | 0o4755} {
					check(fmt.Sprintf("mode %#o", mode), creat, mode, setID)
				}
				for _, mode := range []uint64{0o755, 0o644, 0o1777, 0o777, 0, 1<<32 | 0o755, 0xffffffff<<32 | 0o755} {
					check(fmt.Sprintf("mode %#o", mode), creat, mode, retAllow)
				}
				if c.flags < 0 {
					continue
				}
				check("O_TMPFILE, mode 2755", unix.O_TMPFILE|unix.O_RDWR, 0o2755, setID)
				check("O_CREAT alone, mode 4755", unix.O_CREAT, 0o4755, setID)
				check("O_CREAT|O_EXCL, mode 4755", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o4755, setID)
				// The kernel ignores the mode of an open that does not
				// create: whatever a caller left there is allowed.
				check("O_WRONLY, mode 4755", unix.O_WRONLY, 0o4755, retAllow)
				check("O_RDONLY|O_DIRECTORY, mode 6777", unix.O_RDONLY|unix.O_DIRECTORY, 0o6777, retAllow)
				check("O_RDWR|O_TRUNC, mode 4755", unix.O_RDWR|unix.O_TRUNC, 0o4755, retAllow)
			}
			for _, args := range [][]uint64{nil, {0, 0, 0, 0, 0, 0}, {1, 2, 0o4755, 0o4755, 0o4755, 0o4755}} {
				if got := run(a.arch, sysOpenat2|a.or, args...); got != retENOSYS {
					t.Errorf("%+v, %s openat2 %v: %#x, want ENOSYS", f, a.name, args, got)
				}
				if got := run(a.arch, sysIOURingSetup|a.or, args...); got != uring {
					t.Errorf("%+v, %s io_uring_setup %v: %#x, want %#x", f, a.name, args, got, uring)
				}
			}
		}
	}
}

// TestFilter_OtherCallsByNumberAlone: in every filter and ABI, each number
// the filter does not tell apart is allowed, whatever its arguments: the
// binary search sends no number astray, and the verdict depends on the
// number alone, so the kernel caches it and never runs the filter for it.
func TestFilter_OtherCallsByNumberAlone(t *testing.T) {
	ones := []uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	for f := range assembled {
		run := newMachine(t, f)
		for _, a := range abis() {
			told := map[uint32]bool{sysOpenat2: true, sysIOURingSetup: true}
			for _, c := range a.calls {
				told[c.nr] = true
			}
			if f.Sockets {
				s := nativeSockets
				if a.arch == compatArch {
					s = compatSockets
				}
				for _, nr := range []uint32{s.socket, s.socketpair, s.connect, s.socketcall} {
					told[nr] = true
				}
			}
			switch {
			case !f.Exec:
			case a.arch == compatArch:
				told[compatExecve], told[compatExecat] = true, true
			case a.or != 0:
				for _, nr := range x32Execs {
					told[nr&^x32Bit] = true
				}
			default:
				told[sysExecve], told[sysExecveat] = true, true
			}
			for nr := uint32(0); nr < 1024; nr++ {
				if told[nr] {
					continue
				}
				if zero, set := run(a.arch, nr|a.or), run(a.arch, nr|a.or, ones...); zero != retAllow || set != retAllow {
					t.Errorf("%+v, %s nr %d: %#x with zero arguments, %#x with every bit set, want it allowed", f, a.name, nr|a.or, zero, set)
				}
			}
		}
	}
}

// TestRefusedCall: the supervisor names each call the filter hands it as
// the filter's tables do, in every ABI, and takes execs for execs.
func TestRefusedCall(t *testing.T) {
	for _, a := range abis() {
		for _, c := range a.calls {
			got, errno, ok := refusedCall(&seccompData{Nr: int32(c.nr | a.or), Arch: a.arch})
			if !ok || got.name != c.name || errno != unix.EPERM {
				t.Errorf("%s nr %d: %q %v %v, want %q EPERM", a.name, c.nr|a.or, got.name, errno, ok, c.name)
			}
		}
		if got, errno, ok := refusedCall(&seccompData{Nr: int32(sysIOURingSetup | a.or), Arch: a.arch}); !ok || got.name != "io_uring_setup" || errno != unix.ENOSYS {
			t.Errorf("%s io_uring_setup: %q %v %v", a.name, got.name, errno, ok)
		}
	}
	for _, nr := range []uint32{sysExecve, sysExecveat} {
		if _, _, ok := refusedCall(&seccompData{Nr: int32(nr), Arch: nativeArch}); ok {
			t.Errorf("exec nr %d taken for a refused call", nr)
		}
	}
}

// TestFilter_Sockets: with the socket rules, every connect of the native
// and x32 ABIs waits for the supervisor, a unix socket of any type but
// stream and seqpacket is refused where it is made (made and paired alike,
// its flags and the upper half of the type ignored), and sends are never
// trapped, their addresses being harmless on the sockets left; the 32-bit
// ABI's connects and socketcall's socket, connect and socketpair fail.
func TestFilter_Sockets(t *testing.T) {
	const upper = uint64(0xdead) << 32
	for _, report := range []bool{false, true} {
		dgram := retRefuse
		if report {
			dgram = retNotify
		}
		run := newMachine(t, Filter{Sockets: true, Report: report})
		type call struct {
			name     string
			arch, nr uint32
			args     []uint64
			want     uint32
		}
		calls := []call{
			{"connect", nativeArch, nativeSockets.connect, []uint64{3, 0x1000, 110}, retNotify},
			{"sendto", nativeArch, unix.SYS_SENDTO, []uint64{3, 0x1000, 10, 0, 0x2000, 110}, retAllow},
			{"sendmsg", nativeArch, unix.SYS_SENDMSG, []uint64{3, 0x1000, 0}, retAllow},
			{"sendmmsg", nativeArch, unix.SYS_SENDMMSG, []uint64{3, 0x1000, 2, 0}, retAllow},
			{"compat connect", compatArch, compatSockets.connect, []uint64{3, 0x1000, 110}, retRefuse},
		}
		if x32Bit != 0 {
			calls = append(calls, call{"x32 connect", nativeArch, nativeSockets.connect | x32Bit, []uint64{3, 0x1000, 110}, retNotify})
		}
		for _, kind := range []struct {
			name          string
			native, compt uint32
		}{{"socket", nativeSockets.socket, compatSockets.socket}, {"socketpair", nativeSockets.socketpair, compatSockets.socketpair}} {
			for _, c := range []struct {
				family, typ uint64
				native      uint32
			}{
				{unix.AF_UNIX, unix.SOCK_STREAM, retAllow},
				{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK | upper, retAllow},
				{unix.AF_UNIX, unix.SOCK_SEQPACKET | unix.SOCK_CLOEXEC, retAllow},
				{unix.AF_UNIX, unix.SOCK_DGRAM, dgram},
				{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC | upper, dgram},
				{unix.AF_UNIX | upper, unix.SOCK_RAW, dgram},
				{unix.AF_INET, unix.SOCK_DGRAM, retAllow},
				{unix.AF_INET6, unix.SOCK_STREAM, retAllow},
				{unix.AF_NETLINK, unix.SOCK_DGRAM, retAllow},
			} {
				name := fmt.Sprintf("%s(%#x, %#x)", kind.name, c.family, c.typ)
				compat := c.native
				if compat == retNotify {
					compat = retRefuse
				}
				calls = append(calls, call{name, nativeArch, kind.native, []uint64{c.family, c.typ, 0}, c.native},
					call{"compat " + name, compatArch, kind.compt, []uint64{c.family, c.typ, 0}, compat})
				if x32Bit != 0 {
					calls = append(calls, call{"x32 " + name, nativeArch, kind.native | x32Bit, []uint64{c.family, c.typ, 0}, c.native})
				}
			}
		}
		if compatSockets.socketcall != 0 {
			for _, sc := range []struct {
				nr   uint64
				want uint32
			}{{sysCallSocket, retRefuse}, {sysCallConnect, retRefuse}, {sysCallSocketpair, retRefuse}, {2 /* bind */, retAllow}, {9 /* send */, retAllow}, {16 /* sendmsg */, retAllow}} {
				calls = append(calls, call{fmt.Sprintf("socketcall(%d)", sc.nr), compatArch, compatSockets.socketcall, []uint64{sc.nr, 0x1000}, sc.want})
			}
		}
		for _, c := range calls {
			if got := run(c.arch, c.nr, c.args...); got != c.want {
				t.Errorf("report %v, %s: %#x, want %#x", report, c.name, got, c.want)
			}
		}
	}
	// Without the socket rules nothing about sockets is trapped.
	run := newMachine(t, Filter{Report: true})
	for _, nr := range []uint32{nativeSockets.connect, nativeSockets.socket, nativeSockets.socketpair} {
		if got := run(nativeArch, nr, unix.AF_UNIX, unix.SOCK_DGRAM, 0); got != retAllow {
			t.Errorf("no socket rules, nr %d: %#x, want it allowed", nr, got)
		}
	}
}

// TestSocketCall: the supervisor takes the socket calls the filter hands
// it for what they are, x32's too, and nothing else for one.
func TestSocketCall(t *testing.T) {
	for nr, want := range map[uint32]sockCall{nativeSockets.connect: callConnect, nativeSockets.socket: callSocket, nativeSockets.socketpair: callSocketpair} {
		for _, or := range []uint32{0, x32Bit} {
			if got, ok := socketCall(&seccompData{Nr: int32(nr | or), Arch: nativeArch}); !ok || got != want {
				t.Errorf("nr %d: %v %v, want %v", nr|or, got, ok, want)
			}
		}
	}
	for _, d := range []seccompData{{Nr: int32(sysExecve), Arch: nativeArch}, {Nr: int32(compatSockets.connect), Arch: compatArch}, {Nr: int32(unix.SYS_SENDMSG), Arch: nativeArch}} {
		if got, ok := socketCall(&d); ok {
			t.Errorf("%+v taken for socket call %v", d, got)
		}
	}
}
