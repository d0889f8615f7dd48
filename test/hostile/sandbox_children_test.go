package hostile

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSandboxEscapingChildren: children that leave their command's
// process group or session die with the call when it times out: each
// command and its tree share one cgroup, killed whole. Each child writes
// its pid (it then execs sleep 300) to a workspace file first.
func TestSandboxEscapingChildren(t *testing.T) {
	t.Parallel()
	const child = `sh -c 'echo $$ > PID; exec sleep 300'`
	cases := []struct {
		name string
		need []string
		cmd  string // PID is the child's pid file
	}{
		{name: "setsid", cmd: "setsid " + child + " & sleep 30"},
		{name: "setsid -f", cmd: "setsid -f " + child + "; sleep 30"},
		{name: "set -m", cmd: "set -m; " + child + " & sleep 30"},
		// A plain double fork or nohup stays in the command's process
		// group, which the timeout already kills; these leave it.
		{name: "nohup in its own job", cmd: "set -m; nohup " + child + " >/dev/null 2>&1 & sleep 30"},
		{name: "double fork with setsid (a daemon)", need: []string{"python3"},
			cmd: `python3 -c "import os,sys
if os.fork(): sys.exit()
os.setsid()
if os.fork(): sys.exit()
open('PID','w').write(str(os.getpid())); os.execvp('sleep', ['sleep', '300'])"; sleep 30`},
	}
	e := newEnv(t)
	c := e.serve("-y")
	for i, tc := range cases {
		pidFile := "pid-" + string(rune('a'+i))
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			// The timeout must leave the child time to start and write its
			// pid, a python3 start included, on a loaded machine.
			r := sbRun(t, c, strings.ReplaceAll(tc.cmd, "PID", pidFile), 4000)
			pid, ok := sbPid(e.ws(pidFile), 5*time.Second)
			if !ok {
				t.Fatalf("the child wrote no pid to %s: %s", pidFile, r)
			}
			t.Cleanup(func() { sbKill(pid, "sleep 300") })
			if r.Code != "timeout" {
				t.Errorf("want the call to time out, got %s", r)
			}
			if !sbGone(pid, "sleep 300", 5*time.Second) {
				t.Errorf("child %d outlived its timed-out call: %s", pid, r)
			}
		})
	}
}

// sbProcs returns the pids whose parent is ppid and whose command line
// holds mark.
func sbProcs(ppid int, mark string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + d.Name() + "/status")
		if err != nil || !strings.Contains(string(status), "\nPPid:\t"+strconv.Itoa(ppid)+"\n") {
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline"); err == nil && strings.Contains(string(cmdline), mark) {
			out = append(out, pid)
		}
	}
	return out
}

// TestSandboxChildrenOfEndedCalls: a setsid child dies with its call
// however the call ends while in flight: its task cancelled, its shell
// plugin or its host killed during the call.
func TestSandboxChildrenOfEndedCalls(t *testing.T) {
	t.Parallel()
	const cmd = `setsid sh -c 'echo $$ > child.pid; exec sleep 303' & sleep 60`
	cases := []struct {
		name string
		task bool // the command yields to a task first
		end  func(t *testing.T, e *env, c *client, task string)
	}{
		{name: "shell_cancel of its task", task: true, end: func(t *testing.T, e *env, c *client, task string) {
			if task == "" {
				t.Fatal("the command did not become a task")
			}
			c.call(t, "shell_cancel", map[string]any{"task_id": task})
		}},
		{name: "the shell plugin killed mid-call", end: sbKillShellPlugin},
		// Nobody is left to enforce the task's timeout: the host must
		// kill its cgroup when it sees the plugin die.
		{name: "the shell plugin killed while its task runs", task: true, end: sbKillShellPlugin},
		{name: "the host killed mid-call", end: func(t *testing.T, e *env, c *client, _ string) {
			hosts := sbProcs(os.Getpid(), e.workspace)
			if len(hosts) == 0 {
				t.Fatal("no host process found")
			}
			for _, host := range hosts {
				_ = syscall.Kill(host, syscall.SIGKILL)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := e.serve("-y")
			var r result
			if tc.task {
				r = c.call(t, "run_bash", map[string]any{"command": cmd, "yield_time_ms": 1000, "timeout_ms": 60000})
			} else {
				// The call stays in flight while its plugin or host dies.
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
					defer cancel()
					_, _ = c.CallTool(ctx, &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{
						"command": cmd, "yield_time_ms": 60000, "timeout_ms": 60000}})
				}()
			}
			pid, ok := sbPid(e.ws("child.pid"), 5*time.Second)
			if !ok {
				t.Fatalf("the child wrote no pid: %s", r)
			}
			t.Cleanup(func() { sbKill(pid, "sleep 303") })
			tc.end(t, e, c, sbTaskID(r))
			if !sbGone(pid, "sleep 303", 5*time.Second) {
				t.Errorf("child %d outlived its call (%s): %s", pid, tc.name, r)
			}
		})
	}
}

// sbKillShellPlugin kills the shell plugin process of e's host.
func sbKillShellPlugin(t *testing.T, e *env, _ *client, _ string) {
	t.Helper()
	var plugins []int
	for _, host := range sbProcs(os.Getpid(), e.workspace) {
		plugins = append(plugins, sbProcs(host, "yagent-plugin-shell")...)
	}
	if len(plugins) == 0 {
		t.Fatal("no shell plugin process found")
	}
	for _, p := range plugins {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}
