package pluginmgr

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

var testToolNames = []string{"test_approve", "test_cgroups", "test_echo", "test_panic", "test_progress", "test_slow", "test_spawn", "test_traced"}

func specNames(specs []sdk.Spec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

// fakeHost approves every request and records it.
type fakeHost struct {
	mu    sync.Mutex
	asked []string // plugin/call id/tool/session/paths/the caller's value
}

// callerKey is a value the caller of Execute puts in its context: the
// approval callback must see it (the host finds the session that way).
type callerKey struct{}

func (f *fakeHost) RequestApproval(ctx context.Context, plugin string, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	caller, _ := ctx.Value(callerKey{}).(string)
	f.asked = append(f.asked, strings.Join([]string{plugin, call.ID, call.Tool, call.SessionID, strings.Join(req.Paths, ","), caller}, "/"))
	return sdk.ApprovalResponse{Approved: true, Reason: "fake says yes"}, nil
}

// eachPath runs test twice, with the plugin's calls on its call channel
// and with them as gRPC streams (Options.GRPCCalls).
func eachPath(t *testing.T, test func(t *testing.T, grpc bool)) {
	for _, grpc := range []bool{false, true} {
		name := "channel"
		if grpc {
			name = "grpc"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, grpc)
		})
	}
}

func TestLoad_DescribesAndCalls(t *testing.T) {
	t.Parallel()
	eachPath(t, func(t *testing.T, grpc bool) {
		host := &fakeHost{}
		m := newManager(t, Options{Host: host, Settings: map[string]map[string]string{"test": {"color": "blue"}}, GRPCCalls: grpc})
		p := loadTest(t, m)
		if p.CallChannel() == grpc {
			t.Fatalf("calls on the call channel: %v, want %v", p.CallChannel(), !grpc)
		}
		if p.Version != "0.0.1" || !reflect.DeepEqual(specNames(p.Specs), testToolNames) {
			t.Fatalf("Load: version %q specs %v, want 0.0.1 and %v", p.Version, specNames(p.Specs), testToolNames)
		}
		if p.PID() == 0 {
			t.Fatal("PID() = 0 after a cold Load, which launches the plugin to describe it")
		}
		if _, err := os.Stat(filepath.Join(m.opts.CacheDir, p.SHA256+".json")); err != nil {
			t.Errorf("spec cache not written: %v", err)
		}

		t.Run("echo", func(t *testing.T) {
			out := echo(t, p, "hello")
			if out.PID != p.PID() {
				t.Errorf("echo ran in pid %d, PID() = %d", out.PID, p.PID())
			}
			if out.Settings["color"] != "blue" {
				t.Errorf("settings seen by the plugin: %v, want color=blue", out.Settings)
			}
		})
		t.Run("progress", func(t *testing.T) {
			var got []sdk.Progress
			res, err := call(context.Background(), p, "test_progress", map[string]int{"n": 3}, func(pr sdk.Progress) { got = append(got, pr) })
			if err != nil || res.Text != "done" {
				t.Fatalf("Execute(test_progress): %+v, %v", res, err)
			}
			want := []sdk.Progress{{Message: "step 1", Progress: 1, Total: 3}, {Message: "step 2", Progress: 2, Total: 3}, {Message: "step 3", Progress: 3, Total: 3}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("progress: got %+v, want %+v", got, want)
			}
		})
		t.Run("approval", func(t *testing.T) {
			ctx := context.WithValue(context.Background(), callerKey{}, "sess-7")
			res, err := p.Execute(ctx, sdk.CallInfo{ID: "c-7", Tool: "test_approve", SessionID: "s-7"}, []byte(`{"path":"/etc/x"}`), nil)
			if err != nil || res.Text != "approved=true reason=fake says yes" {
				t.Fatalf("Execute(test_approve): %+v, %v", res, err)
			}
			host.mu.Lock()
			defer host.mu.Unlock()
			if want := []string{"test/c-7/test_approve/s-7//etc/x/sess-7"}; !reflect.DeepEqual(host.asked, want) {
				t.Errorf("approvals asked: %q, want %q", host.asked, want)
			}
		})
		t.Run("unknown tool", func(t *testing.T) {
			_, err := call(context.Background(), p, "test_nope", struct{}{}, nil)
			wantToolError(t, "Execute(test_nope)", err, sdk.CodeUnknownTool, "test_nope", "test_echo")
		})
	})
}

func TestLoad_WarmCacheStartsLazily(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	cold := loadTest(t, newManager(t, Options{CacheDir: cache}))

	m := newManager(t, Options{CacheDir: cache})
	p := loadTest(t, m)
	if pid := p.PID(); pid != 0 {
		t.Fatalf("PID() = %d after a warm Load, want 0 (no process before the first call)", pid)
	}
	if !reflect.DeepEqual(p.Specs, cold.Specs) || p.Version != cold.Version {
		t.Fatalf("warm specs differ from cold ones:\n got %+v\nwant %+v", p.Specs, cold.Specs)
	}
	out := echo(t, p, "lazy")
	if out.PID == 0 || out.PID != p.PID() {
		t.Errorf("first call ran in pid %d, PID() = %d; want the same non-zero pid", out.PID, p.PID())
	}
}

func TestLoad_WarmStartHashesNothing(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	countingManager := func() (*Manager, *atomic.Int32) {
		m := newManager(t, Options{CacheDir: cache})
		var n atomic.Int32
		m.hashFile = func(path string) (string, error) {
			n.Add(1)
			return policy.SumFile(path)
		}
		return m, &n
	}
	m1, cold := countingManager()
	loadTest(t, m1)
	if cold.Load() != 1 {
		t.Fatalf("cold start hashed %d times, want 1", cold.Load())
	}
	m2, warm := countingManager()
	p := loadTest(t, m2)
	if warm.Load() != 0 {
		t.Errorf("warm start hashed %d times, want 0", warm.Load())
	}
	if p.SHA256 == "" || p.PID() != 0 {
		t.Errorf("warm start: sum %q pid %d, want the memoized sum and no process", p.SHA256, p.PID())
	}
}

func TestCrash_SIGKILLDuringCall(t *testing.T) {
	t.Parallel()
	eachPath(t, func(t *testing.T, grpc bool) {
		p := loadTest(t, newManager(t, Options{GRPCCalls: grpc}))
		ready := filepath.Join(t.TempDir(), "ready")
		errc := make(chan error, 1)
		go func() {
			_, err := call(context.Background(), p, "test_slow", map[string]string{"ready_file": ready}, nil)
			errc <- err
		}()
		old := readPID(t, ready)
		if old != p.PID() {
			t.Fatalf("test_slow runs in pid %d, PID() = %d", old, p.PID())
		}
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			wantToolError(t, "Execute(test_slow) when the plugin is killed", err, sdk.CodePluginCrashed, "plugin test crashed", "test_slow")
		case <-time.After(10 * time.Second):
			t.Fatal("Execute(test_slow) did not return after its plugin was killed")
		}
		out := echo(t, p, "again")
		if out.PID == old || out.PID != p.PID() {
			t.Errorf("call after the crash ran in pid %d (old %d, PID() %d), want a new process", out.PID, old, p.PID())
		}
	})
}

func TestCrash_PanicReportsText(t *testing.T) {
	t.Parallel()
	p := loadTest(t, newManager(t, Options{}))
	old := p.PID()
	_, err := call(context.Background(), p, "test_panic", struct{}{}, nil)
	te := wantToolError(t, "Execute(test_panic)", err, sdk.CodePluginCrashed, "plugin test", "panic: "+panicText)
	if data, _ := te.Data.(map[string]any); data["panic"] != "panic: "+panicText {
		t.Errorf("crash data: %v, want the panic text", te.Data)
	}
	if out := echo(t, p, "after panic"); out.PID == old {
		t.Errorf("call after the panic ran in the old pid %d", old)
	}
}

func TestCrash_KillsReportedGroups(t *testing.T) {
	t.Parallel()
	p := loadTest(t, newManager(t, Options{}))
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	errc := make(chan error, 1)
	go func() {
		_, err := call(context.Background(), p, "test_spawn", map[string]string{"pid_file": pidFile}, nil)
		errc <- err
	}()
	sleepPID := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(-sleepPID, syscall.SIGKILL) })
	if processGone(sleepPID) {
		t.Fatalf("sleep %d is not running", sleepPID)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		wantToolError(t, "Execute(test_spawn) when the plugin is killed", err, sdk.CodePluginCrashed, "plugin test")
	case <-time.After(10 * time.Second):
		t.Fatal("Execute(test_spawn) did not return after its plugin was killed")
	}
	waitFor(t, "the crashed plugin's reported process group to be killed", func() bool { return processGone(sleepPID) })
}

func TestKillReportedGroupsEndsInFlightCall(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	p := loadTest(t, m)
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	type outcome struct {
		res *sdk.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := call(context.Background(), p, "test_spawn", map[string]string{"pid_file": pidFile}, nil)
		done <- outcome{res, err}
	}()
	sleepPID := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(-sleepPID, syscall.SIGKILL) })
	pluginPID := p.PID()
	m.KillReportedGroups()
	select {
	case o := <-done:
		if o.err != nil || !strings.Contains(o.res.Text, "sleep ended: signal: killed") {
			t.Fatalf("Execute(test_spawn) after KillReportedGroups: %+v, %v; want its sleep killed", o.res, o.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Execute(test_spawn) did not return after KillReportedGroups")
	}
	if p.PID() != pluginPID || processGone(pluginPID) {
		t.Errorf("the plugin itself (pid %d) must survive KillReportedGroups; PID() = %d", pluginPID, p.PID())
	}
}

func TestCrash_RestartBackoff(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var attempts []int
	p := loadTest(t, newManager(t, Options{Backoff: func(attempt int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, attempt)
		return 0
	}}))
	crash := func() {
		t.Helper()
		_, err := call(context.Background(), p, "test_panic", struct{}{}, nil)
		wantToolError(t, "Execute(test_panic)", err, sdk.CodePluginCrashed)
	}
	crash()             // the first process dies
	crash()             // started after Backoff(0), dies too
	echo(t, p, "alive") // started after Backoff(1); succeeds, so the count starts over
	crash()
	echo(t, p, "alive again") // started after Backoff(0)
	mu.Lock()
	defer mu.Unlock()
	if want := []int{0, 1, 0}; !reflect.DeepEqual(attempts, want) {
		t.Errorf("Backoff attempts: got %v, want %v", attempts, want)
	}
}

func TestConcurrentCallsShareOneProcess(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	loadTest(t, newManager(t, Options{CacheDir: cache}))
	p := loadTest(t, newManager(t, Options{CacheDir: cache})) // warm: not running
	const n = 8
	pids := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := call(context.Background(), p, "test_echo", map[string]string{"text": "x"}, nil)
			if err != nil {
				t.Errorf("Execute: %v", err)
				return
			}
			var out echoOut
			_ = jsonUnmarshal(res.Data, &out)
			pids[i] = out.PID
		}()
	}
	wg.Wait()
	for i, pid := range pids {
		if pid == 0 || pid != pids[0] {
			t.Fatalf("call %d ran in pid %d, call 0 in %d; want one shared process", i, pid, pids[0])
		}
	}
	p.mu.Lock()
	launches := p.launches
	p.mu.Unlock()
	if launches != 1 {
		t.Errorf("%d concurrent first calls launched %d processes, want 1", n, launches)
	}
}

func TestExecute_CancelAndDeadlineAreNotCrashes(t *testing.T) {
	t.Parallel()
	p := loadTest(t, newManager(t, Options{}))
	pid := p.PID()

	ctx, cancel := context.WithCancel(context.Background())
	ready := filepath.Join(t.TempDir(), "ready")
	errc := make(chan error, 1)
	go func() {
		_, err := call(ctx, p, "test_slow", map[string]string{"ready_file": ready}, nil)
		errc <- err
	}()
	readPID(t, ready)
	cancel()
	wantToolError(t, "Execute(test_slow) cancelled", <-errc, sdk.CodeCancelled, "test_slow")

	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := call(ctx, p, "test_slow", struct{}{}, nil)
	wantToolError(t, "Execute(test_slow) past its deadline", err, sdk.CodeTimeout, "test_slow")

	if p.PID() != pid {
		t.Errorf("PID() = %d after a cancel and a timeout, want the same process %d", p.PID(), pid)
	}
	echo(t, p, "still here")
}

func TestPin(t *testing.T) {
	t.Parallel()
	sum, err := policy.SumFile(filepath.Join(testPluginDir, BinaryPrefix+"test"))
	if err != nil {
		t.Fatal(err)
	}
	const wrong = "0000000000000000000000000000000000000000000000000000000000000000"
	tests := []struct {
		name       string
		lock       *Lock // nil: no lock file
		wantPinned bool
		wantRefuse bool
	}{
		{name: "no lock file", lock: nil},
		{name: "not in the lock", lock: &Lock{Plugins: map[string]LockEntry{"other": {SHA256: wrong}}}},
		{name: "pinned", lock: &Lock{Plugins: map[string]LockEntry{"test": {SHA256: sum}}}, wantPinned: true},
		{name: "mismatch", lock: &Lock{Plugins: map[string]LockEntry{"test": {SHA256: wrong}}}, wantRefuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lockFile := filepath.Join(t.TempDir(), "plugins.lock")
			if tt.lock != nil {
				writeJSON(t, lockFile, tt.lock)
			}
			m := newManager(t, Options{LockFile: lockFile})
			plugins, warnings, err := m.Load(context.Background())
			if err != nil || len(plugins) != 1 {
				t.Fatalf("Load: %d plugins, %v", len(plugins), err)
			}
			p := plugins[0]
			if p.Pinned != tt.wantPinned {
				t.Errorf("Pinned = %v, want %v", p.Pinned, tt.wantPinned)
			}
			if !tt.wantRefuse {
				if p.Refused != nil {
					t.Fatalf("Refused: %v, want nil", p.Refused)
				}
				echo(t, p, "runs")
				return
			}
			var mismatch *PinMismatchError
			if !errors.As(p.Refused, &mismatch) || mismatch.Expected != wrong || mismatch.Actual != sum {
				t.Fatalf("Refused: %v, want a pin mismatch expecting %s, actual %s", p.Refused, wrong, sum)
			}
			for _, s := range []string{wrong, sum} {
				if !strings.Contains(p.Refused.Error(), s) || !strings.Contains(strings.Join(warnings, "\n"), s) {
					t.Errorf("refusal %q / warnings %q do not name sum %s", p.Refused, warnings, s)
				}
			}
			_, err = call(context.Background(), p, "test_echo", map[string]string{"text": "x"}, nil)
			wantToolError(t, "Execute on a refused plugin", err, sdk.CodePluginFailed, wrong, sum)
			if p.PID() != 0 || p.launches != 0 {
				t.Errorf("a refused plugin was launched (pid %d, %d launches)", p.PID(), p.launches)
			}
		})
	}
}

func TestLaunch_RefusesBinaryChangedSinceLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, BinaryPrefix+"test")
	copyFile(t, filepath.Join(testPluginDir, BinaryPrefix+"test"), bin)
	cache := t.TempDir()
	loadTest(t, newManager(t, Options{Dirs: []string{dir}, CacheDir: cache}))
	p := loadTest(t, newManager(t, Options{Dirs: []string{dir}, CacheDir: cache})) // warm: not running
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	_, err := call(context.Background(), p, "test_echo", map[string]string{"text": "x"}, nil)
	wantToolError(t, "Execute after the binary changed", err, sdk.CodePluginFailed, "changed since it was loaded")
}

func TestClose_ShutsPluginsDown(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "shutdown")
	m := newManager(t, Options{Settings: map[string]map[string]string{"test": {"shutdown_file": marker}}})
	p := loadTest(t, m)
	pid := p.PID()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("OnShutdown did not run: %v", err)
	}
	waitFor(t, "the plugin process to exit after Close", func() bool { return processGone(pid) })
	_, err := call(context.Background(), p, "test_echo", map[string]string{"text": "x"}, nil)
	wantToolError(t, "Execute after Close", err, sdk.CodePluginFailed, "closed")
}

func TestIdleCrash_NextCallStartsFresh(t *testing.T) {
	t.Parallel()
	p := loadTest(t, newManager(t, Options{}))
	p.mu.Lock()
	inst := p.inst
	p.mu.Unlock()
	if err := syscall.Kill(inst.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inst.remote.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed plugin was not noticed to exit")
	}
	if out := echo(t, p, "fresh"); out.PID == inst.pid {
		t.Errorf("call after the idle plugin died ran in its old pid %d", inst.pid)
	}
}
