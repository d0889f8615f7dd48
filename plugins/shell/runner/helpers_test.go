package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// fakeHost records the process groups reported to it and the approvals
// asked of it, and approves them unless refuse is set.
type fakeHost struct {
	mu        sync.Mutex
	reports   []groupReport
	approvals []sdk.ApprovalRequest
	refuse    *sdk.ApprovalResponse
	// during, when set, runs while a request waits for its answer.
	during func()
}

type groupReport struct {
	pgid int
	live bool
}

func (h *fakeHost) Progress(context.Context, sdk.Progress) error { return nil }
func (h *fakeHost) RequestApproval(_ context.Context, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	h.mu.Lock()
	during := h.during
	h.mu.Unlock()
	if during != nil {
		during()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.approvals = append(h.approvals, req)
	if h.refuse != nil {
		return *h.refuse, nil
	}
	return sdk.ApprovalResponse{Approved: true}, nil
}

func (h *fakeHost) asked() []sdk.ApprovalRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sdk.ApprovalRequest(nil), h.approvals...)
}
func (h *fakeHost) ReportProcessGroup(_ context.Context, pgid int, live bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, groupReport{pgid, live})
	return nil
}

func (h *fakeHost) got() []groupReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]groupReport(nil), h.reports...)
}

// fixture is a Manager with a workspace and a state folder of its own.
type fixture struct {
	m    *Manager
	ws   string
	host *fakeHost
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	f := &fixture{m: New(opts), ws: t.TempDir(), host: &fakeHost{}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.m.Shutdown(ctx)
	})
	return f
}

// ctx returns a call context for session "s1".
func (f *fixture) ctx(parent context.Context) context.Context {
	return f.ctxFor(parent, "s1")
}

func (f *fixture) ctxFor(parent context.Context, session string) context.Context {
	ctx := sdk.WithCall(parent, sdk.CallInfo{ID: "call", Tool: "run_bash", SessionID: session, Workspace: f.ws})
	return sdk.WithHost(ctx, f.host)
}

type runOutcome struct {
	res *sdk.Result
	err error
}

// runAsync runs req and delivers its outcome on the returned channel.
func (f *fixture) runAsync(ctx context.Context, req RunRequest) <-chan runOutcome {
	ch := make(chan runOutcome, 1)
	go func() {
		res, err := f.m.Run(ctx, req)
		ch <- runOutcome{res, err}
	}()
	return ch
}

// await returns the outcome, failing the test if it takes longer than
// bound.
func await(t *testing.T, ch <-chan runOutcome, bound time.Duration, what string) runOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(bound):
		t.Fatalf("%s: no result within %s", what, bound)
		return runOutcome{}
	}
}

// waitForPidsWritten polls (5 ms steps, 5 s cap) until the file holds n
// pids, and returns them. This, not "the group is registered", is the
// point where the command's processes exist.
func waitForPidsWritten(t *testing.T, path string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if pids := readPids(path); len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d pids not written within 5s (got %v)", path, n, readPids(path))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readPids(path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	if !strings.HasSuffix(string(b), "\n") && len(pids) > 0 {
		pids = pids[:len(pids)-1] // the last line is still being written
	}
	return pids
}

// alive reports whether pid runs (a zombie counts as dead).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	state, _, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}

// waitDead polls (5 ms steps, 5 s cap) until every pid is gone and reports
// the ones still alive.
func waitDead(pids []int) []int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stillAliveAfter polls for window and reports whether every pid stayed
// alive throughout (a negative assertion: bounded, at most 2 s).
func stillAliveAfter(pids []int, window time.Duration) bool {
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		for _, p := range pids {
			if !alive(p) {
				return false
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// killAtEnd kills the pids the file names when the test ends, so no test
// leaves processes behind.
func killAtEnd(t *testing.T, path string) {
	t.Cleanup(func() {
		for _, p := range readPids(path) {
			if alive(p) {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
}

func pidsFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "pids")
	killAtEnd(t, p)
	return p
}

func toolError(t *testing.T, err error) *sdk.ToolError {
	t.Helper()
	te, ok := sdk.AsToolError(err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *sdk.ToolError", err, err)
	}
	return te
}

func data(t *testing.T, res *sdk.Result) *Data {
	t.Helper()
	if res == nil {
		t.Fatal("nil result")
	}
	d, ok := res.Data.(*Data)
	if !ok {
		t.Fatalf("result data is %T, want *Data", res.Data)
	}
	return d
}
