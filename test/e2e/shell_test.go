package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readPID polls for a pid file the command writes, up to 10 s.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, "pid file "+filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// TestShell_OwnershipSurvivesKills: foreground and yielded commands belong
// to the call and die with the plugin or the host, SIGKILL included; a
// background command was handed to the user and lives on.
func TestShell_OwnershipSurvivesKills(t *testing.T) {
	for _, victim := range []string{"plugin", "host"} {
		t.Run(victim, func(t *testing.T) {
			e := newEnv(t)
			c := e.serve(nil)
			ws := e.workspace

			// Background: handed to the user.
			r := c.call(t, "run_bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 1000", "is_background": true})
			if r.IsError {
				t.Fatalf("background run_bash: %s", text(r))
			}
			bg := readPID(t, filepath.Join(ws, "bg.pid"))
			t.Cleanup(func() { _ = syscall.Kill(-bg, syscall.SIGKILL); _ = syscall.Kill(bg, syscall.SIGKILL) })

			// Yielded: still owned after its call returned.
			r = c.call(t, "run_bash", map[string]any{"command": "echo $$ > yielded.pid; exec sleep 1000", "yield_time_ms": 300})
			if r.IsError || !strings.Contains(text(r), "task") {
				t.Fatalf("yielded run_bash: want a task, got %q", text(r))
			}
			yielded := readPID(t, filepath.Join(ws, "yielded.pid"))

			// Foreground, in flight.
			go func() {
				_, _ = callWithArgs(c, "run_bash", map[string]any{"command": "echo $$ > fg.pid; exec sleep 1000", "yield_time_ms": 600000})
			}()
			fg := readPID(t, filepath.Join(ws, "fg.pid"))

			switch victim {
			case "plugin":
				var shell int
				for pid, exe := range children(c.cmd.Process.Pid) {
					if exe == "yagent-plugin-shell" {
						shell = pid
					}
				}
				if shell == 0 {
					t.Fatalf("no shell plugin under the host: %v", children(c.cmd.Process.Pid))
				}
				if err := syscall.Kill(shell, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			case "host":
				if err := syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "the foreground and yielded commands to die", func() bool {
				return !alive(fg) && !alive(yielded)
			})
			// A negative check needs a moment: the background command must
			// still be there once the owned ones are gone.
			time.Sleep(200 * time.Millisecond)
			if !alive(bg) {
				t.Fatalf("the background command (pid %d) died with the %s", bg, victim)
			}
		})
	}
}

// TestShell_ExecRuleBypassesOverMCP replays attempts to get around an admin
// rule denying rm through run_bash over MCP: none of them may run, with or
// without -y.
func TestShell_ExecRuleBypassesOverMCP(t *testing.T) {
	attempts := []string{
		`rm victim.txt`,
		`/bin/rm victim.txt`,
		`/usr/bin/rm victim.txt`,
		`env rm victim.txt`,
		`env -i rm victim.txt`,
		`nice -n 5 rm victim.txt`,
		`nohup rm victim.txt`,
		`timeout 5 rm victim.txt`,
		`command rm victim.txt`,
		`exec rm victim.txt`,
		`echo victim.txt | xargs rm`,
		`find . -name victim.txt -exec rm {} +`,
		`find . -name victim.txt -execdir rm {} \;`,
		`bash -c "rm victim.txt"`,
		`sh -c 'rm victim.txt'`,
		`bash -c "bash -c 'rm victim.txt'"`,
		`$(echo rm) victim.txt`,
		"`echo rm` victim.txt",
		`eval rm victim.txt`,
		`cmd=rm; $cmd victim.txt`,
		`r{m,} victim.txt`,
		`$'\x72m' victim.txt`,
		`true && rm victim.txt`,
		`(rm victim.txt)`,
		`echo rm victim.txt | bash`,
	}
	for _, yolo := range []bool{false, true} {
		t.Run("yolo="+strconv.FormatBool(yolo), func(t *testing.T) {
			e := newEnv(t)
			if err := os.MkdirAll(filepath.Join(e.workspace, ".yagent"), 0o755); err != nil {
				t.Fatal(err)
			}
			rule := "exec:\n  rules:\n    - {action: deny, program: rm}\n"
			if err := os.WriteFile(filepath.Join(e.workspace, ".yagent", "config.yaml"), []byte(rule), 0o644); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(e.workspace, "victim.txt")
			var flags []string
			if yolo {
				flags = append(flags, "-y")
			}
			c := e.serve(nil, flags...)
			for _, cmd := range attempts {
				if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
					t.Fatal(err)
				}
				r := c.call(t, "run_bash", map[string]any{"command": cmd})
				if _, err := os.Stat(victim); err != nil {
					t.Errorf("%q ran: victim.txt is gone (result %q)", cmd, text(r))
					continue
				}
				want := "denied"
				if !yolo && code(r) == "needs_auth" {
					want = "needs_auth" // an unknowable program asks; nobody is there to answer
				}
				if !r.IsError || code(r) != want {
					t.Errorf("%q: want %s, got isError=%v code=%q %q", cmd, want, r.IsError, code(r), text(r))
				}
			}
			// The rule names rm and nothing else.
			r := c.call(t, "run_bash", map[string]any{"command": "cat victim.txt"})
			if r.IsError || !strings.Contains(text(r), "keep me") {
				t.Fatalf("cat victim.txt: isError=%v %q", r.IsError, text(r))
			}
		})
	}
}
