package e2e

import (
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServe_MergedSurfaceOverMCP drives `yagent serve` as an MCP client would.
func TestServe_MergedSurfaceOverMCP(t *testing.T) {
	e := newEnv(t)
	if out, err := e.cli("plugins", "pin", "hello"); err != nil {
		t.Fatalf("yagent plugins pin hello: %v\n%s", err, out)
	}
	c := e.serve([]string{"YAGENT_DEFERRED=on"}, "--profile", "coder")

	names := c.toolNames(t)
	if !slices.IsSorted(names) {
		t.Errorf("tools/list is not sorted by name: %v", names)
	}
	for _, want := range []string{"load_tool", "agent_exit", "ask_user_for_help", "think"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, "hello") {
		t.Fatalf("hello is a custom plugin's tool: it must be Cold, not listed: %v", names)
	}

	if r := c.call(t, "think", map[string]any{"thought": "plan the change"}); r.IsError {
		t.Fatalf("think failed: %s", text(r))
	}

	// A Cold tool called directly still runs.
	r := c.call(t, "hello", map[string]any{"name": "e2e"})
	if r.IsError || !strings.Contains(text(r), "e2e") {
		t.Fatalf("hello called directly: isError=%v code=%q text=%q", r.IsError, code(r), text(r))
	}

	r = c.call(t, "thnik", map[string]any{"thought": "x"})
	if !r.IsError || !strings.Contains(text(r), "think") {
		t.Fatalf("misspelt name: want an error suggesting think, got isError=%v %q", r.IsError, text(r))
	}

	// load_tool makes a Cold tool part of this session's list.
	drain(c.listChanged)
	r = c.call(t, "load_tool", map[string]any{"names": []string{"todo_read"}})
	if r.IsError {
		t.Fatalf("load_tool: %s", text(r))
	}
	select {
	case <-c.listChanged:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed after load_tool")
	}
	if names := c.toolNames(t); !slices.Contains(names, "todo_read") {
		t.Fatalf("todo_read not listed after load_tool: %v", names)
	}

	// Each plugin runs as its own OS process, a child of the host.
	kids := children(c.cmd.Process.Pid)
	seen := map[string]int{}
	for pid, exe := range kids {
		seen[exe] = pid
	}
	for _, want := range []string{"yagent-plugin-cognitive", "yagent-plugin-hello"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("no %s process under the host (children: %v)", want, kids)
		}
	}
	if seen["yagent-plugin-cognitive"] == seen["yagent-plugin-hello"] {
		t.Errorf("cognitive and hello share a process: %v", kids)
	}
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestServe_SerialCallsDoNotOverlap: non-Serial calls of one session run in
// parallel; Serial ones run one at a time.
func TestServe_SerialCallsDoNotOverlap(t *testing.T) {
	e := newEnv(t)
	if out, err := e.cli("plugins", "pin", "probe"); err != nil {
		t.Fatalf("pin probe: %v\n%s", err, out)
	}
	c := e.serve(nil)

	meet := func(tool string, windowMS int) [2]bool {
		var wg sync.WaitGroup
		var got [2]bool
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := c.call(t, tool, map[string]any{"want": 2, "window_ms": windowMS})
				if r.IsError {
					t.Errorf("%s: %s", tool, text(r))
					return
				}
				var d struct{ Met bool }
				dataOf(t, r, &d)
				got[i] = d.Met
			}()
		}
		wg.Wait()
		return got
	}
	// Generous window: the calls meet as soon as both are in flight.
	if got := meet("probe_meet", 20000); got != [2]bool{true, true} {
		t.Errorf("two non-Serial calls did not overlap: %v", got)
	}
	// A negative assertion needs a window: one second in which the second
	// Serial call must not start.
	if got := meet("probe_meet_serial", 1000); got != [2]bool{false, false} {
		t.Errorf("two Serial calls of one session overlapped: %v", got)
	}
}

// TestServe_PluginKilledMidCall: the call in flight fails with
// plugin_crashed naming the plugin; the next call gets a fresh process.
func TestServe_PluginKilledMidCall(t *testing.T) {
	e := newEnv(t)
	if out, err := e.cli("plugins", "pin", "probe"); err != nil {
		t.Fatalf("pin probe: %v\n%s", err, out)
	}
	c := e.serve(nil)

	var first struct{ PID int }
	dataOf(t, c.call(t, "probe_pid", map[string]any{}), &first)
	if first.PID == 0 {
		t.Fatal("probe_pid returned no pid")
	}

	done := make(chan *callResult, 1)
	go func() {
		res, err := callWithProgress(c, "probe_block")
		done <- &callResult{res, err}
	}()
	select {
	case <-c.progress:
	case <-time.After(20 * time.Second):
		t.Fatal("probe_block never reported progress")
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill plugin: %v", err)
	}
	var got *callResult
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight did not return after its plugin was killed")
	}
	if got.err != nil {
		t.Fatalf("call in flight: %v", got.err)
	}
	if !got.res.IsError || code(got.res) != "plugin_crashed" || !strings.Contains(text(got.res), "probe") {
		t.Fatalf("want plugin_crashed naming probe, got isError=%v code=%q text=%q", got.res.IsError, code(got.res), text(got.res))
	}

	var second struct{ PID int }
	r := c.call(t, "probe_pid", map[string]any{})
	if r.IsError {
		t.Fatalf("call after crash: %s", text(r))
	}
	dataOf(t, r, &second)
	if second.PID == 0 || second.PID == first.PID {
		t.Fatalf("want a fresh plugin process, got pid %d (was %d)", second.PID, first.PID)
	}
}

// TestServe_HostSIGKILLTakesPluginsDown: no plugin process outlives a host
// killed with SIGKILL.
func TestServe_HostSIGKILLTakesPluginsDown(t *testing.T) {
	e := newEnv(t)
	c := e.serve(nil, "-y")
	c.call(t, "think", map[string]any{"thought": "start the cognitive plugin"})
	c.call(t, "probe_pid", map[string]any{})

	host := c.cmd.Process.Pid
	kids := children(host)
	var plugins []int
	for pid, exe := range kids {
		if strings.HasPrefix(exe, "yagent-plugin-") {
			plugins = append(plugins, pid)
		}
	}
	if len(plugins) < 2 {
		t.Fatalf("want at least 2 plugin processes under the host, got %v", kids)
	}
	if err := syscall.Kill(host, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "plugin processes to exit after the host was killed", func() bool {
		for _, pid := range plugins {
			if alive(pid) {
				return false
			}
		}
		return true
	})
}

// TestServe_PluginsDoNotShareTheMCPStdin: under `yagent serve` stdin is the
// MCP stream; a plugin reading its stdin gets end of file, not the client's
// messages.
func TestServe_PluginsDoNotShareTheMCPStdin(t *testing.T) {
	e := newEnv(t)
	c := e.serve(nil, "-y")
	r := c.call(t, "probe_stdin", map[string]any{})
	if got := text(r); got != "error: EOF" {
		t.Fatalf("a plugin reading stdin: got %q, want end of file", got)
	}
	if r := c.call(t, "think", map[string]any{"thought": "still connected"}); r.IsError {
		t.Fatalf("the MCP stream broke: %s", text(r))
	}
}
