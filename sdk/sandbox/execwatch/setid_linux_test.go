//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// setIDScript tries each way to give a file a set-id mode (and the plain
// modes beside them) with Python's calls and raw system calls, and prints
// each outcome as "name ok" or "name ERRNO".
func setIDScript() string {
	x32 := ""
	if runtime.GOARCH == "amd64" {
		x32 = fmt.Sprintf("raw('x32-chmod', %d, b'plain', 0o4755)\n", x32Bit|90) // x86_64 numbers chmod 90
	}
	return fmt.Sprintf(`
import ctypes, errno, os, stat
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def py(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def raw(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
open('plain', 'w').close()
py('chmod-4755', lambda: os.chmod('plain', 0o4755))
py('chmod-2755', lambda: os.chmod('plain', 0o2755))
py('chmod-755', lambda: os.chmod('plain', 0o755))
py('chmod-1755', lambda: os.chmod('plain', 0o1755))
py('fchmod-6755', lambda: os.fchmod(os.open('plain', os.O_RDONLY), 0o6755))
py('chmod-fd-name-4755', lambda: os.chmod('/proc/self/fd/%%d' %% os.open('plain', os.O_RDONLY), 0o4755))
py('open-creat-4755', lambda: os.open('c', os.O_CREAT | os.O_WRONLY, 0o4755))
py('open-creat-644', lambda: os.open('p', os.O_CREAT | os.O_WRONLY, 0o644))
py('open-tmpfile-2755', lambda: os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o2755))
raw('openat-nocreate-4755', %d, -100, b'plain', os.O_WRONLY, 0o4755)
py('mkdir-2775', lambda: os.mkdir('d', 0o2775))
py('mkdir-755', lambda: os.mkdir('e', 0o755))
py('mknod-4644', lambda: os.mknod('n', stat.S_IFREG | 0o4644))
how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
raw('openat2', %d, -100, b'o2', how, 24)
raw('io_uring_setup', %d, 4, ctypes.create_string_buffer(120))
%s`, unix.SYS_OPENAT, sysOpenat2, sysIOURingSetup, x32)
}

// setIDWants are the outcomes setIDScript must print under the filter.
func setIDWants() []string {
	w := []string{"chmod-4755 EPERM", "chmod-2755 EPERM", "chmod-755 ok", "chmod-1755 ok", "fchmod-6755 EPERM", "chmod-fd-name-4755 EPERM",
		"open-creat-4755 EPERM", "open-creat-644 ok", "open-tmpfile-2755 EPERM", "openat-nocreate-4755 ok",
		"mkdir-2775 EPERM", "mkdir-755 ok", "mknod-4644 EPERM", "openat2 ENOSYS", "io_uring_setup ENOSYS"}
	if runtime.GOARCH == "amd64" {
		w = append(w, "x32-chmod EPERM")
	}
	return w
}

// noSetIDFiles fails t if a file under dir has a set-id bit.
func noSetIDFiles(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(dir, e.Name()), &st) == nil && st.Mode&setIDBits != 0 {
			t.Errorf("%s has mode %#o", e.Name(), st.Mode&0o7777)
		}
	}
}

// runSetID runs setIDScript under the filter f in a new folder, with a
// supervision when f has a listener, and returns its output, the folder
// and what the supervision was told.
func runSetID(t *testing.T, f Filter, judge Judge, prefix string) (string, string, []Refusal) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", prefix+`"$0" -c "$1"`, python(t), setIDScript())
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	cmd.Env = append(os.Environ(), "YAGENT_T=secret-value")
	l, err := startWith(cmd, f)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var told []Refusal
	sup := make(chan error, 1)
	if l != nil {
		go func() {
			sup <- Supervise(context.Background(), l, Supervision{Judge: judge, Refused: func(r Refusal) {
				mu.Lock()
				told = append(told, r)
				mu.Unlock()
			}})
		}()
	} else {
		sup <- nil
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(waitBound):
		cmd.Process.Kill()
		t.Fatalf("the script did not end; output so far:\n%s", out.String())
	}
	if err := <-sup; err != nil {
		t.Fatalf("Supervise: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return out.String(), dir, told
}

// TestSetIDRefused: under every filter a real process's chmod, fchmod,
// open, O_TMPFILE, mkdir, mknod and x32 calls with a set-id mode fail with
// EPERM and leave no set-id file, the same calls with plain modes work,
// and openat2 and io_uring_setup fail with ENOSYS; with Report the
// supervision is told of each refusal, with its call, file and mode,
// beside the exec rules when the filter has them.
func TestSetIDRefused(t *testing.T) {
	needSeccomp(t)
	for _, tc := range []struct {
		name   string
		f      Filter
		judge  Judge
		prefix string // shell words run before the script
	}{
		{name: "kernel refuses", f: Filter{}},
		{name: "reported", f: Filter{Report: true}},
		{name: "reported beside exec rules", f: Filter{Exec: true, Report: true}, judge: denying(t, "printenv").judge, prefix: "printenv YAGENT_T; "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, dir, told := runSetID(t, tc.f, tc.judge, tc.prefix)
			for _, w := range setIDWants() {
				if !strings.Contains(out, w+"\n") {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
			if tc.judge != nil && (strings.Contains(out, "secret-value") || !strings.Contains(out, "Permission denied")) {
				t.Errorf("the denied printenv ran:\n%s", out)
			}
			noSetIDFiles(t, dir)
			if !tc.f.Report {
				return
			}
			type seen struct {
				path string
				mode uint32
			}
			var got []seen
			for _, r := range told {
				if r.Call == "io_uring_setup" {
					if r.Errno != unix.ENOSYS || r.SetID() {
						t.Errorf("io_uring_setup told as %+v", r)
					}
					got = append(got, seen{"io_uring_setup", 0})
					continue
				}
				if r.Errno != unix.EPERM || !r.SetID() || r.Pid <= 0 {
					t.Errorf("%+v: want EPERM, a set-id refusal and its pid", r)
				}
				got = append(got, seen{strings.TrimPrefix(r.Path, dir), r.Mode})
			}
			want := []seen{{"/plain", 0o4755}, {"/plain", 0o2755}, {"/plain", 0o6755}, {"/plain", 0o4755}, {"/c", 0o4755}, {"", 0o2755},
				{"/d", 0o2775}, {"/n", 0o4644}, {"io_uring_setup", 0}}
			if runtime.GOARCH == "amd64" {
				want = append(want, seen{"/plain", 0o4755})
			}
			for _, w := range want {
				i := slices.Index(got, w)
				if i < 0 {
					t.Errorf("not told of %+v; told %+v", w, told)
					continue
				}
				got = slices.Delete(got, i, i+1)
			}
			if len(got) > 0 {
				t.Errorf("told of more than was refused: %+v", got)
			}
		})
	}
}

// TestSetIDNoListener: a filter that hands its listener nothing makes none.
func TestSetIDNoListener(t *testing.T) {
	needSeccomp(t)
	cmd := exec.Command("true")
	l, err := startWith(cmd, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if l != nil {
		l.Close()
		t.Error("a filter without Exec or Report returned a listener")
	}
}
