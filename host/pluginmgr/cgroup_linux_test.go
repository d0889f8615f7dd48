package pluginmgr

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// A plugin killed with its commands in flight: the host kills their cgroups
// (live-N), setsid children included, and never a background command's
// (bg-N) or what a returned call left (kept-N).
func TestCrash_KillsLiveCgroupsOnly(t *testing.T) {
	if _, err := cgroup.Root(); err != nil {
		t.Skipf("cgroup v2 layer missing here, plugins' commands run in process groups: %v", err)
	}
	t.Parallel()
	p := loadTest(t, newManager(t, Options{}))
	errc, live, bg, kept := startCgroups(t, p, context.Background())
	pluginPID := p.PID()
	if err := syscall.Kill(pluginPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		wantToolError(t, "Execute(test_cgroups) when the plugin is killed", err, sdk.CodePluginCrashed, "plugin test")
	case <-time.After(10 * time.Second):
		t.Fatal("Execute(test_cgroups) did not return after its plugin was killed")
	}
	waitFor(t, "the dead plugin's live cgroup to be killed", func() bool { return processGone(live) })
	dir, _ := cgroup.DirOf(os.Getpid()) // the plugin's folder is beside this process's
	dir = filepath.Join(filepath.Dir(dir), cgroup.PrefixProcess+strconv.Itoa(pluginPID))
	waitFor(t, "the dead plugin's emptied live cgroup to be removed", func() bool {
		_, err := os.Stat(filepath.Join(dir, cgroup.PrefixLive+"1"))
		return os.IsNotExist(err)
	})
	time.Sleep(50 * time.Millisecond) // a kill of the others, had there been one, lands well within this
	if processGone(bg) {
		t.Errorf("the background command %d (bg-N cgroup) died with its plugin", bg)
	}
	if processGone(kept) {
		t.Errorf("the process %d a returned call left (kept-N cgroup) died with its plugin", kept)
	}
}

// The host's hard exit (a second signal) kills the live cgroups of a
// plugin that is still running, and nothing else.
func TestKillReportedGroups_KillsLiveCgroups(t *testing.T) {
	if _, err := cgroup.Root(); err != nil {
		t.Skipf("cgroup v2 layer missing here, plugins' commands run in process groups: %v", err)
	}
	t.Parallel()
	m := newManager(t, Options{})
	p := loadTest(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, live, bg, kept := startCgroups(t, p, ctx)
	pluginPID := p.PID()
	m.KillReportedGroups()
	waitFor(t, "the plugin's live cgroup to be killed", func() bool { return processGone(live) })
	time.Sleep(50 * time.Millisecond)
	if processGone(bg) || processGone(kept) || processGone(pluginPID) {
		t.Errorf("KillReportedGroups killed more than the live cgroup: bg %d gone=%v, kept %d gone=%v, plugin %d gone=%v",
			bg, processGone(bg), kept, processGone(kept), pluginPID, processGone(pluginPID))
	}
}

// startCgroups calls test_cgroups and returns, once they run, the pids of
// its setsid sleeps in a live, a bg and a kept cgroup of the plugin; they
// and the plugin's cgroup folders go when the test ends.
func startCgroups(t *testing.T, p *Plugin, ctx context.Context) (errc chan error, live, bg, kept int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pids")
	errc = make(chan error, 1)
	go func() {
		_, err := call(ctx, p, "test_cgroups", map[string]string{"pid_file": pidFile}, nil)
		errc <- err
	}()
	var pids []int
	waitFor(t, pidFile, func() bool {
		b, _ := os.ReadFile(pidFile)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		return len(pids) == 3
	})
	dir, err := cgroup.DirOf(p.PID())
	if err != nil {
		t.Fatalf("DirOf(plugin): %v", err)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// The plugin's folders, once their processes are gone (its own
		// Cleanup leaves the ones that were not empty).
		deadline := time.Now().Add(5 * time.Second)
		for {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				syscall.Rmdir(filepath.Join(dir, e.Name()))
			}
			if err := syscall.Rmdir(dir); err == nil || err == syscall.ENOENT || time.Now().After(deadline) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	return errc, pids[0], pids[1], pids[2]
}

// A plugin that dies with no call in flight still owned commands (a task
// that yielded): the host kills their live cgroups when the process exits,
// not at the next call.
func TestIdleDeath_KillsLiveCgroups(t *testing.T) {
	if _, err := cgroup.Root(); err != nil {
		t.Skipf("cgroup v2 layer missing here, plugins' commands run in process groups: %v", err)
	}
	t.Parallel()
	p := loadTest(t, newManager(t, Options{}))
	ctx, cancel := context.WithCancel(context.Background())
	errc, live, bg, kept := startCgroups(t, p, ctx)
	cancel() // the call ends; its live cgroup stays the plugin's
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	if processGone(live) {
		t.Fatalf("the live command %d died with its call: the test proves nothing", live)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the idle dead plugin's live cgroup to be killed", func() bool { return processGone(live) })
	if processGone(bg) || processGone(kept) {
		t.Errorf("a background (%d) or released (%d) command died with its idle plugin", bg, kept)
	}
}
