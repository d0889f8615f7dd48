//go:build unix

package sessiontmp

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func open(t *testing.T) *Folders {
	t.Helper()
	f, err := Open(Options{Root: t.TempDir(), Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// background starts a process that lives until the returned func ends
// it (and reaps it).
func background(t *testing.T) (pid int, end func()) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	end = func() {
		if !done {
			done = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(end)
	return cmd.Process.Pid, end
}

// deadMark returns the s.PID.START mark of a process that has ended.
func deadMark(t *testing.T) string {
	t.Helper()
	pid, end := background(t)
	start, ok := procStart(pid)
	if !ok {
		t.Fatal("the start time of a live process cannot be read")
	}
	end()
	if _, ok := procStart(pid); ok {
		t.Skip("the pid was taken again at once")
	}
	return "s." + strconv.Itoa(pid) + "." + start
}

// TestFolders_OnePrivateFolderPerSession: a session's folder is made on
// first use, 0700, the same on every call, another for another session,
// made again when it went away; it is gone when the session ends.
func TestFolders_OnePrivateFolderPerSession(t *testing.T) {
	f := open(t)
	a, err := f.Dir("a")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(a)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("session a's folder %s: %v, %v: want a folder, 0700", a, fi, err)
	}
	if filepath.Dir(a) != f.RootDir() {
		t.Errorf("%s is not under the root %s", a, f.RootDir())
	}
	if again, _ := f.Dir("a"); again != a {
		t.Errorf("the second call got %s, want %s", again, a)
	}
	b, _ := f.Dir("b")
	if b == a {
		t.Error("two sessions share a folder")
	}
	os.RemoveAll(a)
	if again, err := f.Dir("a"); err != nil || again != a || !exists(a) {
		t.Errorf("a folder removed behind the host's back: %s, %v; want it made again", again, err)
	}
	os.WriteFile(filepath.Join(a, "f"), []byte("x"), 0o600)
	os.Mkdir(filepath.Join(a, "locked"), 0o500)
	f.End("a")
	if exists(a) || exists(a+holdSuffix) {
		t.Errorf("session a ended, its folder %s is still there", a)
	}
	if !exists(b) {
		t.Error("session b's folder went with a's")
	}
}

// TestFolders_KeptUntilTheLastBackgroundCommandEnds: an ended session's
// folder stays while a background command recorded for it lives, and goes
// once the last one has ended.
func TestFolders_KeptUntilTheLastBackgroundCommandEnds(t *testing.T) {
	f := open(t)
	d, _ := f.Dir("s")
	p1, end1 := background(t)
	p2, end2 := background(t)
	for _, p := range []int{p1, p2} {
		if err := Hold(d, p, ""); err != nil {
			t.Fatal(err)
		}
	}
	f.End("s")
	time.Sleep(100 * time.Millisecond)
	if !exists(d) {
		t.Fatal("the folder went while its background commands live")
	}
	end1()
	time.Sleep(100 * time.Millisecond)
	if !exists(d) {
		t.Fatal("the folder went while one background command still lives")
	}
	end2()
	eventually(t, "the folder to go after the last background command", func() bool { return !exists(d) && !exists(d+holdSuffix) })
}

// TestFolders_CgroupKeepsIt: a background command that ended but left
// processes in its cgroup still holds the folder.
func TestFolders_CgroupKeepsIt(t *testing.T) {
	f := open(t)
	d, _ := f.Dir("s")
	cg := t.TempDir()
	events := filepath.Join(cg, "cgroup.events")
	os.WriteFile(events, []byte("populated 1\nfrozen 0\n"), 0o644)
	pid, end := background(t)
	if err := Hold(d, pid, cg); err != nil {
		t.Fatal(err)
	}
	end()
	f.End("s")
	time.Sleep(100 * time.Millisecond)
	if !exists(d) {
		t.Fatal("the folder went while the command's cgroup holds a process")
	}
	os.WriteFile(events, []byte("populated 0\nfrozen 0\n"), 0o644)
	eventually(t, "the folder to go once the cgroup is empty", func() bool { return !exists(d) })
}

// TestOpen_SweepsWhatDeadHostsLeft: at start, the folders of a host that
// is gone are removed, unless a live background command holds one (then
// it goes once that ends); a live host's folders and what is not a
// session folder are left alone.
func TestOpen_SweepsWhatDeadHostsLeft(t *testing.T) {
	root := t.TempDir()
	dead := deadMark(t)
	orphan := filepath.Join(root, dead+".0a0b0c")
	held := filepath.Join(root, dead+".0d0e0f")
	// Sized where this process may mount: the sweep unmounts the dead
	// host's tmpfs before it removes the folder.
	mk := &Folders{log: slog.New(slog.DiscardHandler), sizeMB: 1}
	for _, d := range []string{orphan, held} {
		if err := mk.makeFolder(d); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "left"), []byte("x"), 0o600)
	}
	lonelyHold := filepath.Join(root, dead+".111111"+holdSuffix)
	os.Mkdir(lonelyHold, 0o700)
	bg, end := background(t)
	if err := Hold(held, bg, ""); err != nil {
		t.Fatal(err)
	}
	livePid, _ := background(t)
	liveStart, _ := procStart(livePid)
	alive := filepath.Join(root, "s."+strconv.Itoa(livePid)+"."+liveStart+".222222")
	(&Folders{log: mk.log}).makeFolder(alive)
	other := filepath.Join(root, "not-a-session")
	os.Mkdir(other, 0o700)

	f, err := Open(Options{Root: root, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if exists(orphan) || exists(orphan+holdSuffix) || exists(lonelyHold) {
		t.Error("the sweep left a dead host's folder nothing holds")
	}
	if !exists(held) || !exists(alive) || !exists(other) {
		t.Error("the sweep removed a folder a live background command holds, a live host's, or not a session folder")
	}
	end()
	eventually(t, "the held folder to go once its command ended", func() bool { return !exists(held) })
	if !exists(alive) {
		t.Error("a live host's folder went")
	}
}

// TestClose_LeavesOnlyHeldFolders: a stopping host removes its sessions'
// folders but those a background command holds, which the next start's
// sweep takes care of.
func TestClose_LeavesOnlyHeldFolders(t *testing.T) {
	root := t.TempDir()
	f, err := Open(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	free, _ := f.Dir("free")
	kept, _ := f.Dir("kept")
	pid, _ := background(t)
	Hold(kept, pid, "")
	f.Close()
	if exists(free) || !exists(kept) {
		t.Errorf("after Close: free %v, kept %v; want only the held one", exists(free), exists(kept))
	}
	if _, err := f.Dir("late"); err == nil {
		t.Error("Dir after Close made a folder")
	}
}

func TestHold_OnlyASessionFolder(t *testing.T) {
	pid, _ := background(t)
	for _, d := range []string{t.TempDir(), "relative/s.1.2.abc", "/"} {
		if err := Hold(d, pid, ""); err == nil {
			t.Errorf("Hold(%q) recorded a holder for a folder that is no session's", d)
		}
	}
}

// TestRoot_OwnFolderOnly: the root is refused when it is a symlink or
// someone else's folder, and closed to others when it is open.
func TestRoot_OwnFolderOnly(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	if err := ownFolder(open); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", fi.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	os.Symlink(open, link)
	if err := ownFolder(link); err == nil {
		t.Error("a symlink was taken as the root")
	}
	if os.Getuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(theirs, 0o777)
		os.Chown(theirs, 65534, 65534)
		if err := ownFolder(theirs); err == nil {
			t.Error("another user's folder was taken as the root")
		}
	}
	t.Setenv("TMPDIR", filepath.Join(base, "tmpdir"))
	os.Mkdir(filepath.Join(base, "tmpdir"), 0o755)
	r, err := Root()
	if err != nil || filepath.Dir(r) != filepath.Join(base, "tmpdir") {
		t.Errorf("Root with TMPDIR set: %s, %v; want a folder in TMPDIR", r, err)
	}
}

// mounted says a filesystem is mounted on dir in this mount namespace.
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skip("no /proc/self/mountinfo here")
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// TestDir_Sized: with a size, each session folder is a tmpfs of that
// size: writes past it fail with ENOSPC and Free says the folder is
// full; the folder's end unmounts it. Where this process may not mount
// one, the folder is a plain one and Size says why.
func TestDir_Sized(t *testing.T) {
	root := t.TempDir()
	f, err := Open(Options{Root: root, SizeMB: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.Dir("a")
	if err != nil {
		t.Fatal(err)
	}
	if mb, why := f.Size(); mb == 0 {
		if why == nil {
			t.Fatal("the folder got no size, and Size says no reason")
		}
		if _, _, ok := Free(d); ok {
			t.Error("Free takes a plain folder for a sized one")
		}
		t.Skipf("no tmpfs here: %v", why)
	}
	if _, full, ok := Free(d); !ok || full {
		t.Fatalf("a new sized folder: Free ok %v, full %v; want ok and not full", ok, full)
	}
	err = os.WriteFile(filepath.Join(d, "big"), make([]byte, 3<<20), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing 3 MiB in a folder of 2: %v, want ENOSPC", err)
	}
	if free, full, _ := Free(d); !full {
		t.Errorf("Free after filling the folder: %d bytes free, not full", free)
	}
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the tmpfs root: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if !mounted(t, d) {
		t.Fatal("the session folder is not a mount point")
	}
	f.End("a")
	if mounted(t, d) || exists(d) {
		t.Errorf("after the session's end: mounted %v, exists %v; want neither", mounted(t, d), exists(d))
	}
}
