package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// The docs/ARCHITECTURE.md#core-rules §17 pair and its ledger: a foreground
// call owns its whole process group while it is in flight, and nothing after
// it returns.

func TestRunBash_TimeoutKillsWholeProcessGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	cmd := fmt.Sprintf("sleep 100 & echo $! > '%s'; echo $$ >> '%s'; wait", pids, pids)
	_, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: cmd, Timeout: time.Second})
	if te := toolError(t, err); te.Code != sdk.CodeTimeout {
		t.Fatalf("code = %q, want %q", te.Code, sdk.CodeTimeout)
	}
	got := readPids(pids)
	if len(got) != 2 {
		t.Fatalf("pids = %v: the command did not write both pids before its timeout", got)
	}
	if left := waitDead(got); len(left) > 0 {
		t.Errorf("processes %v of the group outlived the timeout: the kill must reach the whole group, not only bash", left)
	}
}

func TestRunBash_ReturnedCallSurvivesLaterCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err := f.m.Run(f.ctx(ctx), RunRequest{Command: fmt.Sprintf("nohup sleep 100 >/dev/null 2>&1 & echo $! > '%s'", pids)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := data(t, res); d.Status != endExited || *d.ExitCode != 0 {
		t.Fatalf("data = %+v, want a plain exit 0", d)
	}
	daemon := waitForPidsWritten(t, pids, 1)
	cancel() // the caller cancels after the call returned, as an agent loop does
	if !stillAliveAfter(daemon, time.Second) {
		t.Errorf("the daemon %v died after a cancel that came after the call returned", daemon)
	}
}

func TestKillLiveProcessGroupsEndsInFlightCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	cmd := fmt.Sprintf("sleep 100 & echo $! > '%s'; echo $$ >> '%s'; wait", pids, pids)
	ch := f.runAsync(f.ctx(t.Context()), RunRequest{Command: cmd, Timeout: time.Minute, Yield: time.Minute})
	// Sync on the child having written its pids, not on the registration:
	// registration follows Start at once, before bash has forked anything.
	procs := waitForPidsWritten(t, pids, 2)
	if n := f.m.KillLiveProcessGroups(); n < 1 {
		t.Errorf("KillLiveProcessGroups() = %d, want at least 1 group signalled", n)
	}
	o := await(t, ch, 5*time.Second, "the in-flight call after KillLiveProcessGroups")
	te := toolError(t, o.err)
	if te.Code != sdk.CodeCancelled || !strings.Contains(te.Message, "stopping") {
		t.Errorf("error = %q %q, want cancelled, saying the plugin is stopping", te.Code, te.Message)
	}
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v survived KillLiveProcessGroups", left)
	}
	if live := f.m.LiveProcessGroups(); len(live) != 0 {
		t.Errorf("LiveProcessGroups() = %v after the call ended, want none", live)
	}
}

func TestRunBash_ReportsProcessGroupToHost(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "true"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	pgid := data(t, res).PID
	want := []groupReport{{pgid, true}, {pgid, false}}
	if got := f.host.got(); !slices.Equal(got, want) {
		t.Errorf("reports = %v, want %v", got, want)
	}
	if live := f.m.LiveProcessGroups(); len(live) != 0 {
		t.Errorf("LiveProcessGroups() = %v after the call, want none", live)
	}
}

func TestRunBash_YieldedTaskSurvivesCallCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	res, err := f.m.Run(f.ctx(ctx), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; echo working; sleep 100", pids), Yield: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	if d.Status != "running" || d.TaskID == "" {
		t.Fatalf("data = %+v, want a running task", d)
	}
	if !strings.Contains(res.Text, "goes on as task "+d.TaskID) {
		t.Errorf("text = %q, want it to name the task", res.Text)
	}
	procs := waitForPidsWritten(t, pids, 1)
	cancel()
	if !stillAliveAfter(procs, 300*time.Millisecond) {
		t.Fatalf("the yielded task died when the call that yielded it was cancelled")
	}
	if live := f.m.LiveProcessGroups(); !slices.Contains(live, d.PID) {
		t.Errorf("LiveProcessGroups() = %v, want the yielded task's group %d (it stays owned)", live, d.PID)
	}
	out, err := f.m.Cancel(f.ctx(t.Context()), d.TaskID)
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if !strings.Contains(out.Text, "stopped by shell_cancel") {
		t.Errorf("cancel text = %q, want it to say shell_cancel stopped it", out.Text)
	}
	if left := waitDead(procs); len(left) > 0 {
		t.Errorf("processes %v survived shell_cancel", left)
	}
}

func TestShutdown_StopsForegroundNotBackground(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	fg, bg := pidsFile(t), pidsFile(t)
	if _, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; exec sleep 100", bg), Background: true}); err != nil {
		t.Fatalf("background Run: %v", err)
	}
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; sleep 100", fg), Yield: 100 * time.Millisecond})
	if err != nil || data(t, res).Status != "running" {
		t.Fatalf("foreground Run = %v, %v; want a yielded task", res, err)
	}
	fgPids, bgPids := waitForPidsWritten(t, fg, 1), waitForPidsWritten(t, bg, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := f.m.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if left := waitDead(fgPids); len(left) > 0 {
		t.Errorf("yielded task %v survived Shutdown", left)
	}
	if !alive(bgPids[0]) {
		t.Errorf("background command %d died at Shutdown: it belongs to the user", bgPids[0])
	}
}

func TestRunBash_YieldsBeforeTheCallsDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	pids := pidsFile(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	res, err := f.m.Run(f.ctx(ctx), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; sleep 100", pids)})
	if err != nil {
		t.Fatalf("Run with a 1s deadline and the default 15s yield: %v; want a yielded task", err)
	}
	d := data(t, res)
	if d.Status != "running" {
		t.Fatalf("data = %+v, want a running task", d)
	}
	<-ctx.Done()
	procs := waitForPidsWritten(t, pids, 1)
	if !stillAliveAfter(procs, 200*time.Millisecond) {
		t.Errorf("the task died with the call's deadline")
	}
	f.m.Cancel(f.ctx(t.Context()), d.TaskID)
}
