package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// The docs/ARCHITECTURE.md#core-rules §16 gates: a foreground wait is
// bounded, and each way a command ends has its own receipt. Time goes through
// Options (WaitDelay, MaxOutputBytes) and small timeout_ms values; the tests
// never sleep waiting for a real timeout.

func TestRunBash_BackgroundChildDoesNotHangCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
	pids := pidsFile(t)
	// sleep inherits the output pipe and keeps it open for 100 s after bash
	// exits; only the wait delay lets the call return.
	cmd := fmt.Sprintf("sleep 100 & echo $! > '%s'; echo started", pids)
	o := await(t, f.runAsync(f.ctx(t.Context()), RunRequest{Command: cmd, Timeout: time.Minute, Yield: time.Minute}),
		5*time.Second, "run_bash with a background child holding the pipe")
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	d := data(t, o.res)
	if d.Status != endExited || d.ExitCode == nil || *d.ExitCode != 0 || !d.HeldOpen {
		t.Errorf("data = %+v, want exited with code 0 and output_held_open", d)
	}
	for _, want := range []string{"started\n", "(exit code 0;", "kept its output open", "is_background=true"} {
		if !strings.Contains(o.res.Text, want) {
			t.Errorf("text = %q, want it to contain %q", o.res.Text, want)
		}
	}
	if got := waitForPidsWritten(t, pids, 1); !alive(got[0]) {
		t.Errorf("the background child %d is gone: the call must not kill what the command left running", got[0])
	}
}

func TestRunBash_SleepInBackgroundReturnsPromptly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 200 * time.Millisecond})
	pids := pidsFile(t)
	start := time.Now()
	o := await(t, f.runAsync(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("sleep 100 & echo $! > '%s'", pids)}),
		10*time.Second, "sleep 100 &")
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("sleep 100 & took %s, want far below 100 s", took)
	}
	waitForPidsWritten(t, pids, 1)
}

func TestRunBash_NoBareErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		command  string
		timeout  time.Duration
		wantCode string
		want     string
	}{
		{name: "timeout", command: "sleep 100", timeout: 300 * time.Millisecond, wantCode: sdk.CodeTimeout, want: "timed out after 300ms"},
		{name: "killed by its own signal", command: "kill -KILL $$", want: "killed by signal SIGKILL, which this tool did not send"},
		{name: "non-zero exit", command: "exit 3", want: "(exit code 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
			res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: tt.command, Timeout: tt.timeout})
			var text string
			if tt.wantCode != "" {
				te := toolError(t, err)
				if te.Code != tt.wantCode {
					t.Errorf("code = %q, want %q", te.Code, tt.wantCode)
				}
				text = te.Message
			} else {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				text = res.Text
			}
			if !strings.Contains(text, tt.want) {
				t.Errorf("text = %q, want it to contain %q", text, tt.want)
			}
			noBareWaitError(t, text)
		})
	}
}

func TestRunBash_TimeoutAndCancelReadDifferently(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})

	pidsT := pidsFile(t)
	_, errT := f.m.Run(f.ctx(t.Context()), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; sleep 100", pidsT), Timeout: 500 * time.Millisecond})
	timeout := toolError(t, errT)

	pidsC := pidsFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch := f.runAsync(f.ctx(ctx), RunRequest{Command: fmt.Sprintf("echo $$ > '%s'; sleep 100", pidsC)})
	pids := waitForPidsWritten(t, pidsC, 1)
	cancel()
	o := await(t, ch, 5*time.Second, "cancelled run_bash")
	cancelled := toolError(t, o.err)

	if timeout.Code != sdk.CodeTimeout || cancelled.Code != sdk.CodeCancelled {
		t.Errorf("codes = %q (timeout), %q (cancel); want %q and %q", timeout.Code, cancelled.Code, sdk.CodeTimeout, sdk.CodeCancelled)
	}
	if !strings.Contains(timeout.Message, "timed out") || strings.Contains(timeout.Message, "cancelled") {
		t.Errorf("timeout text = %q, want it to say timed out and not cancelled", timeout.Message)
	}
	if !strings.Contains(cancelled.Message, "cancelled") || strings.Contains(cancelled.Message, "timed out") {
		t.Errorf("cancel text = %q, want it to say cancelled and not timed out", cancelled.Message)
	}
	if timeout.Message == cancelled.Message {
		t.Errorf("timeout and cancel read the same: %q", timeout.Message)
	}
	if left := waitDead(append(pids, readPids(pidsT)...)); len(left) > 0 {
		t.Errorf("processes %v outlived the timeout or the cancel", left)
	}
}

func TestRunBash_OutputCapAccountsAndDrains(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxOutputBytes: 1000})
	// 200000 bytes, then a marker: with the cap at 1000 bytes the writer
	// must keep draining, or tr and echo die of SIGPIPE and the marker and
	// the exit code are lost.
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "head -c 200000 /dev/zero | tr '\\0' a; echo; echo END-MARKER"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	d := data(t, res)
	const total = int64(200000 + 1 + len("END-MARKER\n"))
	if d.Status != endExited || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Fatalf("data = %+v, want exit code 0 (the drain must not break the command)", d)
	}
	if d.OutputBytes != total {
		t.Errorf("output_bytes = %d, want %d: every byte is counted", d.OutputBytes, total)
	}
	wantMarker := fmt.Sprintf("[... %d bytes left out ...]", total-1000)
	if !strings.Contains(res.Text, wantMarker) {
		t.Errorf("text does not say how much was left out: want %q in %q", wantMarker, clip(res.Text, 300))
	}
	if !strings.HasSuffix(res.Text, "END-MARKER\n") || !strings.HasPrefix(res.Text, "aaaa") {
		t.Errorf("text = %q..%q, want the head (a...) and the tail (END-MARKER)", clip(res.Text, 20), res.Text[max(0, len(res.Text)-20):])
	}
	if d.OmittedBytes != total-1000 {
		t.Errorf("omitted_bytes = %d, want %d", d.OmittedBytes, total-1000)
	}
}

// A command whose bash exits while a child it left behind holds the output
// answers once the output has gone quiet (OutputQuiet), long before the
// wait delay, with the held-open receipt and the real exit code, and the
// child lives on. The wait delay is a minute here: a call that waited for
// it would miss the 10 s bound.
func TestRunBash_BackgroundHoldsPipesAnswersOnceQuiet(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 3} {
		t.Run(fmt.Sprintf("exit %d", code), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{WaitDelay: time.Minute, OutputQuiet: 100 * time.Millisecond})
			pids := pidsFile(t)
			cmd := fmt.Sprintf("sleep 97 & echo $! > '%s'; echo started; exit %d", pids, code)
			o := await(t, f.runAsync(f.ctx(t.Context()), RunRequest{Command: cmd, Timeout: 2 * time.Minute, Yield: 2 * time.Minute}),
				10*time.Second, "sleep 97 & echo started")
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			d := data(t, o.res)
			if d.Status != endExited || d.ExitCode == nil || *d.ExitCode != code || !d.HeldOpen {
				t.Errorf("data = %+v, want exited with code %d and output_held_open", d, code)
			}
			for _, want := range []string{"started\n", fmt.Sprintf("(exit code %d;", code), "kept its output open", "is_background=true"} {
				if !strings.Contains(o.res.Text, want) {
					t.Errorf("text = %q, want it to contain %q", o.res.Text, want)
				}
			}
			// A kill sent as the call returned lands within moments: watch
			// the child for a while, not once.
			if got := waitForPidsWritten(t, pids, 1); !stillAliveAfter(got, 300*time.Millisecond) {
				t.Errorf("the background child %d is gone: the call must not kill what the command left running", got[0])
			}
		})
	}
}

// Output that still flows after bash exited keeps the call waiting, up to
// the wait delay: a child printing every 10 ms is read until WaitDelay
// (1.5 s) has passed, not cut at the first quiet spell of 500 ms.
func TestRunBash_HeldOutputThatFlowsIsReadUpToWaitDelay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: 1500 * time.Millisecond, OutputQuiet: 500 * time.Millisecond})
	pids := pidsFile(t)
	cmd := fmt.Sprintf("(echo $BASHPID > '%s'; while :; do echo tick; sleep 0.01; done) & echo started", pids)
	o := await(t, f.runAsync(f.ctx(t.Context()), RunRequest{Command: cmd, Timeout: time.Minute, Yield: time.Minute}),
		10*time.Second, "a child that keeps printing")
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	d := data(t, o.res)
	if d.Status != endExited || !d.HeldOpen {
		t.Fatalf("data = %+v, want exited with output_held_open", d)
	}
	if d.ElapsedMS < 1500 {
		t.Errorf("elapsed_ms = %d, want at least the 1500 ms wait delay: output that flows must keep the call reading", d.ElapsedMS)
	}
	if n := strings.Count(o.res.Text, "tick\n"); n < 10 {
		t.Errorf("text has %d ticks, want the child's output while it flowed: %q", n, clip(o.res.Text, 300))
	}
}

// What a left-behind child writes after the call stopped waiting goes
// nowhere: the call has closed its end of the pipe (the child's write
// fails with EPIPE, here, where it ignores SIGPIPE), and the late output
// is neither in the answer given nor in the next call's.
func TestRunBash_LateOutputOfALeftBehindChildGoesNowhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{WaitDelay: time.Minute, OutputQuiet: 100 * time.Millisecond})
	pids := pidsFile(t)
	dir := t.TempDir()
	fifo, status := filepath.Join(dir, "go"), filepath.Join(dir, "status")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("(echo $BASHPID > '%s'; trap '' PIPE; read x < '%s'; echo late-output; echo $? > '%s') & echo started",
		pids, fifo, status)
	o := await(t, f.runAsync(f.ctx(t.Context()), RunRequest{Command: cmd, Timeout: time.Minute, Yield: time.Minute}),
		10*time.Second, "a child that writes later")
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	first := o.res.Text
	child := waitForPidsWritten(t, pids, 1)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.WriteString("now\n")
	w.Close()
	if left := waitDead(child); len(left) > 0 {
		t.Fatalf("child %v still runs after writing into the closed output", left)
	}
	if b, _ := os.ReadFile(status); strings.TrimSpace(string(b)) == "0" {
		t.Errorf("the child's late write succeeded: the call still holds the reading end of the output pipe")
	}
	if o.res.Text != first || strings.Contains(first, "late-output") {
		t.Errorf("answer = %q, want it without the child's late output", first)
	}
	res, err := f.m.Run(f.ctx(t.Context()), RunRequest{Command: "echo next"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Text != "next\n" {
		t.Errorf("next call's output = %q, want exactly %q", res.Text, "next\n")
	}
}

// TestShellWait_NoBareErrorText: the receipts of a command that yielded
// and then ended are shell_wait's to give, and they hold the same rule as
// run_bash's: a timeout says so and names its timeout, an exit its code, a
// signal the command sent itself says it was not ours; never the wait
// error's own text.
func TestShellWait_NoBareErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		timeout time.Duration
		status  string
		want    string
	}{
		{name: "timeout", command: "sleep 100", timeout: 400 * time.Millisecond, status: endTimedOut, want: "timed out 400ms after it started"},
		{name: "killed by its own signal", command: "sleep 0.3; kill -KILL $$", status: endSignaled, want: "killed by signal SIGKILL, which this tool did not send"},
		{name: "non-zero exit", command: "sleep 0.3; exit 3", status: endExited, want: "exited with code 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{WaitDelay: 100 * time.Millisecond})
			ctx := f.ctx(t.Context())
			res, err := f.m.Run(ctx, RunRequest{Command: tt.command, Timeout: tt.timeout, Yield: 50 * time.Millisecond})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			d := data(t, res)
			if d.TaskID == "" || d.Status != "running" {
				t.Fatalf("the command did not yield: %s", res.Text)
			}
			w, err := f.m.Wait(ctx, d.TaskID, 10*time.Second)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if got := data(t, w).Status; got != tt.status {
				t.Errorf("status = %q, want %q", got, tt.status)
			}
			if !strings.Contains(w.Text, tt.want) {
				t.Errorf("shell_wait said %q, want it to contain %q", w.Text, tt.want)
			}
			noBareWaitError(t, w.Text)
		})
	}
}

// noBareWaitError fails t when text hands back a wait error's own words.
func noBareWaitError(t *testing.T, text string) {
	t.Helper()
	for _, bare := range []string{"signal: killed", "exit status", "context deadline exceeded", "context canceled"} {
		if strings.Contains(text, bare) {
			t.Errorf("%q hands back the bare wait error %q", text, bare)
		}
	}
}
