//go:build linux && (amd64 || arm64)

package execwatch

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestFilter_Verdicts runs the assembled exec filter in a classic BPF
// machine on the system calls it must tell apart. It holds where the
// kernel cannot show them: a machine whose kernel faults int 0x80 before
// any filter sees it still ships a filter that must refuse i386's execve
// on the machines that do not.
func TestFilter_Verdicts(t *testing.T) {
	ins, err := assembled()
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
	const (
		notify = unix.SECCOMP_RET_USER_NOTIF
		allow  = unix.SECCOMP_RET_ALLOW
		refuse = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	)
	type verdict struct {
		name     string
		arch, nr uint32
		want     uint32
	}
	cases := []verdict{
		{"native execve", nativeArch, sysExecve, notify},
		{"native execveat", nativeArch, sysExecveat, notify},
		{"native getpid", nativeArch, uint32(unix.SYS_GETPID), allow},
		{"compat execve", compatArch, compatExecve, refuse},
		{"compat execveat", compatArch, compatExecat, refuse},
		{"compat getpid", compatArch, 20, allow},
		{"another arch's execve", unix.AUDIT_ARCH_PPC64LE, sysExecve, allow},
	}
	for _, nr := range x32Execs {
		cases = append(cases, verdict{"x32 exec", nativeArch, nr, refuse})
	}
	for _, c := range cases {
		// seccomp_data in the machine's byte order: its loads are
		// big-endian, the kernel's native.
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[offNr:], c.nr)
		binary.BigEndian.PutUint32(data[offArch:], c.arch)
		got, err := vm.Run(data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s (arch %#x, nr %d): %#x, want %#x", c.name, c.arch, c.nr, got, c.want)
		}
	}
}
