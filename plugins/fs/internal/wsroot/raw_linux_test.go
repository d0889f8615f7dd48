//go:build linux && (amd64 || arm64)

package wsroot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/internal/localstat"
	"github.com/yagent/yagent/internal/proctest"
	"github.com/yagent/yagent/internal/quietio/quiettest"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("WSROOT_MOUNT_HELPER"); dir != "" {
		if err := mountHelper(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// rawWorkspace is a workspace on a local file system, or the test skips.
func rawWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !localstat.Local(ws) || rawOff.Load() {
		t.Skipf("no raw path here (%s not on a local file system, or openat2 refused)", ws)
	}
	return ws
}

func openTarget(t *testing.T, s *Roots, ws, name string) (*Resolver, Target, File) {
	t.Helper()
	r, err := s.New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	tg, err := r.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := tg.OpenRead(os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY)
	if err != nil {
		t.Fatalf("OpenRead(%s): %v", name, err)
	}
	t.Cleanup(func() { f.Close() })
	return r, tg, f
}

// TestOpenRead_KeptWorkspaceReadsRaw: a file of the kept workspace is
// resolved and read by raw calls, and reads as the os package reads it.
func TestOpenRead_KeptWorkspaceReadsRaw(t *testing.T) {
	ws := rawWorkspace(t)
	want := bytes.Repeat([]byte("0123456789abcde\n"), 300)
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	var s Roots
	_, tg, f := openTarget(t, &s, ws, "f.txt")
	if _, ok := f.(*rawFile); !ok {
		t.Fatalf("OpenRead gave a %T, want the raw file", f)
	}
	osInfo, _ := os.Lstat(filepath.Join(ws, "f.txt"))
	if tg.Info == nil || tg.Info.Size() != osInfo.Size() || tg.Info.Mode() != osInfo.Mode() || !sameFile(tg.Info, osInfo) {
		t.Errorf("the resolution's info %v, want os.Lstat's %v", tg.Info, osInfo)
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != int64(len(want)) || !fi.Mode().IsRegular() {
		t.Errorf("Stat = %v, %v", fi, err)
	}
	head := make([]byte, 100)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, want[:100]) {
		t.Fatalf("first 100 bytes: %q, %v", head, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("read %d bytes (%v) after the rewind, want the %d written", len(got), err, len(want))
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := f.Read(head); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
}

// TestOpenRead_FolderSwappedForALinkOutside: a folder of the path swapped
// for a symlink out of the workspace after the resolution is never
// followed by the open: the raw call refuses the link, and os.Root, which
// then answers, refuses the escape.
func TestOpenRead_FolderSwappedForALinkOutside(t *testing.T) {
	ws := rawWorkspace(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "dir", "f.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s Roots
	r, err := s.New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tg, err := r.Resolve("dir/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, "dir"), filepath.Join(ws, "dir.old")); err != nil {
		t.Fatal(err)
	}
	// A short relative target: the kernel reads it from the inode, with no
	// wait that would make the raw call give up on its own.
	link, err := filepath.Rel(ws, outside)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(link, filepath.Join(ws, "dir")); err != nil {
		t.Fatal(err)
	}
	f, err := tg.OpenRead(os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY)
	if err == nil {
		b, _ := io.ReadAll(f)
		f.Close()
		t.Fatalf("OpenRead through a folder swapped for a link outside read %q, want a refusal", b)
	}
	if fi, err := (rootFS{r}).Lstat(filepath.Join(ws, "dir", "f.txt")); err == nil {
		t.Errorf("Lstat through the swapped folder found %v, want a refusal", fi.Name())
	}
}

// TestOpenRead_AcrossAMount: a file under a mount inside the workspace is
// read through os.Root (the raw open does not cross mounts: the mount
// could be a network one), and reads right; a file beside the mount is
// read raw. The mount is made in a child in a mount namespace of its own.
func TestOpenRead_AcrossAMount(t *testing.T) {
	t.Log(proctest.InMountNamespace(t, "WSROOT_MOUNT_HELPER", rawWorkspace(t)))
}

func mountHelper(ws string) error {
	mnt := filepath.Join(ws, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		fmt.Println("skip: mount tmpfs:", err)
		return nil
	}
	for name, content := range map[string]string{"mnt/f.txt": "under the mount", "top.txt": "beside it"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	var s Roots
	r, err := s.New(ws, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	for name, want := range map[string]string{"mnt/f.txt": "under the mount", "top.txt": "beside it"} {
		tg, err := r.Resolve(name)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", name, err)
		}
		if !tg.Exists || !tg.Info.Mode().IsRegular() {
			return fmt.Errorf("resolve %s: exists %v, info %v", name, tg.Exists, tg.Info)
		}
		f, err := tg.OpenRead(os.O_RDONLY)
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil || string(b) != want {
			return fmt.Errorf("read %s: %q, %v; want %q", name, b, err, want)
		}
		_, raw := f.(*rawFile)
		if raw != (name == "top.txt") {
			return fmt.Errorf("%s was opened as a %T", name, f)
		}
	}
	fmt.Println("under the mount through os.Root, beside it raw, both read right")
	return syscall.Unmount(mnt, 0)
}

// TestRawFile_ReadThatWouldWaitGoesToOS: a file whose pages are not in
// the cache is read through the os package (a raw read that waited for
// the disk would hold the plugin's processor), and reads right.
func TestRawFile_ReadThatWouldWaitGoesToOS(t *testing.T) {
	ws := rawWorkspace(t)
	want := bytes.Repeat([]byte("not in the cache\n"), 4096)
	p := filepath.Join(ws, "cold.txt")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	evict := func() {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Skipf("fadvise: %v", err)
		}
	}
	evict()
	var s Roots
	_, _, f := openTarget(t, &s, ws, "cold.txt")
	rf, ok := f.(*rawFile)
	if !ok {
		t.Fatalf("OpenRead gave a %T, want the raw file", f)
	}
	got, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(want))
	}
	if rf.os == nil {
		t.Skip("the file's pages stayed in the cache here: every read was raw")
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close after the os reads: %v", err)
	}
}

// TestRead_WakesNoThread: after an idle spell, a read_file's whole walk
// (the workspace looked at, the path resolved, the file opened, read and
// closed) wakes no thread of the plugin; the same through the os package
// wakes the runtime's monitor.
func TestRead_WakesNoThread(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's builds read the pipe through the syscall package")
	}
	ws := rawWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), bytes.Repeat([]byte("x"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var s Roots
	read := func() {
		r, err := s.New(ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		tg, err := r.Resolve("f.txt")
		if err != nil {
			t.Fatal(err)
		}
		f, err := tg.OpenRead(os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 8192)
		if n, err := io.ReadFull(f, buf); n != 4096 || err != io.ErrUnexpectedEOF {
			t.Fatalf("read %d bytes, %v", n, err)
		}
	}
	read() // the kept root opened
	const calls = 39
	var raw, plain []int
	for range 2 {
		raw = append(raw, quiettest.SwitchesAfterIdleSpells(t, calls, read))
		rawOff.Store(true)
		plain = append(plain, quiettest.SwitchesAfterIdleSpells(t, calls, read))
		rawOff.Store(false)
	}
	p, q := slices.Min(plain), slices.Min(raw)
	t.Logf("thread switches over %d reads after idle spells: os %v, raw %v", calls, plain, raw)
	if p-q < calls/2 {
		t.Errorf("raw reads took %d thread switches against %d through os: want at least one fewer every two reads", q, p)
	}
}

// TestResolve_OneLookReadsFromItsOwnRoot: a file of the workspace is
// answered in one raw look beneath the workspace's folder, and an approved
// file outside, whose name the workspace holds too, is read from its own
// folder, never from the workspace's.
func TestResolve_OneLookReadsFromItsOwnRoot(t *testing.T) {
	ws := rawWorkspace(t)
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "a", "b", "f"), []byte("the workspace's"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "ok"), []byte("the workspace's"), 0o644))
	must(os.WriteFile(filepath.Join(out, "ok"), []byte("approved, outside"), 0o644))
	var s Roots
	r, err := s.New(ws, []string{filepath.Join(out, "ok")})
	must(err)
	t.Cleanup(func() { r.Close() })
	for _, tc := range []struct{ path, want string }{
		{"a/b/f", filepath.Join(ws, "a", "b", "f")},
		{".", ws},
		{filepath.Join(out, "ok"), filepath.Join(out, "ok")},
	} {
		fi, ok := rootFS{r}.LstatNoLinks(tc.want)
		if tc.want == filepath.Join(out, "ok") {
			if ok {
				t.Errorf("LstatNoLinks(%s): answered for a file outside the workspace (%d bytes)", tc.want, fi.Size())
			}
		} else if !ok {
			t.Errorf("LstatNoLinks(%s): no one-look answer in the workspace", tc.want)
		}
		tg, err := r.Resolve(tc.path)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", tc.path, err)
		}
		want, _ := os.Lstat(tc.want)
		if tg.Abs != tc.want || (tg.Info != nil && (!sameFile(tg.Info, want) || tg.Info.Size() != want.Size())) {
			t.Errorf("Resolve(%s) = %s, info %v; want %s, os.Lstat's %v", tc.path, tg.Abs, tg.Info, tc.want, want)
		}
	}
}
