package pluginmgr

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/sdk"
)

// testPluginDir holds yagent-plugin-test, built from testdata/testplugin by
// TestMain before any test runs.
var testPluginDir string

// The helper host: the test binary re-executed with helperEnv=host starts
// a manager, launches the test plugin, prints its pid and waits to be
// killed.
const (
	helperEnv          = "PLUGINMGR_TEST_HELPER"
	helperPluginDirEnv = "PLUGINMGR_TEST_PLUGIN_DIR"
	helperCacheDirEnv  = "PLUGINMGR_TEST_CACHE_DIR"
)

// panicText is what the test plugin's test_panic tool panics with.
const panicText = "testplugin: deliberate panic 5e1f"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "host" {
		os.Exit(runHelperHost())
	}
	dir, err := os.MkdirTemp("", "pluginmgr-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := testbuild.Build(testbuild.Target{Pkg: "./host/pluginmgr/testdata/testplugin", Out: filepath.Join(dir, BinaryPrefix+"test")}); err != nil {
		fmt.Fprintf(os.Stderr, "build the test plugin: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	testPluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runHelperHost() int {
	m := New(Options{Dirs: []string{os.Getenv(helperPluginDirEnv)}, CacheDir: os.Getenv(helperCacheDirEnv)})
	ctx := context.Background()
	if _, _, err := m.Load(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := m.Plugin("test")
	if p == nil || p.Refused != nil {
		fmt.Fprintln(os.Stderr, "helper host: the test plugin is missing or refused")
		return 1
	}
	if _, err := p.Execute(ctx, sdk.CallInfo{Tool: "test_echo"}, json.RawMessage(`{"text":"x"}`), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(p.PID())
	for { // until killed
		time.Sleep(time.Hour)
	}
}

// newManager returns a manager over the test plugin's folder with a cache
// of the test's own, closed when the test ends.
// agedClock is a clock an hour ahead: every binary looks old enough to
// memoize.
func agedClock() time.Time { return time.Now().Add(time.Hour) }

func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	if opts.Dirs == nil {
		opts.Dirs = []string{testPluginDir}
	}
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	if opts.Backoff == nil {
		opts.Backoff = func(int) time.Duration { return 0 }
	}
	m := New(opts)
	m.now = agedClock // the test plugin was built a moment ago
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Logf("Close: %v", err)
		}
	})
	return m
}

// loadTest loads m and returns the test plugin, failing unless it is usable.
func loadTest(t *testing.T, m *Manager) *Plugin {
	t.Helper()
	plugins, warnings, err := m.Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v (warnings %q)", err, warnings)
	}
	for _, p := range plugins {
		if p.Name == "test" {
			if p.Refused != nil {
				t.Fatalf("Load: test plugin refused: %v", p.Refused)
			}
			return p
		}
	}
	t.Fatalf("Load: no test plugin among %d (warnings %q)", len(plugins), warnings)
	return nil
}

// call runs tool with input (JSON-encoded) in p.
func call(ctx context.Context, p *Plugin, tool string, input any, progress func(sdk.Progress)) (*sdk.Result, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	return p.Execute(ctx, sdk.CallInfo{Tool: tool, SessionID: "s-test"}, raw, progress)
}

type echoOut struct {
	Text     string            `json:"text"`
	PID      int               `json:"pid"`
	Settings map[string]string `json:"settings"`
}

// echo calls test_echo and returns what it said, failing the test on error.
func echo(t *testing.T, p *Plugin, text string) echoOut {
	t.Helper()
	res, err := call(context.Background(), p, "test_echo", map[string]string{"text": text}, nil)
	if err != nil {
		t.Fatalf("Execute(test_echo): %v", err)
	}
	var out echoOut
	if err := json.Unmarshal(res.Data.(json.RawMessage), &out); err != nil {
		t.Fatalf("test_echo data %s: %v", res.Data, err)
	}
	if out.Text != text {
		t.Fatalf("test_echo: got %q, want %q", out.Text, text)
	}
	return out
}

// waitFor polls cond every 10ms for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone reports whether pid no longer runs (absent, or a zombie no
// one has reaped yet).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	// The state follows the parenthesized command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// readPID waits for a file holding a pid and returns it.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func wantToolError(t *testing.T, what string, err error, code string, contains ...string) *sdk.ToolError {
	t.Helper()
	te, ok := sdk.AsToolError(err)
	if !ok {
		t.Fatalf("%s: error %v, want a *sdk.ToolError %s", what, err, code)
	}
	if te.Code != code {
		t.Fatalf("%s: code %q, want %q (%s)", what, te.Code, code, te.Message)
	}
	for _, s := range contains {
		if !strings.Contains(te.Message, s) {
			t.Errorf("%s: message %q does not contain %q", what, te.Message, s)
		}
	}
	return te
}

// TestHostSIGKILLKillsPlugins kills a host process with SIGKILL and
// watches its plugin go too.
func TestHostSIGKILLKillsPlugins(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=host", helperPluginDirEnv+"="+testPluginDir, helperCacheDirEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read the plugin pid from the helper host: %v", err)
	}
	pluginPID, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pluginPID <= 0 {
		t.Fatalf("helper host printed %q, want a pid", line)
	}
	t.Cleanup(func() {
		if !processGone(pluginPID) {
			_ = syscall.Kill(pluginPID, syscall.SIGKILL)
		}
	})
	if processGone(pluginPID) {
		t.Fatalf("plugin %d is not running before the host is killed", pluginPID)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitFor(t, fmt.Sprintf("plugin process %d to exit after its host was killed", pluginPID), func() bool {
		return processGone(pluginPID)
	})
}
