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

	"github.com/yagent/yagent/internal/sandbox/cgroup"
	"github.com/yagent/yagent/sdk"
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
	pidFile := filepath.Join(t.TempDir(), "pids")
	errc := make(chan error, 1)
	go func() {
		_, err := call(context.Background(), p, "test_cgroups", map[string]string{"pid_file": pidFile}, nil)
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
	live, bg, kept := pids[0], pids[1], pids[2]
	pluginPID := p.PID()
	dir, err := cgroup.DirOf(pluginPID)
	if err != nil {
		t.Fatalf("DirOf(plugin): %v", err)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// The dead plugin's folders, once their processes are gone.
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
	time.Sleep(50 * time.Millisecond) // a kill of the others, had there been one, lands well within this
	if processGone(bg) {
		t.Errorf("the background command %d (bg-N cgroup) died with its plugin", bg)
	}
	if processGone(kept) {
		t.Errorf("the process %d a returned call left (kept-N cgroup) died with its plugin", kept)
	}
}
