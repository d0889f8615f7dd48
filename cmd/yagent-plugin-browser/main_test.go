package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/plugins/browser/chrome"
	"github.com/yagent/yagent/sdk"
)

// pluginDir holds yagent-plugin-browser, built by TestMain.
var pluginDir string

// helperEnv re-executes the test binary as a host: it loads the browser
// plugin from helperDirEnv, with its spec cache in helperCacheEnv (the
// test's folder: the helper is killed, so it removes nothing), opens a
// page, prints the plugin's pid and waits to be killed.
const (
	helperEnv      = "BROWSER_TEST_HELPER"
	helperDirEnv   = "BROWSER_TEST_PLUGIN_DIR"
	helperCacheEnv = "BROWSER_TEST_CACHE_DIR"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "host" {
		os.Exit(runHelperHost())
	}
	dir, err := os.MkdirTemp("", "browser-plugin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := testbuild.Build(testbuild.Plugin(dir, "browser")); err != nil {
		fmt.Fprintf(os.Stderr, "build the browser plugin: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runHelperHost() int {
	m := pluginmgr.New(pluginmgr.Options{Dirs: []string{os.Getenv(helperDirEnv)}, CacheDir: os.Getenv(helperCacheEnv)})
	ctx := context.Background()
	if _, _, err := m.Load(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := m.Plugin("browser")
	if p == nil || p.Refused != nil {
		fmt.Fprintln(os.Stderr, "helper host: the browser plugin is missing or refused")
		return 1
	}
	if _, err := p.Execute(ctx, sdk.CallInfo{Tool: "browser_navigate", SessionID: "h"}, json.RawMessage(`{"url":"about:blank"}`), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(p.PID())
	select {} // until killed
}

func needBrowser(t *testing.T) {
	t.Helper()
	if _, err := chrome.Find(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the browser tests: %v", err)
		}
		t.Skipf("no browser: %v", err)
	}
}

// host is the real plugin binary under the host's plugin manager.
type host struct {
	t         *testing.T
	m         *pluginmgr.Manager
	p         *pluginmgr.Plugin
	workspace string
}

func newHost(t *testing.T, stateDir string) *host {
	t.Helper()
	m := pluginmgr.New(pluginmgr.Options{
		Dirs:     []string{pluginDir},
		CacheDir: t.TempDir(),
		Settings: map[string]map[string]string{"browser": {"state_dir": stateDir}},
		Backoff:  func(int) time.Duration { return 0 },
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	if _, _, err := m.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	p := m.Plugin("browser")
	if p == nil || p.Refused != nil {
		t.Fatalf("the browser plugin did not load: %+v", p)
	}
	return &host{t: t, m: m, p: p, workspace: t.TempDir()}
}

func (h *host) call(tool string, input any) string {
	h.t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := h.p.Execute(ctx, sdk.CallInfo{Tool: tool, SessionID: "e2e", Workspace: h.workspace}, raw, nil)
	if err != nil {
		h.t.Fatalf("%s: %v", tool, err)
	}
	return res.Text
}

// TestSIGKILLedPluginLeavesNoBrowser kills the plugin process with SIGKILL
// and counts the processes it had started (the browser and its children,
// recorded before the kill): none may outlive it. The plugin the host
// starts again reopens the session's tabs.
func TestSIGKILLedPluginLeavesNoBrowser(t *testing.T) {
	needBrowser(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<!doctype html><title>Page %s</title><h1>At %s</h1>", r.URL.Path, r.URL.Path)
	}))
	defer site.Close()
	h := newHost(t, t.TempDir())
	h.call("browser_navigate", map[string]any{"url": site.URL + "/one"})
	h.call("browser_tabs", map[string]any{"action": "new", "url": site.URL + "/two"})

	pid := h.p.PID()
	if pid == 0 {
		t.Fatal("the plugin is not running")
	}
	procs := descendants(pid)
	browsers := 0
	for _, p := range procs {
		if strings.Contains(p.comm, "chrom") {
			browsers++
		}
	}
	if browsers == 0 {
		t.Fatalf("no browser process under the plugin %d: %v", pid, procs)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitAllGone(t, procs, "the plugin's SIGKILL")

	list := h.call("browser_tabs", map[string]any{"action": "list"})
	for _, want := range []string{"Reopened 2 tab(s)", "- 0: [Page /one] (" + site.URL + "/one)", "- 1: (current) [Page /two] (" + site.URL + "/two)"} {
		if !strings.Contains(list, want) {
			t.Fatalf("after the restart: missing %q in:\n%s", want, list)
		}
	}

	// A graceful stop leaves nothing either.
	pid = h.p.PID()
	procs = descendants(pid)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitAllGone(t, procs, "the plugin's shutdown")
}

// TestSIGKILLedHostLeavesNoBrowser kills the host (a helper process
// running the plugin manager) with SIGKILL: the plugin and every browser
// process under it must go too.
func TestSIGKILLedHostLeavesNoBrowser(t *testing.T) {
	needBrowser(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(exe, "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=host", helperDirEnv+"="+pluginDir, helperCacheEnv+"="+t.TempDir())
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	var pluginPID int
	if _, err := fmt.Fscan(out, &pluginPID); err != nil {
		t.Fatalf("read the plugin's pid from the helper host: %v", err)
	}
	procs := descendants(helper.Process.Pid)
	browsers := 0
	for _, p := range procs {
		if strings.Contains(p.comm, "chrom") {
			browsers++
		}
	}
	if browsers == 0 || !slices.ContainsFunc(procs, func(p proc) bool { return p.pid == pluginPID }) {
		t.Fatalf("under the helper host: %v; want the plugin %d and a browser", procs, pluginPID)
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	waitAllGone(t, procs, "the host's SIGKILL")
}

// waitAllGone polls, with a generous bound, until none of procs is alive.
func waitAllGone(t *testing.T, procs []proc, after string) {
	t.Helper()
	start := time.Now()
	for {
		var left []proc
		for _, p := range procs {
			if p.alive() {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			t.Logf("all %d processes gone %v after %s", len(procs), time.Since(start).Round(time.Millisecond), after)
			return
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d of %d processes outlived %s by 30s: %v", len(left), len(procs), after, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a process as /proc shows it; start tells it from a later
// process that reuses its pid.
type proc struct {
	pid   int
	comm  string
	start string
}

func (p proc) alive() bool {
	q, ok := readProc(p.pid)
	return ok && q.start == p.start && !q.zombie()
}

func (p proc) zombie() bool { return strings.HasPrefix(p.comm, "Z ") }

func (p proc) String() string { return fmt.Sprintf("%d(%s)", p.pid, p.comm) }

// readProc reads /proc/<pid>/stat: its command, state, parent and start time.
func readProc(pid int) (proc, bool) {
	p, _, ok := readStat(pid)
	return p, ok
}

func readStat(pid int) (proc, int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, 0, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return proc{}, 0, false
	}
	fields := strings.Fields(s[close+1:])
	if len(fields) < 20 {
		return proc{}, 0, false
	}
	ppid, _ := strconv.Atoi(fields[1])
	comm := s[open+1 : close]
	if fields[0] == "Z" {
		comm = "Z " + comm
	}
	return proc{pid: pid, comm: comm, start: fields[19]}, ppid, true
}

// descendants lists every process below pid.
func descendants(pid int) []proc {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ppid, ok := readStat(n); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}
