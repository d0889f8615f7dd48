package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testTree is a tree of its own for one test, beside this process's
// folder, so that a test killing every live group of its tree kills
// nothing of another test running in parallel.
func testTree(t *testing.T) *tree {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Skipf("cgroup v2 layer missing here, nothing to test: %v", err)
	}
	tr := &tree{proc: "/proc/self", pid: os.Getpid()}
	tr.rootOnce.Do(func() {
		tr.root = filepath.Join(filepath.Dir(root), fmt.Sprintf("%s%d-%s", PrefixProcess, os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")))
	})
	t.Cleanup(func() {
		// Whatever a failed test left: kill it, then remove the folders.
		entries, _ := os.ReadDir(tr.root)
		for _, e := range entries {
			for _, pid := range procsUnder(filepath.Join(tr.root, e.Name()), 0) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			entries, _ := os.ReadDir(tr.root)
			for _, e := range entries {
				syscall.Rmdir(filepath.Join(tr.root, e.Name()))
			}
			if syscall.Rmdir(tr.root) == nil || errors.Is(syscall.Rmdir(tr.root), syscall.ENOENT) || time.Now().After(deadline) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	return tr
}

// startIn runs script with bash inside g, born there (CLONE_INTO_CGROUP),
// and returns the pids the script wrote, one a line, to the file "$P",
// once it has written n of them. The processes are killed at the end of
// the test whatever happens.
func startIn(t *testing.T, g *Group, script string, n int) (<-chan struct{}, []int) {
	t.Helper()
	pids := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "P="+pids)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: g.FD()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start in cgroup %s: %v", g.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		for _, p := range readPidFile(pids) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got := readPidFile(pids); len(got) >= n {
			return done, got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script wrote %v within 5s, want %d pids", readPidFile(pids), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readPidFile(path string) []int {
	b, _ := os.ReadFile(path)
	var out []int
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[:len(lines)-1] { // the last is still being written
		if p, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// waitGone polls (5 ms steps, 5 s cap) and returns the pids still alive.
func waitGone(pids []int) []int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return !alive(p) })
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// escapers leave the command's process group and session every way bash
// can; each writes its pid to $P.
const escapers = `setsid sleep 300 & echo $! >> "$P"
setsid -f bash -c 'echo $$ >> "$P"; exec sleep 300'
set -m; sleep 300 & echo $! >> "$P"; set +m
( (bash -c 'echo $$ >> "$P"; exec sleep 300' &) & )
echo $$ >> "$P"
wait`

func TestKill_KillsEveryProcessOfTheGroup(t *testing.T) {
	t.Parallel()
	for _, signals := range []bool{false, true} {
		t.Run(fmt.Sprintf("signals=%v", signals), func(t *testing.T) {
			t.Parallel()
			tr := testTree(t)
			g, err := tr.newGroup(false)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer g.Release()
			g.forceSignals = signals
			if !strings.HasPrefix(g.Name(), PrefixLive) {
				t.Errorf("name = %q, want live-N", g.Name())
			}
			_, pids := startIn(t, g, escapers, 5)
			if n := g.Procs(); n < 5 {
				t.Errorf("Procs() = %d, want the 5 processes and more", n)
			}
			if err := g.Kill(); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			if left := waitGone(pids); len(left) > 0 {
				t.Errorf("processes %v of %v outlived the kill of their cgroup", left, pids)
			}
		})
	}
}

func TestRelease_KeepsSurvivorsAndNeverKillsThem(t *testing.T) {
	t.Parallel()
	for _, move := range []bool{false, true} {
		t.Run(map[bool]string{false: "marked", true: "moved"}[move], func(t *testing.T) {
			t.Parallel()
			tr := testTree(t)
			tr.noMark = move
			g, err := tr.newGroup(false)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			beat := filepath.Join(t.TempDir(), "beat")
			done, pids := startIn(t, g, `nohup bash -c 'while :; do echo >> "$0"; sleep 0.005; done' '`+beat+`' >/dev/null 2>&1 & echo $! >> "$P"`, 1)
			<-done // bash itself ends; its daemon stays
			start := time.Now()
			g.Release()
			t.Logf("Release with a survivor took %v", time.Since(start))
			if !Released(g.Dir()) {
				t.Errorf("released group %s (now %s) does not say it was released", g.Path, g.Dir())
			}
			if move {
				if want := PrefixKept + strings.TrimPrefix(filepath.Base(g.Path), PrefixLive); g.Name() != want {
					t.Errorf("released group %s is %s, want kept-N with the same N", g.Path, g.Dir())
				}
				if _, err := os.Stat(g.Path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the live folder after its processes moved: %v, want it removed", err)
				}
			} else if g.Dir() != g.Path {
				t.Errorf("a marked group moved: %s, want it at %s", g.Dir(), g.Path)
			}
			if procs := readProcs(g.Dir()); !slices.Contains(procs, pids[0]) {
				t.Errorf("the released group holds %v, want the daemon %v (and its sleeps)", procs, pids)
			}
			if err := g.Kill(); err != nil {
				t.Errorf("Kill after Release: %v, want nil (it kills nothing)", err)
			}
			if n, err := KillLive(tr.root); err != nil || n != 0 {
				t.Errorf("KillLive = %d, %v; want 0: a released group is not live", n, err)
			}
			time.Sleep(20 * time.Millisecond) // a kill, had there been one, lands well within this
			if !alive(pids[0]) {
				t.Fatalf("the daemon %d of a released group died", pids[0])
			}
			// And it runs: a freeze that kept it from forking during a move
			// is gone.
			if b, _ := os.ReadFile(filepath.Join(g.Dir(), "cgroup.events")); !strings.Contains(string(b), "frozen 0") {
				t.Errorf("the released group's events say %q, want frozen 0", b)
			}
			st, _ := os.Stat(beat)
			deadline := time.Now().Add(5 * time.Second)
			for {
				now, _ := os.Stat(beat)
				if st == nil {
					st = now // its first beat may not be written yet
				} else if now != nil && now.Size() > st.Size() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the daemon %d of a released group stopped running (its heartbeat file stays at %v)", pids[0], st)
				}
				time.Sleep(5 * time.Millisecond)
			}
			// Once it is gone, the sweep removes the folder.
			syscall.Kill(pids[0], syscall.SIGKILL)
			waitGone(pids)
			deadline = time.Now().Add(5 * time.Second)
			for {
				tr.sweep(true)
				if _, err := os.Stat(g.Dir()); errors.Is(err, os.ErrNotExist) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the sweep left %s after its processes ended", g.Dir())
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

func TestRelease_ReusesOrRemovesAnEmptyGroup(t *testing.T) {
	t.Parallel()
	tr := testTree(t)
	var groups []*Group
	for range maxIdle + 1 {
		g, err := tr.newGroup(false)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		cmd := exec.Command("true")
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
		if err := cmd.Run(); err != nil {
			t.Fatalf("run in the cgroup: %v", err)
		}
		groups = append(groups, g)
	}
	for _, g := range groups {
		g.Release()
		g.Release() // twice is once
	}
	// The last one found the pool full: removed.
	if last := groups[maxIdle]; !errors.Is(statErr(last.Path), os.ErrNotExist) {
		t.Errorf("an empty released group beyond the %d kept for reuse: %v, want its folder removed", maxIdle, statErr(last.Path))
	}
	again, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if !slices.ContainsFunc(groups[:maxIdle], func(g *Group) bool { return g.Path == again.Path }) {
		t.Errorf("New made %s, want one of the empty released groups reused", again.Path)
	}
	if err := groups[0].Kill(); err != nil {
		t.Errorf("Kill of a released group whose folder was reused: %v", err)
	}
	again.Release()
	tr.cleanup()
	for _, g := range groups {
		if !errors.Is(statErr(g.Path), os.ErrNotExist) {
			t.Errorf("after Cleanup %s: %v, want it removed", g.Path, statErr(g.Path))
		}
	}
}

func statErr(p string) error {
	_, err := os.Stat(p)
	return err
}

func TestKillLive_KillsLiveGroupsOnly(t *testing.T) {
	t.Parallel()
	tr := testTree(t)
	live, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer live.Release()
	bg, err := tr.newGroup(true)
	if err != nil {
		t.Fatalf("New(background): %v", err)
	}
	defer bg.Release()
	kept, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if !strings.HasPrefix(bg.Name(), PrefixBackground) || !bg.Background() {
		t.Errorf("background group is %s, want bg-N", bg.Name())
	}
	_, lp := startIn(t, live, `setsid sleep 300 & echo $! >> "$P"; wait`, 1)
	_, bp := startIn(t, bg, `setsid sleep 300 & echo $! >> "$P"; wait`, 1)
	_, kp := startIn(t, kept, `setsid sleep 300 & echo $! >> "$P"; wait`, 1)
	kept.Release()
	n, err := KillLive(tr.root)
	if err != nil || n != 1 {
		t.Errorf("KillLive = %d, %v; want 1 group", n, err)
	}
	if left := waitGone(lp); len(left) > 0 {
		t.Errorf("the live group's process %v survived KillLive", left)
	}
	time.Sleep(20 * time.Millisecond)
	if !alive(bp[0]) || !alive(kp[0]) {
		t.Errorf("KillLive killed a bg (%v alive=%v) or kept (%v alive=%v) group's process", bp, alive(bp[0]), kp, alive(kp[0]))
	}
}

func TestDirOf_IsWhereAProcessMakesItsGroups(t *testing.T) {
	t.Parallel()
	root, err := Root()
	if err != nil {
		t.Skipf("cgroup v2 layer missing here: %v", err)
	}
	got, err := DirOf(os.Getpid())
	if err != nil || got != root {
		t.Errorf("DirOf(self) = %q, %v; want Root() %q", got, err, root)
	}
	if !strings.HasSuffix(root, "/"+PrefixProcess+strconv.Itoa(os.Getpid())) {
		t.Errorf("Root() = %q, want it to end in yagent.<pid>", root)
	}
}

func TestRoot_SaysWhyThereIsNone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, mountinfo, cgroup, want string
	}{
		{"read-only", "700 690 0:26 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n", "0::/\n", "read-only"},
		{"not mounted", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", "0::/\n", "not mounted"},
		{"v1 only", hybridMountinfo, "1:cpu:/\n", "v1 only"},
		{"missing folder", "41 31 0:38 / /nonexistent/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n", "missing"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "mountinfo"), []byte(c.mountinfo), 0o600)
		os.WriteFile(filepath.Join(dir, "cgroup"), []byte(c.cgroup), 0o600)
		tr := &tree{proc: dir, pid: 1}
		_, err := tr.rootDir()
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrUnavailable saying %q", c.name, err, c.want)
		}
		if g, err := tr.newGroup(false); g != nil || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: New = %v, %v; want ErrUnavailable", c.name, g, err)
		}
	}

	// A threaded cgroup, at a mount point of the test's own.
	dir, mnt := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(mnt, "cgroup.type"), []byte("threaded\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "mountinfo"), []byte("41 31 0:38 / "+mnt+" rw - cgroup2 cgroup2 rw\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "cgroup"), []byte("0::/\n"), 0o600)
	tr := &tree{proc: dir, pid: 1}
	if _, err := tr.rootDir(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "threaded") {
		t.Errorf("threaded: err = %v, want ErrUnavailable saying it is threaded", err)
	}
	// The same folder as a domain: there is a root.
	os.WriteFile(filepath.Join(mnt, "cgroup.type"), []byte("domain\n"), 0o600)
	os.WriteFile(filepath.Join(mnt, "cgroup.procs"), nil, 0o600)
	tr = &tree{proc: dir, pid: 1}
	if root, err := tr.rootDir(); err != nil || root != filepath.Join(mnt, "yagent.1") {
		t.Errorf("domain: root = %q, %v; want %s", root, err, filepath.Join(mnt, "yagent.1"))
	}
}

func TestSweepDeadProcesses_RemovesOnlyTheDeadsEmptyFolders(t *testing.T) {
	t.Parallel()
	root, err := Root()
	if err != nil {
		t.Skipf("cgroup v2 layer missing here: %v", err)
	}
	parent := filepath.Dir(root)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadDir := filepath.Join(parent, PrefixProcess+strconv.Itoa(dead.Process.Pid))
	liveDir := filepath.Join(parent, PrefixProcess+strconv.Itoa(os.Getppid()))
	for _, d := range []string{deadDir, liveDir} {
		if _, err := os.Stat(d); err == nil {
			t.Skipf("%s exists already", d)
		}
	}
	for _, d := range []string{deadDir + "/kept-1", liveDir + "/kept-1"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range []string{deadDir + "/kept-1", deadDir, liveDir + "/kept-1", liveDir} {
			syscall.Rmdir(d)
		}
	})
	sweepDeadProcesses(parent, os.Getpid(), time.Hour)
	if _, err := os.Stat(deadDir); err != nil {
		t.Errorf("a folder made just now was swept: %v", err)
	}
	sweepDeadProcesses(parent, os.Getpid(), 0)
	if _, err := os.Stat(deadDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder of dead process %d: %v, want it removed", dead.Process.Pid, err)
	}
	if _, err := os.Stat(liveDir + "/kept-1"); err != nil {
		t.Errorf("a live process's folder was swept: %v", err)
	}
}

func TestRemoveEmpty_LeavesWhatStillRuns(t *testing.T) {
	t.Parallel()
	tr := testTree(t)
	busy, err := tr.newGroup(true)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	idle, err := tr.newGroup(true)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, pids := startIn(t, busy, `setsid sleep 300 & echo $! >> "$P"; wait`, 1)
	if RemoveEmpty(tr.root) {
		t.Fatalf("RemoveEmpty(%s) = true with %s running in it", tr.root, busy.Path)
	}
	if !errors.Is(statErr(idle.Path), os.ErrNotExist) || statErr(busy.Path) != nil {
		t.Errorf("after RemoveEmpty: empty %s: %v (want removed), busy %s: %v (want kept)", idle.Path, statErr(idle.Path), busy.Path, statErr(busy.Path))
	}
	if err := busy.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(pids)
	deadline := time.Now().Add(5 * time.Second)
	for !RemoveEmpty(tr.root) {
		if time.Now().After(deadline) {
			t.Fatalf("RemoveEmpty(%s) still false after its last process ended", tr.root)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A group that was killed is never handed to the next command: a process
// cloned into it right after its cgroup.kill can die with the old ones.
// The command after a timed-out one must live.
func TestRelease_KilledGroupNotReused(t *testing.T) {
	t.Parallel()
	tr := testTree(t)
	g, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	victim := exec.Command("sleep", "300")
	victim.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	if err := g.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	victim.Wait()
	g.Release()
	next, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer next.Release()
	if next.Path == g.Path {
		t.Errorf("New handed out %s again, the group Kill just killed", g.Path)
	}
	for range 20 {
		cmd := exec.Command("true")
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: next.FD()}
		if err := cmd.Run(); err != nil {
			t.Fatalf("a command in the next group died: %v", err)
		}
	}
}
