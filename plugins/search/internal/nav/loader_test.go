package nav

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// The Go loader's process handling, with scripts standing in for it: each
// test's Finder points Loader at a shell script.

// callCtx is the context of a call with the sandbox on or off.
func callCtx(ws string, on bool) context.Context {
	sb := &sdk.Sandbox{Mode: sdk.SandboxOff}
	if on {
		sb = &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn}
	}
	return sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Tool: "find_references", Workspace: ws, Sandbox: sb})
}

// loaderWorkspace is a module whose package p defines Hello and uses it.
func loaderWorkspace(t *testing.T) string {
	t.Helper()
	if !loaderConfines {
		t.Skip("this OS has no sandbox layers: the type checker runs in process")
	}
	ws := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":  "module example.com/ws\n\ngo 1.22\n",
		"p/a.go":  "package p\n\nfunc Hello() {}\n",
		"p/b.go":  "package p\n\nfunc use() { Hello() }\n",
		"p/c.txt": "Hello in a note\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// script writes an executable sh script to dir.
func script(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "loader.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// refsAsync runs FindReferences of Hello and returns its outcome on a
// channel.
func refsAsync(ctx context.Context, f *Finder, ws string) <-chan *RefResult {
	ch := make(chan *RefResult, 1)
	go func() {
		res, err := f.FindReferences(ctx, ws, "Hello")
		if err != nil {
			res = &RefResult{CheckFailed: "FindReferences: " + err.Error()}
		}
		ch <- res
	}()
	return ch
}

// await returns the result, failing the test when none comes within limit
// (a hang).
func await(t *testing.T, ch <-chan *RefResult, limit time.Duration) *RefResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(limit):
		t.Fatalf("find_references did not return within %s", limit)
		return nil
	}
}

// pidIn polls path for a pid the script wrote.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		data, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// running reports whether pid is a live (not zombie) process whose
// command line holds mark.
func running(pid int, mark string) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.Contains(string(cmdline), mark)
}

// gone polls until pid is no longer running.
func gone(pid int, mark string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !running(pid, mark) {
			return true
		}
	}
	return false
}

// killLeft kills a process a failing test left behind.
func killLeft(t *testing.T, pid int, mark string) {
	t.Cleanup(func() {
		if running(pid, mark) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
}

// TestLoaderCancelKillsTree: cancelling the call while the loader runs
// returns at once and leaves neither the loader nor what it started.
func TestLoaderCancelKillsTree(t *testing.T) {
	t.Parallel()
	ws, dir := loaderWorkspace(t), t.TempDir()
	f := &Finder{Base: ws, Loader: script(t, dir, "echo $$ > "+dir+"/loader.pid\nsleep 301 &\necho $! > "+dir+"/child.pid\nwait")}
	ctx, cancel := context.WithCancel(callCtx(ws, true))
	defer cancel()
	ch := refsAsync(ctx, f, ws)
	loader, child := pidIn(t, filepath.Join(dir, "loader.pid")), pidIn(t, filepath.Join(dir, "child.pid"))
	killLeft(t, loader, "loader.sh")
	killLeft(t, child, "301")
	cancel()
	res := await(t, ch, 20*time.Second)
	if !strings.Contains(res.CheckFailed, "stopped") {
		t.Errorf("the result should say the type checker was stopped: %+v", res)
	}
	if !gone(loader, "loader.sh") {
		t.Errorf("the loader %d outlived the cancelled call", loader)
	}
	if !gone(child, "301") {
		t.Errorf("the loader's child %d outlived the cancelled call", child)
	}
}

// TestLoaderLeftoversDie: what the loader started and left running when
// it answered dies with it.
func TestLoaderLeftoversDie(t *testing.T) {
	t.Parallel()
	ws, dir := loaderWorkspace(t), t.TempDir()
	f := &Finder{Base: ws, Loader: script(t, dir, "sleep 302 </dev/null >/dev/null 2>&1 &\necho $! > "+dir+"/child.pid\n"+
		`echo '{"groups":[],"done":[],"unresolved":[]}'`)}
	res := await(t, refsAsync(callCtx(ws, true), f, ws), 20*time.Second)
	child := pidIn(t, filepath.Join(dir, "child.pid"))
	killLeft(t, child, "302")
	if res.CheckFailed != "" {
		t.Fatalf("the loader answered, yet: %+v", res)
	}
	if !gone(child, "302") {
		t.Errorf("the loader's child %d outlived the call", child)
	}
}

// TestLoaderFailureFallsBack: a loader that crashes, answers garbage,
// talks on stderr or never answers costs the call its resolution only:
// the uses are word matches, the package is named unresolved, the reason
// is given, and what the loader wrote on stderr never reaches the result.
func TestLoaderFailureFallsBack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, says string
		timeout          time.Duration
	}{
		{name: "crash", body: "exit 3", says: "exit status 3"},
		{name: "bad answer", body: "echo '{\"groups\": ['", says: "does not parse"},
		{name: "stderr", body: "echo SECRET-from-stderr >&2\nexit 1", says: "exit status 1"},
		{name: "no answer", body: "exec sleep 303", says: "did not finish within", timeout: 300 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, dir := loaderWorkspace(t), t.TempDir()
			f := &Finder{Base: ws, Loader: script(t, dir, tc.body), LoadTimeout: tc.timeout}
			// Should the bound fail, the test's end still stops the loader.
			ctx, cancel := context.WithCancel(callCtx(ws, true))
			t.Cleanup(cancel)
			res := await(t, refsAsync(ctx, f, ws), 20*time.Second)
			data, _ := json.Marshal(res)
			if !strings.Contains(res.CheckFailed, tc.says) {
				t.Errorf("CheckFailed = %q, want it to say %q", res.CheckFailed, tc.says)
			}
			if strings.Contains(string(data), "SECRET") {
				t.Errorf("the loader's stderr reached the result: %s", data)
			}
			if len(res.Unresolved) != 1 || res.Unresolved[0] != "./p" {
				t.Errorf("Unresolved = %q, want the package ./p", res.Unresolved)
			}
			if len(res.Groups) != 1 || res.Groups[0].Kind != "word match" || len(res.Groups[0].Refs) != 2 {
				t.Errorf("want the two uses (b.go, c.txt) as word matches: %s", data)
			}
		})
	}
}

// TestLoaderNotStartedWithoutSandbox: with the sandbox off the type
// checker runs in this process, as before the loader: nothing is started.
// The same Finder under a sandbox does start it (the seam is live).
func TestLoaderNotStartedWithoutSandbox(t *testing.T) {
	t.Parallel()
	ws, dir := loaderWorkspace(t), t.TempDir()
	marker := filepath.Join(dir, "ran")
	f := &Finder{Base: ws, Loader: script(t, dir, "touch "+marker+"\nexit 1")}
	res := await(t, refsAsync(callCtx(ws, false), f, ws), 60*time.Second)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the loader was started for a call without a sandbox")
	}
	if res.CheckFailed != "" || len(res.Groups) == 0 || res.Groups[0].Object != "func p.Hello()" {
		t.Errorf("without a sandbox Hello should resolve in process: %+v", res)
	}
	await(t, refsAsync(callCtx(ws, true), f, ws), 20*time.Second)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("under a sandbox the loader was not started: %v", err)
	}
}

// TestLoaderCallees: under a sandbox the callees of a Go function are
// resolved by the loader too; when it fails they are the calls as written
// and the result says why.
func TestLoaderCallees(t *testing.T) {
	t.Parallel()
	ws, dir := loaderWorkspace(t), t.TempDir()
	f := &Finder{Base: ws, Loader: script(t, dir, "echo SECRET-from-stderr >&2\nexit 3")}
	res, err := f.Callees(callCtx(ws, true), filepath.Join(ws, "p", "b.go"), "use")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(res)
	if res.Resolved || !strings.Contains(res.CheckFailed, "exit status 3") || strings.Contains(string(data), "SECRET") {
		t.Errorf("want the calls as written and why, without the loader's stderr: %s", data)
	}
	if len(res.Callees) != 1 || res.Callees[0].Name != "Hello" {
		t.Errorf("want the call of Hello as written: %s", data)
	}
}
