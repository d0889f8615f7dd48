package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestHTTP_EndedSessionReleasesWhatItHeld: when a session ends, by DELETE
// or by idling past --session-idle, the plugins release what they held for
// it: its yielded foreground command is killed and its todos are gone from
// disk, while its background command lives on.
func TestHTTP_EndedSessionReleasesWhatItHeld(t *testing.T) {
	for _, how := range []string{"delete", "idle"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			var flags []string
			if how == "idle" {
				flags = []string{"--session-idle", "2s"}
			}
			h := e.serveHTTP(e2eToken, flags...)
			cs := h.connect(t)
			ws := e.workspace

			todo := map[string]any{"todos": []map[string]any{{"id": "1", "content": "a todo of the session", "status": "pending"}}}
			if r := callHTTP(t, cs, "todo_write", todo); r.IsError {
				t.Fatalf("todo_write: %s", text(r))
			}
			saved := filepath.Join(sdk.SessionDir(filepath.Join(e.home, ".yagent", "state"), cs.ID()), "cognitive.json")
			if _, err := os.Stat(saved); err != nil {
				t.Fatalf("the session's todos are not where the cognitive plugin keeps them: %v", err)
			}

			if r := callHTTP(t, cs, "run_bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 1000", "is_background": true}); r.IsError {
				t.Fatalf("background run_bash: %s", text(r))
			}
			bg := readPID(t, filepath.Join(ws, "bg.pid"))
			t.Cleanup(func() { _ = syscall.Kill(-bg, syscall.SIGKILL); _ = syscall.Kill(bg, syscall.SIGKILL) })

			r := callHTTP(t, cs, "run_bash", map[string]any{"command": "echo $$ > fg.pid; exec sleep 1000", "yield_time_ms": 300})
			if r.IsError || !strings.Contains(text(r), "sh-") {
				t.Fatalf("run_bash yielding: want a running task, got %s", text(r))
			}
			fg := readPID(t, filepath.Join(ws, "fg.pid"))
			t.Cleanup(func() { _ = syscall.Kill(fg, syscall.SIGKILL) })

			if how == "delete" {
				if got := h.delete(t, cs.ID()); got != http.StatusNoContent {
					t.Fatalf("DELETE: got %d, want 204", got)
				}
			}
			// Idle: nothing is sent; the session ends 2 s after its last POST.
			eventually(t, "the yielded foreground command to die with its session", func() bool { return !alive(fg) })
			eventually(t, "the session's todos to be removed from disk", func() bool {
				_, err := os.Stat(saved)
				return os.IsNotExist(err)
			})
			if !alive(bg) {
				t.Fatalf("the background command (pid %d) died with the session; is_background commands live on", bg)
			}
		})
	}
}

// TestHTTP_SessionsDoNotShareTasks: a shell task of one session is
// neither listed in another nor reachable from it by its id.
func TestHTTP_SessionsDoNotShareTasks(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	a, b := h.connect(t), h.connect(t)
	r := callHTTP(t, a, "run_bash", map[string]any{"command": "echo $$ > a.pid; exec sleep 1000", "yield_time_ms": 300})
	id := taskID.FindString(text(r))
	if r.IsError || id == "" {
		t.Fatalf("run_bash yielding in session A: want a running task, got %s", text(r))
	}
	pid := readPID(t, filepath.Join(e.workspace, "a.pid"))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	if got := text(callHTTP(t, b, "shell_tasks", map[string]any{})); strings.Contains(got, id) {
		t.Errorf("session B's shell_tasks lists session A's task %s:\n%s", id, got)
	}
	for _, tool := range []string{"shell_wait", "shell_cancel"} {
		if r := callHTTP(t, b, tool, map[string]any{"task_id": id}); !r.IsError {
			t.Errorf("%s of session A's task %s from session B succeeded: %s", tool, id, text(r))
		}
	}
	if !alive(pid) {
		t.Fatal("session B's shell_cancel of session A's task killed it")
	}
	if got := text(callHTTP(t, a, "shell_tasks", map[string]any{})); !strings.Contains(got, id) {
		t.Errorf("session A's shell_tasks does not list its own task %s:\n%s", id, got)
	}
}

var taskID = regexp.MustCompile(`sh-[0-9]+`)
