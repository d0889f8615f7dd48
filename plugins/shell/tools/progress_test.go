package tools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/clock"
	"github.com/yagent/yagent/internal/clock/clocktest"
	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// useClock makes the reporters of the tools use c until the test ends.
// Tests calling it are not parallel: the clock is the package's.
func useClock(t *testing.T, c clock.Clock) {
	old := progressClock
	progressClock = c
	t.Cleanup(func() { progressClock = old })
}

// fakeSource is the output of a command the test writes.
type fakeSource struct {
	lines   int64
	last    string
	started time.Time
}

func (s *fakeSource) Lines() int64       { return s.lines }
func (s *fakeSource) LastLine() string   { return s.last }
func (s *fakeSource) Started() time.Time { return s.started }

// recordingHost records the progress reported to it.
type recordingHost struct {
	mu   sync.Mutex
	seen []sdk.Progress
}

func (h *recordingHost) Progress(_ context.Context, p sdk.Progress) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, p)
	return nil
}

func (h *recordingHost) RequestApproval(context.Context, sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	return sdk.ApprovalResponse{}, nil
}

func (h *recordingHost) ReportProcessGroup(context.Context, int, bool) error { return nil }

func (h *recordingHost) progress() []sdk.Progress {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sdk.Progress(nil), h.seen...)
}

// TestReporter_ThrottlesAndBeats: a report when lines came, at most one per
// 250 ms; a heartbeat after 1 s without a line, its progress still growing
// and below the next line's.
func TestReporter_ThrottlesAndBeats(t *testing.T) {
	clk := clocktest.New()
	src := &fakeSource{started: clk.Now()}
	host := &recordingHost{}
	r := newReporter(sdk.WithHost(context.Background(), host), src, "", clk)
	step := func(d time.Duration, lines int64, last string) {
		clk.Advance(d)
		if lines > 0 {
			src.lines, src.last = lines, last
		}
		r.tick()
	}
	step(100*time.Millisecond, 1, "line 1") // 0.1s: reported, the first
	step(100*time.Millisecond, 2, "line 2") // 0.2s: too soon after the last
	step(100*time.Millisecond, 3, "line 3") // 0.3s: too soon
	step(100*time.Millisecond, 0, "")       // 0.4s: reported
	step(500*time.Millisecond, 0, "")       // 0.9s: silent, not for long
	step(500*time.Millisecond, 0, "")       // 1.4s: heartbeat
	step(time.Second, 0, "")                // 2.4s: heartbeat
	step(300*time.Millisecond, 4, "line 4") // 2.7s: reported
	want := []struct {
		progress float64
		message  string
	}{
		{1, "1 line, 0.1s: line 1"},
		{3, "3 lines, 0.4s: line 3"},
		{3.5, "3 lines, 1.4s: line 3"},
		{3 + 2.0/3, "3 lines, 2.4s: line 3"},
		{4, "4 lines, 2.7s: line 4"},
	}
	got := host.progress()
	if len(got) != len(want) {
		t.Fatalf("reports = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].Progress != w.progress || got[i].Message != w.message || got[i].Total != 0 {
			t.Errorf("report %d = %+v, want progress %v, total 0, message %q", i, got[i], w.progress, w.message)
		}
	}
}

// TestReporter_UncountedOutputAndLongLines: a command whose lines are not
// counted (a background task) beats with its elapsed time only; a last line
// is clipped to 120 characters.
func TestReporter_UncountedOutputAndLongLines(t *testing.T) {
	clk := clocktest.New()
	long := strings.Repeat("é", 300)
	src := &fakeSource{lines: -1, last: long, started: clk.Now()}
	host := &recordingHost{}
	r := newReporter(sdk.WithHost(context.Background(), host), src, "task sh-3", clk)
	for range 2 {
		clk.Advance(time.Second)
		r.tick()
	}
	got := host.progress()
	if len(got) != 2 || got[0].Progress != 0.5 || got[1].Progress <= got[0].Progress || got[1].Progress >= 1 {
		t.Fatalf("reports = %+v, want two heartbeats growing from 0.5, below 1", got)
	}
	want := "task sh-3: 1.0s: " + strings.Repeat("é", lastLineRunes-1) + "…"
	if got[0].Message != want {
		t.Errorf("message = %q, want %q", got[0].Message, want)
	}
}

// startShell serves the shell tools over gRPC, as the host reaches them,
// with every approval granted.
func startShell(t *testing.T, opts runner.Options) (*plugintest.Client, *runner.Manager) {
	t.Helper()
	opts.StateDir = t.TempDir()
	m := runner.New(opts)
	c := plugintest.Start(t, sdk.Plugin{Name: "shell", Version: Version, Tools: All(m), OnShutdown: m.Shutdown}, &plugintest.Options{
		Approve: func(context.Context, sdk.CallInfo, sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
			return sdk.ApprovalResponse{Approved: true}, nil
		},
	})
	return c, m
}

// gate is a FIFO a command reads a line from to go on; open lets it.
type gate string

func newGate(t *testing.T, dir string) gate {
	t.Helper()
	p := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return gate(p)
}

func (g gate) open(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(string(g), os.O_WRONLY, 0) // blocks until the command reads
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("go\n")
	f.Close()
}

type callDone struct {
	res *sdk.Result
	err error
	// stopped says the reporters had all stopped when the call returned.
	stopped bool
}

// callAsync calls tool in the background; what it returned comes on the
// channel.
func callAsync(c *plugintest.Client, clk *clocktest.Fake, tool string, info sdk.CallInfo, in any) <-chan callDone {
	done := make(chan callDone, 1)
	go func() {
		res, err := c.Call(context.Background(), tool, info, in)
		done <- callDone{res: res, err: err, stopped: clk.Stops() == clk.Tickers()}
	}()
	return done
}

// tickUntil moves the clock on by 300 ms and ticks until a progress report
// of call id matches want, for at most 10 s.
func tickUntil(t *testing.T, c *plugintest.Client, clk *clocktest.Fake, id string, want *regexp.Regexp) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		for _, p := range c.Host.Progress(id) {
			if want.MatchString(p.Message) {
				return
			}
		}
		clk.Advance(300 * time.Millisecond)
		select {
		case clk.Tick <- clk.Now():
		case <-time.After(20 * time.Millisecond):
			// No reporter is listening yet (or it is busy): look again.
		case <-deadline:
			got := c.Host.Progress(id)
			t.Fatalf("no progress matching %s within 10s; %d reports, the last: %+v", want, len(got), got[max(len(got)-3, 0):])
		}
	}
}

// checkReports: every report of call id has a growing progress, no total.
func checkReports(t *testing.T, c *plugintest.Client, id string, d callDone) {
	t.Helper()
	if d.err != nil {
		t.Fatalf("call: %v", d.err)
	}
	if !d.stopped {
		t.Error("a reporter was still running when the call returned")
	}
	got := c.Host.Progress(id)
	for i, p := range got {
		if p.Total != 0 || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Errorf("report %d = %+v after %+v: want progress growing at each report, total 0 (unknown)", i, p, got[max(i-1, 0)])
		}
	}
}

// TestRunBash_ReportsLinesWhileItRuns: a foreground command's lines so far,
// elapsed time and last line reach the host while the call waits.
func TestRunBash_ReportsLinesWhileItRuns(t *testing.T) {
	clk := clocktest.New()
	useClock(t, clk)
	c, _ := startShell(t, runner.Options{})
	g := newGate(t, c.Workspace)
	info := sdk.CallInfo{ID: "run-1", SessionID: "s1"}
	done := callAsync(c, clk, RunBashName, info, map[string]any{"command": "echo line 1; printf 'line 2\\n\\n  \\n'; read -r _ < gate; echo line 3"})
	tickUntil(t, c, clk, info.ID, regexp.MustCompile(`^4 lines, \d+\.\ds: line 2$`))
	g.open(t)
	d := <-done
	checkReports(t, c, info.ID, d)
	if !strings.Contains(d.res.Text, "line 3") {
		t.Errorf("result %q, want the whole output", d.res.Text)
	}
	if n := len(c.Host.Progress(info.ID)); n == 0 {
		t.Error("no progress")
	}
}

// TestRunBash_TrueReportsNothing: a command that ends before the first
// tick reports nothing, and its reporter is gone with the call.
func TestRunBash_TrueReportsNothing(t *testing.T) {
	clk := clocktest.New()
	useClock(t, clk)
	c, _ := startShell(t, runner.Options{})
	info := sdk.CallInfo{ID: "true-1", SessionID: "s1"}
	d := <-callAsync(c, clk, RunBashName, info, map[string]any{"command": "true"})
	checkReports(t, c, info.ID, d)
	if clk.Tickers() != 1 {
		t.Errorf("%d reporters started, want 1", clk.Tickers())
	}
	if p := c.Host.Progress(info.ID); len(p) != 0 {
		t.Errorf("progress %+v, want none", p)
	}
}

// TestShellWait_ReportsTheTask: shell_wait reports the task it waits on.
func TestShellWait_ReportsTheTask(t *testing.T) {
	clk := clocktest.New()
	useClock(t, clk)
	c, _ := startShell(t, runner.Options{})
	g := newGate(t, c.Workspace)
	info := sdk.CallInfo{SessionID: "s1"}
	res, err := c.Call(context.Background(), RunBashName, info, map[string]any{"command": "echo started; read -r _ < gate; echo ended", "yield_time_ms": 100})
	if err != nil {
		t.Fatal(err)
	}
	id := taskID(t, res.Text)
	info.ID = "wait-1"
	done := callAsync(c, clk, ShellWaitName, info, map[string]any{"task_id": id, "timeout_ms": 60000})
	tickUntil(t, c, clk, info.ID, regexp.MustCompile(`^task `+id+`: 1 line, \d+\.\ds: started$`))
	g.open(t)
	d := <-done
	checkReports(t, c, info.ID, d)
	if !strings.Contains(d.res.Text, "ended") {
		t.Errorf("shell_wait %q, want the task's end", d.res.Text)
	}
}

// TestWriteStdin_ReportsTheTask: write_stdin reports the task while it
// waits for its answer.
func TestWriteStdin_ReportsTheTask(t *testing.T) {
	clk := clocktest.New()
	useClock(t, clk)
	// The answer's wait ends with the task, not with a quiet spell.
	c, _ := startShell(t, runner.Options{StdinSettle: time.Minute, StdinMaxWait: time.Minute})
	g := newGate(t, c.Workspace)
	info := sdk.CallInfo{SessionID: "s1"}
	res, err := c.Call(context.Background(), RunBashName, info, map[string]any{"command": "read -r x; echo got $x; read -r _ < gate", "mode": "pty", "yield_time_ms": 100})
	if err != nil {
		t.Fatal(err)
	}
	id := taskID(t, res.Text)
	info.ID = "stdin-1"
	done := callAsync(c, clk, WriteStdinName, info, map[string]any{"task_id": id, "input": "hello", "keys": []string{"enter"}})
	tickUntil(t, c, clk, info.ID, regexp.MustCompile(`^task `+id+`: \d+ lines?, \d+\.\ds: got hello$`))
	g.open(t)
	checkReports(t, c, info.ID, <-done)
}

// BenchmarkWatchProgress_StartStop is what following a command adds to
// every run_bash: a goroutine and a ticker, started and stopped.
func BenchmarkWatchProgress_StartStop(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		watchProgress(ctx, "")(runner.Output{})()
	}
}
