//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// One cgroup per command: while its call (or its yielded task) is in
// flight, a command's timeout, cancel and the plugin's shutdown kill every
// process it started, however it left its group; once the call has
// returned, what it left lives on. These tests run in parallel in one
// process, whose cgroups they share: none kills the live groups of the
// process (cgroup.KillLive), only its own manager's.

// requireCgroup skips a test that needs the cgroup layer where it is
// missing.
func requireCgroup(t *testing.T) {
	t.Helper()
	if _, err := cgroup.Root(); err != nil {
		t.Skipf("cgroup v2 layer missing, commands run in process groups here: %v", err)
	}
}

// sandboxed is a call context whose sandbox is on: commands get cgroups.
func (f *fixture) sandboxed(parent context.Context) context.Context {
	ctx := sdk.WithCall(parent, sdk.CallInfo{ID: "call", Tool: "run_bash", SessionID: "s1", Workspace: f.ws,
		Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn}})
	return sdk.WithHost(ctx, f.host)
}

// escapers leaves the command's process group every way bash can (setsid,
// setsid -f, job control, a double fork), each writing its pid to the
// file, then bash writes its own and waits: five pids.
func escapers(pids string) string {
	return fmt.Sprintf(`export P='%s'
setsid sleep 300 & echo $! >> "$P"
setsid -f bash -c 'echo $$ >> "$P"; exec sleep 300'
set -m; sleep 300 & echo $! >> "$P"; set +m
( (bash -c 'echo $$ >> "$P"; exec sleep 300' &) & )
echo $$ >> "$P"
wait`, pids)
}

// cgroupOf is the name of pid's cgroup (live-3, bg-4), "" when gone.
func cgroupOf(pid int) string {
	dir, err := cgroup.Of(pid)
	if err != nil {
		return ""
	}
	return filepath.Base(dir)
}

// releasedGroup reports whether pid's cgroup was released.
func releasedGroup(pid int) bool {
	dir, err := cgroup.Of(pid)
	return err == nil && cgroup.Released(dir)
}

func TestRunBash_TimeoutKillsEveryEscapedChild(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	for _, mode := range []string{ModePipe, ModePTY} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
			pids := pidsFile(t)
			_, err := f.m.Run(f.sandboxed(t.Context()), RunRequest{Command: escapers(pids), Mode: mode, Timeout: 700 * time.Millisecond})
			if te := toolError(t, err); te.Code != sdk.CodeTimeout {
				t.Fatalf("code = %q (%s), want %q", te.Code, te.Message, sdk.CodeTimeout)
			}
			got := readPids(pids)
			if len(got) != 5 {
				t.Fatalf("pids = %v: the command did not write its 5 pids before its timeout", got)
			}
			if left := waitDead(got); len(left) > 0 {
				t.Errorf("processes %v of %v outlived the timeout of their call: its whole cgroup must be killed", left, got)
			}
		})
	}
}

func TestRunBash_CancelOfTheCallKillsEveryEscapedChild(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch := f.runAsync(f.sandboxed(ctx), RunRequest{Command: escapers(pids), Timeout: time.Minute, Yield: time.Minute})
	procs := waitForPidsWritten(t, pids, 5)
	cancel()
	o := await(t, ch, 5*time.Second, "the cancelled call")
	if te := toolError(t, o.err); te.Code != sdk.CodeCancelled {
		t.Errorf("code = %q, want %q", te.Code, sdk.CodeCancelled)
	}
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v of %v outlived the cancel of their call", left, procs)
	}
}

func TestShellCancel_KillsEveryEscapedChildOfAYieldedTask(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	res, err := f.m.Run(f.sandboxed(t.Context()), RunRequest{Command: escapers(pids), Yield: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.Status != "running" {
		t.Fatalf("data = %+v, want a yielded task", d)
	}
	procs := waitForPidsWritten(t, pids, 5)
	if _, err := f.m.Cancel(f.sandboxed(t.Context()), d.TaskID); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v of %v outlived shell_cancel of their task", left, procs)
	}
}

func TestShutdown_KillsEveryEscapedChildOfCommandsInFlight(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	callPids, taskPids := pidsFile(t), pidsFile(t)
	ch := f.runAsync(f.sandboxed(t.Context()), RunRequest{Command: escapers(callPids), Timeout: time.Minute, Yield: time.Minute})
	res, err := f.m.Run(f.sandboxed(t.Context()), RunRequest{Command: escapers(taskPids), Yield: 50 * time.Millisecond})
	if err != nil || data(t, res).Status != "running" {
		t.Fatalf("Run = %v, %v; want a yielded task", res, err)
	}
	procs := append(waitForPidsWritten(t, callPids, 5), waitForPidsWritten(t, taskPids, 5)...)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := f.m.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	await(t, ch, 5*time.Second, "the call in flight at Shutdown")
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v of %v outlived Shutdown", left, procs)
	}
}

func TestKillLiveProcessGroups_KillsEveryEscapedChild(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	ch := f.runAsync(f.sandboxed(t.Context()), RunRequest{Command: escapers(pids), Timeout: time.Minute, Yield: time.Minute})
	procs := waitForPidsWritten(t, pids, 5)
	if n := f.m.KillLiveProcessGroups(); n != 1 {
		t.Errorf("KillLiveProcessGroups() = %d, want 1", n)
	}
	await(t, ch, 5*time.Second, "the call after KillLiveProcessGroups")
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v of %v outlived KillLiveProcessGroups", left, procs)
	}
}

func TestRunBash_WhatAFinishedCommandLeftLivesOnInAReleasedGroup(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := fmt.Sprintf(`nohup sleep 300 >/dev/null 2>&1 & echo $! > '%s'
setsid sleep 300 >/dev/null 2>&1 & echo $! >> '%s'`, pids, pids)
	res, err := f.m.Run(f.sandboxed(ctx), RunRequest{Command: cmd})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := data(t, res); d.Status != endExited {
		t.Fatalf("data = %+v, want it exited", d)
	}
	left := waitForPidsWritten(t, pids, 2)
	for _, p := range left {
		if !releasedGroup(p) {
			t.Errorf("process %d left by a finished command is in cgroup %q, not released as the call returned", p, cgroupOf(p))
		}
	}
	// Nothing that comes later kills it: the call's cancel, the plugin's
	// kill of its live groups (and a dead plugin's host kills live-N ones
	// only: package cgroup's tests).
	cancel()
	f.m.KillLiveProcessGroups()
	if !stillAliveAfter(left, 200*time.Millisecond) {
		t.Errorf("processes %v, left by a call that had returned, died later", left)
	}
}

func TestRunBash_YieldedTaskReleasesItsGroupAsItEnds(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	gate := filepath.Join(t.TempDir(), "go")
	cmd := fmt.Sprintf(`nohup sleep 300 >/dev/null 2>&1 & echo $! > '%s'
while [ ! -e '%s' ]; do sleep 0.01; done`, pids, gate)
	res, err := f.m.Run(f.sandboxed(t.Context()), RunRequest{Command: cmd, Yield: 20 * time.Millisecond})
	if err != nil || data(t, res).Status != "running" {
		t.Fatalf("Run = %v, %v; want a yielded task", res, err)
	}
	id := data(t, res).TaskID
	daemon := waitForPidsWritten(t, pids, 1)
	if g := cgroupOf(daemon[0]); !strings.HasPrefix(g, cgroup.PrefixLive) || releasedGroup(daemon[0]) {
		t.Errorf("a running task's process is in cgroup %q (released: %v), want an unreleased live-N", g, releasedGroup(daemon[0]))
	}
	os.WriteFile(gate, nil, 0o600)
	end, err := f.m.Wait(f.sandboxed(t.Context()), id, 5*time.Second)
	if err != nil || data(t, end).Status != endExited {
		t.Fatalf("Wait = %v, %v; want it exited", end, err)
	}
	if !releasedGroup(daemon[0]) {
		t.Errorf("the process left by an ended task is in cgroup %q, not released", cgroupOf(daemon[0]))
	}
	f.m.KillLiveProcessGroups()
	if !stillAliveAfter(daemon, 100*time.Millisecond) {
		t.Errorf("the process %v left by an ended task died later", daemon)
	}
}

func TestRunBash_BackgroundGroupOutlivesTheCallUntilShellCancel(t *testing.T) {
	requireCgroup(t)
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond, CancelGrace: 100 * time.Millisecond})
	pids := pidsFile(t)
	// The setsid child ignores SIGTERM: only the kill of the whole cgroup
	// ends it.
	cmd := fmt.Sprintf(`setsid bash -c 'trap "" TERM; echo $$ >> "%s"; exec sleep 300' & echo $$ >> '%s'; wait`, pids, pids)
	res, err := f.m.Run(f.sandboxed(t.Context()), RunRequest{Command: cmd, Background: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	id := data(t, res).TaskID
	procs := waitForPidsWritten(t, pids, 2)
	for _, p := range procs {
		if g := cgroupOf(p); !strings.HasPrefix(g, cgroup.PrefixBackground) {
			t.Errorf("background process %d is in cgroup %q, want bg-N", p, g)
		}
	}
	if !strings.Contains(res.Text, cgroup.PrefixBackground) {
		t.Errorf("text = %q, want it to name the bg-N cgroup", res.Text)
	}
	f.m.KillLiveProcessGroups()
	if !stillAliveAfter(procs, 100*time.Millisecond) {
		t.Fatalf("a background command's processes %v died with the kill of live groups", procs)
	}
	list, err := f.m.Tasks(f.sandboxed(t.Context()))
	if err != nil {
		t.Fatalf("Tasks: %v", err)
	}
	infos := list.Data.([]TaskInfo)
	if len(infos) != 1 || !strings.HasPrefix(filepath.Base(infos[0].Cgroup), cgroup.PrefixBackground) || infos[0].Processes == nil || *infos[0].Processes != 2 {
		t.Errorf("shell_tasks data = %+v, want the task with its bg-N folder and its 2 processes", infos)
	} else if !strings.Contains(list.Text, "cgroup "+filepath.Base(infos[0].Cgroup)+" (2 processes)") {
		t.Errorf("shell_tasks text = %q, want it to name the cgroup and its process count", list.Text)
	}
	if _, err := f.m.Cancel(f.sandboxed(t.Context()), id); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v of the background task outlived shell_cancel", left)
	}
}

func TestRunBash_WithoutCgroupsRunsInProcessGroups(t *testing.T) {
	t.Parallel()
	none := func(bool) (*cgroup.Group, error) { return nil, fmt.Errorf("%w: forced", cgroup.ErrUnavailable) }
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond, NewCgroup: none})
	pids := pidsFile(t)
	cmd := fmt.Sprintf("sleep 100 & echo $! > '%s'; echo $$ >> '%s'; wait", pids, pids)
	_, err := f.m.Run(f.sandboxed(t.Context()), RunRequest{Command: cmd, Timeout: 500 * time.Millisecond})
	if te := toolError(t, err); te.Code != sdk.CodeTimeout {
		t.Fatalf("code = %q (%s), want %q: without a cgroup the command still runs", te.Code, te.Message, sdk.CodeTimeout)
	}
	got := readPids(pids)
	if len(got) != 2 {
		t.Fatalf("pids = %v", got)
	}
	if left := waitDead(got); len(left) > 0 {
		t.Errorf("processes %v of the group outlived the timeout: the process group is the fallback", left)
	}

	// A required sandbox refuses what it cannot contain.
	ctx := sdk.WithHost(sdk.WithCall(t.Context(), sdk.CallInfo{ID: "c", Tool: "run_bash", SessionID: "s1", Workspace: f.ws,
		Sandbox: &sdk.Sandbox{Mode: sdk.SandboxRequired}}), f.host)
	_, err = f.m.Run(ctx, RunRequest{Command: "true"})
	if te := toolError(t, err); te.Code != sdk.CodeDenied || !strings.Contains(te.Message, "cgroup (commands cannot get a cgroup") ||
		!strings.Contains(te.Message, "nothing was run") || !strings.Contains(te.Message, "yagent doctor") {
		t.Errorf("required sandbox without cgroups: %v, want a denial naming the cgroup, saying nothing ran and what to do", err)
	}
}

func TestRunBash_SandboxOffRunsWithoutACgroup(t *testing.T) {
	t.Parallel()
	asked := 0
	count := func(bg bool) (*cgroup.Group, error) { asked++; return cgroup.New(bg) }
	f := newFixture(t, Options{NewCgroup: count})
	for _, sb := range []*sdk.Sandbox{nil, {Mode: sdk.SandboxOff}} {
		ctx := sdk.WithHost(sdk.WithCall(t.Context(), sdk.CallInfo{ID: "c", Tool: "run_bash", SessionID: "s1", Workspace: f.ws, Sandbox: sb}), f.host)
		res, err := f.m.Run(ctx, RunRequest{Command: "cat /proc/self/cgroup"})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if strings.Contains(res.Text, cgroup.PrefixLive) {
			t.Errorf("sandbox %+v: the command ran in a command cgroup: %q", sb, res.Text)
		}
	}
	if asked != 0 {
		t.Errorf("NewCgroup called %d times with the sandbox off", asked)
	}
}
