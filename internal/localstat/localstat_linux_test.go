//go:build linux && (amd64 || arm64)

package localstat

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/yagent/yagent/internal/proctest"
	"github.com/yagent/yagent/internal/quietio/quiettest"
)

func TestMain(m *testing.M) {
	if os.Getenv("LOCALSTAT_MOUNT_HELPER") != "" {
		os.Exit(mountHelper(os.Getenv("LOCALSTAT_MOUNT_HELPER")))
	}
	os.Exit(m.Run())
}

// TestLstat_AsOS: each kind of file, and each failure, reads as os.Lstat
// reads it.
func TestLstat_AsOS(t *testing.T) {
	dir := t.TempDir()
	if !mounts.local(dir) {
		t.Skipf("%s is not on a local file system here: Lstat takes os's path", dir)
	}
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, []byte("twelve bytes"), 0o640))
	setuid := filepath.Join(dir, "setuid")
	must(t, os.WriteFile(setuid, nil, 0o755))
	must(t, os.Chmod(setuid, 0o755|fs.ModeSetuid|fs.ModeSetgid))
	sticky := filepath.Join(dir, "sticky")
	must(t, os.Mkdir(sticky, 0o777))
	must(t, os.Chmod(sticky, 0o777|fs.ModeSticky))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink("file", link))
	dangling := filepath.Join(dir, "dangling")
	must(t, os.Symlink("nowhere", dangling))
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	must(t, err)
	defer l.Close()

	for _, p := range []string{dir, file, setuid, sticky, link, dangling, fifo, sock, "/dev/null"} {
		want, werr := os.Lstat(p)
		got, gerr := Lstat(p)
		if werr != nil || gerr != nil {
			t.Fatalf("Lstat(%s): %v, os.Lstat: %v", p, gerr, werr)
		}
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("Lstat(%s) = %s %d %v %v %v, os.Lstat = %s %d %v %v %v", p,
				got.Name(), got.Size(), got.Mode(), got.ModTime(), got.IsDir(),
				want.Name(), want.Size(), want.Mode(), want.ModTime(), want.IsDir())
		}
		gs, ws := got.Sys().(*syscall.Stat_t), want.Sys().(*syscall.Stat_t)
		if gs.Dev != ws.Dev || gs.Ino != ws.Ino || gs.Ctim != ws.Ctim {
			t.Errorf("Lstat(%s).Sys() = dev %d ino %d, os.Lstat = dev %d ino %d", p, gs.Dev, gs.Ino, ws.Dev, ws.Ino)
		}
	}
	for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(file, "below"), dir + "/with\x00nul"} {
		_, werr := os.Lstat(p)
		_, gerr := Lstat(p)
		var wp, gp *fs.PathError
		if !errors.As(werr, &wp) || !errors.As(gerr, &gp) {
			t.Fatalf("Lstat(%q) = %v, os.Lstat = %v: want a *fs.PathError from both", p, gerr, werr)
		}
		if gp.Op != wp.Op || gp.Path != wp.Path || !errors.Is(gerr, wp.Err) {
			t.Errorf("Lstat(%q) = %v, want %v", p, gerr, werr)
		}
	}
}

func TestReadlink_AsOS(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("a/", 300) + "end" // past the first buffer
	for name, target := range map[string]string{"short": "file", "long": long, "abs": "/etc/passwd"} {
		p := filepath.Join(dir, name)
		must(t, os.Symlink(target, p))
		got, err := Readlink(p)
		if err != nil || got != target {
			t.Errorf("Readlink(%s) = %q, %v; want %q", name, got, err, target)
		}
	}
	_, werr := os.Readlink(dir)
	_, gerr := Readlink(dir)
	if werr == nil || gerr == nil || !errors.Is(gerr, syscall.EINVAL) || gerr.Error() != werr.Error() {
		t.Errorf("Readlink of a folder = %v, os.Readlink = %v", gerr, werr)
	}
}

// TestMounts_ReadAgainAfterAMount: a mount made after the table was read
// takes the paths below it off the raw path, and its unmount puts them
// back. The mounts happen in a child in a mount namespace of its own.
func TestMounts_ReadAgainAfterAMount(t *testing.T) {
	t.Log(proctest.InMountNamespace(t, "LOCALSTAT_MOUNT_HELPER", t.TempDir()))
}

// mountHelper runs in its own mount namespace: it reads dir's standing,
// mounts a proc (not a local disk's file system) on dir, reads it again,
// unmounts, and reads it a third time.
func mountHelper(dir string) int {
	fail := func(f string, a ...any) int {
		os.Stderr.WriteString("helper: " + fmt.Sprintf(f, a...) + "\n")
		return 1
	}
	below := filepath.Join(dir, "self")
	if !mounts.local(below) {
		os.Stderr.WriteString("skip: the temp folder is not on a local file system here\n")
		return 0
	}
	if err := syscall.Mount("proc", dir, "proc", 0, ""); err != nil {
		os.Stderr.WriteString("skip: mount proc: " + err.Error() + "\n")
		return 0
	}
	if mounts.local(below) {
		return fail("%s still local after a proc was mounted on %s", below, dir)
	}
	if _, err := Lstat(below); err != nil { // through os: /proc/self is there
		return fail("Lstat(%s) under the proc mount: %v", below, err)
	}
	if err := syscall.Unmount(dir, 0); err != nil {
		return fail("unmount: %v", err)
	}
	if !mounts.local(below) {
		return fail("%s not local again after the unmount", below)
	}
	os.Stdout.WriteString("local, remote under a proc mount, local after its unmount\n")
	return 0
}

// TestLstat_WakesNoThread: after an idle spell, os.Lstat wakes the
// runtime's monitor thread; Lstat of a path on a local disk does not.
func TestLstat_WakesNoThread(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's builds read the pipe through the syscall package; make test runs this package without it too")
	}
	dir := t.TempDir()
	if !mounts.local(dir) {
		t.Skipf("%s is not on a local file system here", dir)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const calls = 39
	count := func(lstat func(string) (fs.FileInfo, error)) int {
		return quiettest.SwitchesAfterIdleSpells(t, calls, func() {
			if _, err := lstat(dir); err != nil {
				t.Fatal(err)
			}
		})
	}
	var plain, raw []int
	for range 2 {
		plain = append(plain, count(os.Lstat))
		raw = append(raw, count(Lstat))
	}
	p, q := slices.Min(plain), slices.Min(raw)
	t.Logf("thread switches over %d idle spells and lstats: os.Lstat %v, Lstat %v", calls, plain, raw)
	if p-q < calls/2 {
		t.Errorf("Lstat took %d thread switches against %d for os.Lstat: want at least one fewer every two calls", q, p)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLstatNoLinks_OnlyWithoutLinks: a path with no symlink on it reads as
// os.Lstat reads it; one with a symlink anywhere (a folder on the way, the
// last component, a dangling one), one missing and one through a file
// get no answer, so that the caller walks them.
func TestLstatNoLinks_OnlyWithoutLinks(t *testing.T) {
	dir := t.TempDir()
	if !mounts.local(dir) {
		t.Skipf("%s is not on a local file system here: LstatNoLinks answers nothing", dir)
	}
	sub := filepath.Join(dir, "sub")
	must(t, os.Mkdir(sub, 0o755))
	file := filepath.Join(sub, "file")
	must(t, os.WriteFile(file, []byte("twelve bytes"), 0o640))
	must(t, os.Symlink("sub", filepath.Join(dir, "linkdir")))
	must(t, os.Symlink("file", filepath.Join(sub, "link")))
	must(t, os.Symlink("nowhere", filepath.Join(sub, "dangling")))

	for _, p := range []string{dir, sub, file} {
		got, ok := LstatNoLinks(p)
		want, err := os.Lstat(p)
		must(t, err)
		if !ok {
			t.Fatalf("LstatNoLinks(%s): no answer for a path with no symlink on it", p)
		}
		gs, ws := got.Sys().(*syscall.Stat_t), want.Sys().(*syscall.Stat_t)
		if got.Name() != want.Name() || got.Mode() != want.Mode() || got.Size() != want.Size() || gs.Dev != ws.Dev || gs.Ino != ws.Ino {
			t.Errorf("LstatNoLinks(%s) = %s %v %d ino %d, os.Lstat = %s %v %d ino %d", p,
				got.Name(), got.Mode(), got.Size(), gs.Ino, want.Name(), want.Mode(), want.Size(), ws.Ino)
		}
	}
	for _, p := range []string{
		filepath.Join(dir, "linkdir"),         // a symlink last
		filepath.Join(dir, "linkdir", "file"), // a symlink on the way
		filepath.Join(sub, "link"),
		filepath.Join(sub, "dangling"),
		filepath.Join(sub, "missing"),
		filepath.Join(file, "below"),
		dir + "/with\x00nul",
	} {
		if fi, ok := LstatNoLinks(p); ok {
			t.Errorf("LstatNoLinks(%q) = %v %v: want no answer", p, fi.Name(), fi.Mode())
		}
	}
}
