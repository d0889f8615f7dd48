//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// Join runs on the thread that forks, before the fork, and its leave on
// the same thread after it; an error fails the start before anything runs.
func TestStart_JoinsOnTheForkingThreadAndLeavesAfter(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	var joined, left int
	var started bool
	cmd := exec.Command("/bin/true")
	p.Join = func() (func(), error) {
		joined = unix.Gettid()
		return func() { left, started = unix.Gettid(), cmd.Process != nil }, nil
	}
	if _, err := Start(cmd, p); err != nil {
		t.Fatalf("Start: %v", err)
	}
	cmd.Wait()
	if joined == 0 || left != joined || joined == os.Getpid() {
		t.Errorf("joined on thread %d, left on %d (process %d): want one thread of its own", joined, left, os.Getpid())
	}
	if !started {
		t.Error("leave ran before the command started")
	}

	p.Join = func() (func(), error) { return nil, errors.New("no group") }
	cmd = exec.Command("/bin/true")
	if _, err := Start(cmd, p); err == nil || !strings.Contains(err.Error(), "no group") || cmd.Process != nil {
		t.Errorf("Start with a failing Join: err %v, process %v; want the error and nothing started", err, cmd.Process)
	}
}

// With a cgroup v1 group to join, the command is born in it under every
// layer, and the starting thread leaves it though Landlock confines the
// thread by then: a thread kept until the command ends (Pdeathsig) is not
// in the group beside it.
func TestStart_CommandBornInItsV1GroupsThreadLeaves(t *testing.T) {
	requireLayers(t, true, false, false)
	v1 := false
	for _, e := range cgroup.Enforcements() {
		v1 = v1 || e.Via == cgroup.ViaV1
	}
	if !v1 {
		t.Skip("no bound goes through a cgroup v1 hierarchy here")
	}
	g, err := cgroup.New(true)
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	defer cgroup.Cleanup()
	defer g.Release()
	if err := g.Bound(cgroup.Limits{Pids: 64, MemoryMB: 256}); err != nil {
		t.Fatalf("Bound: %v", err)
	}
	f := newFixture(t)
	p := f.policy()
	p.Join = g.JoinThread
	cmd := exec.Command("/bin/bash", "-c", "cat /proc/self/cgroup; exec sleep 1")
	cmd.Env = p.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, UseCgroupFD: true, CgroupFD: g.FD()}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(cmd, p); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() { g.Kill(); cmd.Wait() }()
	b := make([]byte, 4096)
	n, _ := out.Read(b)
	cgroups := string(b[:n])
	time.Sleep(100 * time.Millisecond) // the sleep has started
	var tasks []string
	for _, e := range cgroup.Enforcements() {
		if e.Via != cgroup.ViaV1 {
			continue
		}
		dir := filepath.Join(e.Dir, filepath.Base(g.Path))
		if !strings.Contains(cgroups, filepath.Base(e.Dir)+"/"+filepath.Base(g.Path)+"\n") {
			t.Errorf("the command's cgroups %q do not hold its %s group %s", cgroups, e.Bound, dir)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "tasks"))
		if err != nil {
			t.Fatal(err)
		}
		tasks = strings.Fields(string(raw))
		if !slices.Equal(tasks, []string{strconv.Itoa(cmd.Process.Pid)}) {
			t.Errorf("the %s group holds tasks %v, want the command's %d alone: the starting thread did not leave", e.Bound, tasks, cmd.Process.Pid)
		}
	}
}
