package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// boundedTree is testTree for a test of the bounds: skipped where one of
// need is missing here; whatever the test leaves in the cgroup v1 folders
// of groups is killed and removed at its end.
func boundedTree(t *testing.T, need ...string) *tree {
	t.Helper()
	tr := testTree(t)
	for _, e := range tr.enforcements() {
		for _, b := range need {
			if e.Bound == b && e.Via == "" {
				t.Skipf("the %s bound is missing here: %s", b, e.Why)
			}
		}
	}
	t.Cleanup(func() {
		for _, w := range tr.resolvedWays() {
			if !w.v1 {
				continue
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				entries, _ := os.ReadDir(w.base)
				for _, e := range entries {
					if !e.IsDir() {
						continue
					}
					for _, pid := range readProcs(filepath.Join(w.base, e.Name())) {
						syscall.Kill(pid, syscall.SIGKILL)
					}
					syscall.Rmdir(filepath.Join(w.base, e.Name()))
				}
				err := syscall.Rmdir(w.base)
				if err == nil || errors.Is(err, syscall.ENOENT) || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
	return tr
}

// startBounded starts script with bash in g as the shell plugin does:
// born in g's cgroup v2, from a locked thread that joined g's cgroup v1
// groups for the fork. It returns the command, waited for in the
// background (done closes when it has exited); it is killed at the end
// of the test.
func startBounded(t *testing.T, g *Group, script string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: g.FD()}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		leave, err := g.JoinThread()
		if err != nil {
			errc <- err
			return
		}
		err = cmd.Start()
		leave()
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatalf("start in cgroup %s: %v", g.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		g.Kill()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd, done
}

// waitHits polls g's hits until ok says they are there, at most limit.
func waitHits(g *Group, limit time.Duration, ok func(Hits) bool) Hits {
	deadline := time.Now().Add(limit)
	for {
		h := g.Hits()
		if ok(h) || time.Now().After(deadline) {
			return h
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inV1Groups reports whether process pid is in each of g's cgroup v1
// groups.
func inV1Groups(g *Group, pid int) bool {
	for _, v := range g.v1 {
		found := false
		for _, p := range readProcs(v.dir) {
			found = found || p == pid
		}
		if !found {
			return false
		}
	}
	return true
}

func TestBound_PidsStopsAForkBomb(t *testing.T) {
	t.Parallel()
	tr := boundedTree(t, BoundPids)
	g, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer g.Release()
	if err := g.Bound(Limits{Pids: 8}); err != nil {
		t.Fatalf("Bound: %v", err)
	}
	// A fork bomb, as `:(){ :|:& };:`, but that stops forking 8 levels
	// down, where its 256 leaves sleep a second: where the bound fails,
	// the test fails without harming the machine.
	cmd, done := startBounded(t, g, `b() { if [ "$1" -gt 0 ]; then b $(($1-1)) | b $(($1-1)) & else sleep 1; fi; }; b 8; sleep 1`)
	if !inV1Groups(g, cmd.Process.Pid) {
		t.Errorf("the command (pid %d) is not in its cgroup v1 groups %v", cmd.Process.Pid, g.v1)
	}
	h := waitHits(g, 10*time.Second, func(h Hits) bool { return h.Forks > 0 })
	if h.Forks == 0 {
		t.Fatalf("Hits() = %+v after 10s of a fork bomb under pids 8: the bound refused no fork", h)
	}
	if n := g.Procs(); n > 8 {
		t.Errorf("the group holds %d processes, over its bound of 8", n)
	}
	if err := g.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	<-done
	deadline := time.Now().Add(5 * time.Second)
	for g.Procs() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := g.Procs(); n > 0 {
		t.Errorf("%d processes of the fork bomb outlived the kill of their group", n)
	}
}

func TestBound_MemoryKillsAHog(t *testing.T) {
	t.Parallel()
	tr := boundedTree(t, BoundMemory)
	g, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer g.Release()
	if err := g.Bound(Limits{MemoryMB: 32}); err != nil {
		t.Fatalf("Bound: %v", err)
	}
	// tail keeps the last line of its input, here all of it: 256 MiB of
	// zeros (where the bound fails, the test fails, and that is all).
	cmd, done := startBounded(t, g, `head -c 256M /dev/zero | tail`)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("tail of 256 MiB under 32 MiB still runs after 20s")
	}
	// The kernel kills the largest process, tail, and bash reports 137;
	// when what is left is still over the bound (pipe buffers are charged
	// to the group too), it kills bash next. Either is the bound at work;
	// a pipeline that ends any other way is not.
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGKILL) && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
		t.Errorf("the pipeline ended with %v, want tail (137) or the pipeline killed by SIGKILL", cmd.ProcessState)
	}
	if h := waitHits(g, 2*time.Second, func(h Hits) bool { return h.OOMKills > 0 }); h.OOMKills == 0 {
		t.Errorf("Hits() = %+v, want an OOM kill counted", h)
	}
}

func TestBound_CommandUnderTheBoundsUnaffected(t *testing.T) {
	t.Parallel()
	tr := boundedTree(t, BoundPids, BoundMemory)
	g, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer g.Release()
	if err := g.Bound(Limits{Pids: 64, MemoryMB: 256}); err != nil {
		t.Fatalf("Bound: %v", err)
	}
	cmd, done := startBounded(t, g, `for i in $(seq 30); do sleep 0.2 & done; wait; head -c 64M /dev/zero | wc -c`)
	<-done
	if !cmd.ProcessState.Success() {
		t.Errorf("the command failed under bounds it stays within: %v", cmd.ProcessState)
	}
	if h := g.Hits(); h.Any() {
		t.Errorf("Hits() = %+v for a command within its bounds", h)
	}
}

func TestBound_ReusedGroupCountsItsCommandOnlyAndLiftsBounds(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("dash"); err != nil {
		t.Skip("no dash: its fork fails at once where bash retries")
	}
	tr := boundedTree(t, BoundPids)
	// 8 processes at once: dash fails its fork at once where a bound
	// refuses it (exit 2).
	eight := `dash -c 'for i in 1 2 3 4 5 6 7 8; do sleep 0.1 & done; wait'`
	g, err := tr.newGroup(false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := g.Bound(Limits{Pids: 4}); err != nil {
		t.Fatalf("Bound: %v", err)
	}
	_, done := startBounded(t, g, eight+`; sleep 0.3`)
	<-done
	if h := g.Hits(); h.Forks == 0 {
		t.Fatalf("Hits() = %+v: 8 forks under pids 4 refused none", h)
	}
	// reuse returns g's folder to the idle groups and takes it again.
	reuse := func(prev *Group, l Limits) *Group {
		t.Helper()
		path := prev.Path
		prev.Release()
		next, err := tr.newGroup(false)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(next.Release)
		if next.Path != path {
			t.Skipf("the empty group was not kept for reuse (%s, then %s)", path, next.Path)
		}
		if err := next.Bound(l); err != nil {
			t.Fatalf("Bound(%+v): %v", l, err)
		}
		return next
	}
	g2 := reuse(g, Limits{})
	cmd, done := startBounded(t, g2, eight)
	<-done
	if !cmd.ProcessState.Success() {
		t.Errorf("8 processes in a reused group whose bound of 4 was lifted: %v", cmd.ProcessState)
	}
	g3 := reuse(g2, Limits{Pids: 64})
	if h := g3.Hits(); h.Any() {
		t.Errorf("the reused group counts the forks refused to an earlier command: %+v", h)
	}
	cmd, done = startBounded(t, g3, eight)
	<-done
	if h := g3.Hits(); !cmd.ProcessState.Success() || h.Any() {
		t.Errorf("8 processes under a bound of 64: %v, hits %+v", cmd.ProcessState, h)
	}
}

func TestRelease_RemovesTheV1Groups(t *testing.T) {
	t.Parallel()
	tr := boundedTree(t)
	var v1 bool
	for _, w := range tr.resolvedWays() {
		v1 = v1 || w.v1
	}
	if !v1 {
		t.Skip("no bound goes through cgroup v1 here")
	}
	g, err := tr.newGroup(true) // background: never kept for reuse
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := g.Bound(Limits{Pids: 100, MemoryMB: 100}); err != nil {
		t.Fatalf("Bound: %v", err)
	}
	var dirs []string
	for _, v := range g.v1 {
		dirs = append(dirs, v.dir)
		if filepath.Base(v.dir) != filepath.Base(g.Path) {
			t.Errorf("cgroup v1 group %s is not named like its cgroup v2 %s", v.dir, g.Path)
		}
	}
	if len(dirs) == 0 {
		t.Fatal("Bound made no cgroup v1 group")
	}
	g.Release()
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup v1 group %s outlived the release of its empty group (%v)", d, err)
		}
	}
}

func TestDecide_V2ThenV1ThenWhy(t *testing.T) {
	v2 := func(ctrls, sub string, realRoot, writable bool) v2View {
		return v2View{dir: "/cg/own", root: "/cg/own/yagent.7", controllers: strings.Fields(ctrls), subtree: strings.Fields(sub),
			realRoot: realRoot, subtreeWritable: writable}
	}
	v1 := v1View{own: "/v1/pids/own"}
	none := v1View{why: "no cgroup v1 pids hierarchy is mounted"}
	cases := []struct {
		name   string
		b      string
		v2     v2View
		v1     v1View
		via    string // "v2", "v1" or ""
		enable bool
		why    string
	}{
		{"enabled for the children", BoundMemory, v2("memory pids", "memory", false, false), v1, "v2", false, ""},
		{"pids enabled here first", BoundPids, v2("memory pids", "", false, true), v1, "v2", true, ""},
		{"memory beside processes: v1", BoundMemory, v2("memory pids", "", false, true), v1, "v1", false, ""},
		{"memory at the root", BoundMemory, v2("memory", "", true, true), v1, "v2", true, ""},
		{"not writable: v1", BoundPids, v2("pids", "", false, false), v1, "v1", false, ""},
		{"no v2 controller: v1", BoundPids, v2("hugetlb", "", false, true), v1, "v1", false, ""},
		{"neither", BoundPids, v2("hugetlb", "", false, true), none, "", false, "cgroup v2 has no pids controller for /cg/own"},
		{"v2 beside processes, no v1", BoundMemory, v2("memory", "", false, true), v1View{why: "no cgroup v1 memory hierarchy is mounted"}, "",
			false, "cannot while processes run in it, and no cgroup v1 memory hierarchy is mounted"},
	}
	for _, c := range cases {
		w := decide(c.b, c.v2, c.v1)
		via := ""
		switch {
		case w.ok && w.v1:
			via = "v1"
		case w.ok:
			via = "v2"
		}
		if via != c.via || w.enableOwn != c.enable {
			t.Errorf("%s: via %q enableOwn %v (%+v), want via %q enableOwn %v", c.name, via, w.enableOwn, w, c.via, c.enable)
		}
		switch via {
		case "v1":
			if w.base != "/v1/pids/own/yagent.7" || w.own != "/v1/pids/own" {
				t.Errorf("%s: v1 base %q own %q, want /v1/pids/own/yagent.7 under /v1/pids/own", c.name, w.base, w.own)
			}
		case "v2":
			if w.base != "/cg/own/yagent.7" {
				t.Errorf("%s: v2 base %q, want /cg/own/yagent.7", c.name, w.base)
			}
		default:
			if !strings.Contains(w.why, c.why) || !strings.Contains(w.why, "Delegate=yes") {
				t.Errorf("%s: why = %q, want it to hold %q and say what to do", c.name, w.why, c.why)
			}
		}
	}
}

// fakeLimits makes a folder holding empty limit files, as a cgroup's.
func fakeLimits(t *testing.T, names ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return dir, fd
}

func TestBoundV2_WritesTheControllerFiles(t *testing.T) {
	read := func(dir, name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	dir, fd := fakeLimits(t, "pids.max", "memory.max", "memory.swap.max")
	if err := boundV2(fd, BoundPids, 4096); err != nil || read(dir, "pids.max") != "4096" {
		t.Errorf("pids 4096: pids.max = %q, err %v", read(dir, "pids.max"), err)
	}
	if err := boundV2(fd, BoundMemory, 64); err != nil || read(dir, "memory.max") != "67108864" || read(dir, "memory.swap.max") != "0" {
		t.Errorf("memory 64: memory.max = %q, memory.swap.max = %q, err %v; want 67108864 and no swap", read(dir, "memory.max"), read(dir, "memory.swap.max"), err)
	}
	dir, fd = fakeLimits(t, "pids.max", "memory.max", "memory.swap.max")
	boundV2(fd, BoundPids, 0)
	boundV2(fd, BoundMemory, 0)
	if read(dir, "pids.max") != "max" || read(dir, "memory.max") != "max" || read(dir, "memory.swap.max") != "max" {
		t.Errorf("no bound: %q %q %q, want max for each", read(dir, "pids.max"), read(dir, "memory.max"), read(dir, "memory.swap.max"))
	}
	// A kernel without swap accounting has no memory.swap.max.
	dir, fd = fakeLimits(t, "memory.max")
	if err := boundV2(fd, BoundMemory, 1); err != nil || read(dir, "memory.max") != "1048576" {
		t.Errorf("memory 1 without swap accounting: memory.max = %q, err %v", read(dir, "memory.max"), err)
	}
}

func TestCounter_ReadsTheEventFiles(t *testing.T) {
	if n := counter("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n", "oom_kill"); n != 2 {
		t.Errorf("memory.events oom_kill = %d, want 2", n)
	}
	if n := counter("max 7\n", "max"); n != 7 {
		t.Errorf("pids.events max = %d, want 7", n)
	}
	if n := counter("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n", "oom_kill"); n != 5 {
		t.Errorf("memory.oom_control oom_kill = %d, want 5", n)
	}
}
