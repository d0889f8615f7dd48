//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// The bounds of a command's tree (sandbox.pids, sandbox.memory_mb): a
// command that runs into one is stopped, and its result names the bound;
// one within them runs as before. The fork bomb and the memory hog here
// bound themselves too (a depth, a size), so that a build whose bounds are
// broken fails these tests without harming the machine. They do not run
// beside the parallel tests, whose timings their load would upset.

// requireBound skips a test whose bound is missing here.
func requireBound(t *testing.T, bound string) {
	t.Helper()
	requireCgroup(t)
	for _, e := range cgroup.Enforcements() {
		if e.Bound == bound && e.Via == "" {
			t.Skipf("the %s bound is missing here, commands run without it: %s", bound, e.Why)
		}
	}
}

// bounded is a call context whose sandbox bounds the command's tree.
func (f *fixture) bounded(parent context.Context, pids, memoryMB int) context.Context {
	ctx := sdk.WithCall(parent, sdk.CallInfo{ID: "call", Tool: "run_bash", SessionID: "s1", Workspace: f.ws,
		Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn, Pids: pids, MemoryMB: memoryMB}})
	return sdk.WithHost(ctx, f.host)
}

// groupFile returns a file for a command to write its /proc/self/cgroup
// into first; whatever is left in that cgroup is killed when the test
// ends.
func groupFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cgroup")
	t.Cleanup(func() {
		dir := groupDirOf(p)
		if dir == "" {
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			procs := cgroupProcs(dir)
			if len(procs) == 0 {
				return
			}
			os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
			for _, pid := range procs {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	return p
}

// groupDirOf is the cgroup v2 folder a command wrote to p (its
// /proc/self/cgroup), "" when it wrote none.
func groupDirOf(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	var rel string
	for line := range strings.SplitSeq(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel = r
		}
	}
	root, err := cgroup.Root() // <mount><own>/yagent.<pid>
	if rel == "" || err != nil {
		return ""
	}
	ownRel := ""
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if r, ok := strings.CutPrefix(line, "0::"); ok {
				ownRel = r
			}
		}
	}
	mount := strings.TrimSuffix(filepath.Dir(root), strings.TrimSuffix(ownRel, "/"))
	return filepath.Join(mount, rel)
}

func cgroupProcs(dir string) []int { return readPids(filepath.Join(dir, "cgroup.procs")) }

// waitEmptied polls until the cgroup at dir holds no process (or is
// gone), at most limit, and reports what is left.
func waitEmptied(dir string, limit time.Duration) []int {
	deadline := time.Now().Add(limit)
	for {
		left := cgroupProcs(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// bomb is a fork bomb as `:(){ :|:& };:` is, but that stops forking
// depth levels down, where each of its 2^depth leaves sleeps 5 s: it
// runs into a small process bound at once, and where the bound is
// missing it ends by itself. (The shell that starts it should wait a
// little: the result reads the bounds as the shell ends and its output
// goes quiet, which may come before the bomb reaches the bound.)
func bomb(depth int) string {
	return fmt.Sprintf(`b() { if [ "$1" -gt 0 ]; then b $(($1-1)) | b $(($1-1)) & else sleep 5; fi; }; b %d`, depth)
}

// hog fills mb MiB and keeps them: tail holds the last line of its input,
// here all of it (zeros, no newline).
func hog(mb int) string { return fmt.Sprintf(`head -c %dM /dev/zero | tail`, mb) }

func TestRunBash_ForkBombStoppedByThePidsBound(t *testing.T) {
	requireBound(t, cgroup.BoundPids)
	f := newFixture(t, Options{WaitDelay: time.Second})
	cg := groupFile(t)
	res, err := f.m.Run(f.bounded(t.Context(), 32, 0), RunRequest{Command: `cat /proc/self/cgroup > ` + cg + `; ` + bomb(9) + ` 2>/dev/null; sleep 1`, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if !strings.Contains(res.Text, "yagent sandbox: the sandbox's process limit (sandbox.pids: 32) refused") || !slices.Equal(d.BoundsHit, []string{"pids"}) {
		cgs, _ := os.ReadFile(cg)
		t.Errorf("the result does not name the process bound (bounds_hit %q; the command's cgroups:\n%s):\n%s", d.BoundsHit, cgs, tail(res.Text))
	}
	dir := groupDirOf(cg)
	if dir == "" {
		t.Fatal("the command did not write its cgroup")
	}
	// Killed, they are gone in a moment; left to run, they retry their
	// forks for seconds (their errors go to /dev/null, so no SIGPIPE of
	// the closed output ends them first).
	if left := waitEmptied(dir, 2*time.Second); len(left) > 0 {
		t.Errorf("processes %v of the fork bomb outlived its call: a tree that ran into its bound is killed whole", left)
	}
	if !strings.Contains(res.Text, "the command left running were killed with it") {
		t.Errorf("the result does not say what the command left was killed:\n%s", tail(res.Text))
	}
}

func TestRunBash_MemoryHogKilledAtTheMemoryBound(t *testing.T) {
	requireBound(t, cgroup.BoundMemory)
	f := newFixture(t, Options{})
	for _, mode := range []string{ModePipe, ModePTY} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			res, err := f.m.Run(f.bounded(t.Context(), 0, 64), RunRequest{Command: hog(256), Mode: mode, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			d := data(t, res)
			if d.ExitCode == nil || *d.ExitCode != 128+int(syscall.SIGKILL) {
				t.Errorf("exit %v, want 137: tail killed by SIGKILL", d.ExitCode)
			}
			if !strings.Contains(res.Text, "yagent sandbox: the command ran out of the sandbox's memory (sandbox.memory_mb: 64): the kernel killed 1 of its processes") ||
				!slices.Equal(d.BoundsHit, []string{"memory_mb"}) {
				t.Errorf("the result does not name the memory bound (bounds_hit %q):\n%s", d.BoundsHit, tail(res.Text))
			}
		})
	}
}

func TestRunBash_CommandWithinTheBoundsUnaffected(t *testing.T) {
	requireBound(t, cgroup.BoundPids)
	requireBound(t, cgroup.BoundMemory)
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.bounded(t.Context(), 128, 256),
		RunRequest{Command: `for i in $(seq 50); do sleep 0.3 & done; wait; head -c 64M /dev/zero | wc -c`, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.ExitCode == nil || *d.ExitCode != 0 || !strings.Contains(res.Text, "67108864") {
		t.Errorf("exit %v, output %q: want 50 processes and 64 MiB through a pipe to pass", d.ExitCode, res.Text)
	}
	if strings.Contains(res.Text, "yagent sandbox") || len(d.BoundsHit) > 0 {
		t.Errorf("a command within its bounds got a note (bounds_hit %q):\n%s", d.BoundsHit, res.Text)
	}
}

func TestShellWait_BackgroundTaskNamesTheBoundItRanInto(t *testing.T) {
	requireBound(t, cgroup.BoundMemory)
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.bounded(t.Context(), 0, 64), RunRequest{Command: `sleep 0.5; ` + hog(256), Background: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	id := data(t, res).TaskID
	res, err = f.m.Wait(f.bounded(t.Context(), 0, 64), id, 20*time.Second)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	d := data(t, res)
	if d.Status != endExited || !strings.Contains(res.Text, "(sandbox.memory_mb: 64): the kernel killed 1") || !slices.Equal(d.BoundsHit, []string{"memory_mb"}) {
		t.Errorf("status %q, bounds_hit %q; want the end to name the memory bound:\n%s", d.Status, d.BoundsHit, tail(res.Text))
	}
}

// tail is the end of a long text, for a failure message.
func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
