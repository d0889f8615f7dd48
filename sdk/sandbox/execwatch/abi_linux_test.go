//go:build linux && (amd64 || arm64)

package execwatch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestShebangDepth: the chain is followed as far as the kernel follows it
// (five interpreters), and one longer fails with ELOOP as the kernel's own.
func TestShebangDepth(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	dir := t.TempDir()
	prev := need(t, "true")
	for i := 1; i <= 6; i++ {
		s := filepath.Join(dir, fmt.Sprintf("s%d", i))
		os.WriteFile(s, []byte("#!"+prev+"\n"), 0o755)
		prev = s
	}
	r := denying(t, "printenv")
	out := run(t, r.judge, dir, bash, "-c", "./s5; echo rc5=$?; ./s6; echo rc6=$?")
	if !strings.Contains(out, "rc5=0") || !strings.Contains(out, "rc6=126") || !strings.Contains(out, "Too many levels") {
		t.Errorf("output %q, want s5 to run and s6 to fail with ELOOP", out)
	}
	e, ok := r.find(func(e Exec) bool { return filepath.Base(e.Path) == "s5" })
	if !ok || len(e.Interpreters) != maxInterpreters {
		t.Errorf("s5 seen %v with interpreters %q, want %d", ok, e.Interpreters, maxInterpreters)
	}
}

// TestForeignABIsRefused: the execs the supervisor cannot read (i386's
// int 0x80, x32) fail with EACCES instead of running unjudged.
func TestForeignABIsRefused(t *testing.T) {
	needSeccomp(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the i386 and x32 ABIs are amd64's")
	}
	py := python(t)
	t.Run("i386", func(t *testing.T) {
		// Some kernels (a guest of a paravirtualized machine among them)
		// fault int 0x80 whatever the filter says: there the ABI cannot
		// run an exec, judged or not.
		if out, err := exec.Command(py, "-c", int80+"print(int80(20))").CombinedOutput(); err != nil {
			t.Skipf("int 0x80 does not reach this kernel (%v: %q): no i386 exec to refuse", err, out)
		}
		// eax 11 is i386's execve; with a NULL name an unfiltered one fails
		// EFAULT.
		out := run(t, denying(t, "printenv").judge, t.TempDir(), py, "-c", int80+"print('i386', int80(11))")
		if !strings.Contains(out, "i386 -13") {
			t.Errorf("i386 execve: output %q, want -13 (EACCES)", out)
		}
	})
	t.Run("x32", func(t *testing.T) {
		out := run(t, denying(t, "printenv").judge, t.TempDir(), py, "-c", `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(0x40000000 | 520, None, None, None)
print("x32", r, ctypes.get_errno())
`)
		if !strings.Contains(out, "x32 -1 13") {
			t.Errorf("x32 execve: output %q, want errno 13 (EACCES)", out)
		}
	})
}

// int80 defines int80(nr) in Python: the i386 system call nr through
// int 0x80, its arguments zero (mov eax, nr; xor ebx, ebx; xor ecx, ecx;
// xor edx, edx; int 0x80; ret).
const int80 = `
import ctypes, mmap
def int80(nr):
    code = bytes([0xb8, nr, 0, 0, 0, 0x31, 0xdb, 0x31, 0xc9, 0x31, 0xd2, 0xcd, 0x80, 0xc3])
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    return ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
`

// TestTerminal: an exec whose stdin is a terminal says so.
func TestTerminal(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here (%v)", err)
	}
	defer ptm.Close()
	defer tty.Close()
	go func() {
		buf := make([]byte, 1024)
		for {
			if _, err := ptm.Read(buf); err != nil {
				return
			}
		}
	}()
	r := denying(t, "printenv")
	cmd := exec.Command(bash, "-c", "ls / >/dev/null; ls / >/dev/null </dev/null")
	cmd.Stdin = tty
	f, err := startFiltered(cmd)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Supervise(t.Context(), f, Supervision{Judge: r.judge}) }()
	cmd.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, e := range r.seen {
		got = append(got, e.Terminal)
	}
	if len(got) != 2 || !got[0] || got[1] {
		t.Errorf("Terminal of the two ls execs = %v, want [true false]", got)
	}
}

// TestChroot: a chrooted process's names are resolved inside its root.
func TestChroot(t *testing.T) {
	needSeccomp(t)
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root: the chrooted case cannot run")
	}
	root := t.TempDir()
	data, err := os.ReadFile(need(t, "printenv"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "pe"), data, 0o755)
	// Outside the root, /pe does not exist: read there, the exec would be
	// answered ENOENT instead of being judged a copy of printenv.
	out := run(t, denying(t, "printenv").judge, root, python(t), "-c", `
import os
os.chroot(".")
try:
    os.execv("/pe", ["pe"])
except PermissionError:
    print("rc=denied")
except FileNotFoundError:
    print("rc=missing")`)
	if !strings.Contains(out, "rc=denied") {
		t.Errorf("output %q, want the copy inside the root denied", out)
	}
}
