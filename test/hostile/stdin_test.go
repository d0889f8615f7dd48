package hostile

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdinUser plays a user who approves starting tasks (run_bash) and
// declines everything else, so a task that asks to start (an interactive
// shell, later an interpreter) still starts, and what is typed into it is
// judged on its own.
type stdinUser struct {
	mu    sync.Mutex
	asked []string
}

func (u *stdinUser) handle(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, r.Params.Message)
	if strings.HasPrefix(r.Params.Message, "yagent: run_bash ") {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"scope": "once"}}, nil
	}
	return &mcp.ElicitResult{Action: "decline", Content: map[string]any{"reason": "not that"}}, nil
}

// stdinServe starts yagent serve with flags and a stdinUser.
func stdinServe(e *env, flags ...string) (*client, *stdinUser) {
	e.t.Helper()
	u := &stdinUser{}
	return e.serveWith(&mcp.ClientOptions{ElicitationHandler: u.handle}, flags...), u
}

// stdinTask starts command as a shell task (mode pty unless mode says
// otherwise) and returns its id once it waits for input. It fails t when
// the command did not become a task.
func stdinTask(t *testing.T, c *client, command, mode string) string {
	t.Helper()
	if mode == "" {
		mode = "pty"
	}
	r := c.call(t, "run_bash", map[string]any{"command": command, "mode": mode, "yield_time_ms": 1500})
	var d struct {
		Status string `json:"status"`
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(r.Data, &d)
	if r.Code != "" || d.Status != "running" || d.TaskID == "" {
		t.Fatalf("run_bash %q did not start a task: %s", command, r)
	}
	return d.TaskID
}

// stdinPrompted waits until task id waits for input at a prompt: typed
// before the program reads, text waits in the terminal for whoever reads
// next, and the guard judges it so. On a loaded machine a REPL may take
// longer than run_bash's yield to reach its prompt.
func stdinPrompted(t *testing.T, c *client, id string) {
	t.Helper()
	var last string
	for range 20 {
		r := c.call(t, "shell_wait", map[string]any{"task_id": id, "timeout_ms": 1500})
		if strings.Contains(r.Text, "waiting for input") {
			return
		}
		last = r.Text + " " + string(r.Data)
	}
	t.Fatalf("task %s never waited for input at a prompt; it last said: %s", id, last)
}

// stdinOutput returns what the task printed since it was last read,
// waiting briefly: the echo of anything typed into its terminal shows here.
func stdinOutput(t *testing.T, c *client, id string) string {
	t.Helper()
	r := c.call(t, "shell_wait", map[string]any{"task_id": id, "timeout_ms": 1500})
	return r.Text + string(r.Data)
}

// stdinDenyConfig writes a user config whose exec rules deny printenv: a
// rule that stands under -y.
func stdinDenyConfig(e *env) {
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), "exec: {rules: [{action: deny, program: printenv}]}\n")
}

// stdinPythonCopy copies the python interpreter into the workspace under a
// shell's name, ./bash, and returns nothing: the file it runs is python's.
func stdinPythonCopy(t *testing.T, e *env) {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	b, err := os.ReadFile(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.ws("bash"), b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// stdinRealPython puts the folder of the python3 interpreter itself first
// on the served PATH, where python3 on PATH is something else that runs it
// (a version manager's shim, a script that takes its time): the cases start
// one interpreter, under one approval of run_bash, and a shim would start a
// second exec the test's user is asked about later, from shell_wait.
func stdinRealPython(t *testing.T, e *env) {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	real := strings.TrimSpace(string(out))
	onPath, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	if a, b := evalSymlinks(onPath), evalSymlinks(real); a != b && filepath.Base(real) == "python3" {
		e.extraEnv = append(e.extraEnv, "PATH="+filepath.Dir(real)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
}

func evalSymlinks(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// stdinRepeat returns n times s.
func stdinRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// stdinPyShell is the python line that starts shell on the terminal,
// where the guard never sees it start.
func stdinPyShell(shell string) string {
	return "import os; os.system('" + shell + "')"
}

// TestInputIsJudged: text typed into a task is judged by what reads it. A
// shell's line is checked as run_bash's command would be (an outside read
// asks, a deny stands under -y); text for any other program asks. Blocked
// input never reaches the program: its terminal never echoes it.
func TestInputIsJudged(t *testing.T) {
	t.Parallel()
	type step struct {
		input string
		keys  []string
	}
	cases := []struct {
		name    string
		need    string // a program the case needs on PATH
		setup   func(t *testing.T, e *env)
		flags   []string
		command string
		mode    string
		// before are writes that must run (judged allowed) before the attack.
		before []step
		// input is the attack; {secret} is the outside secret's path.
		input string
		keys  []string
		// deny: the input must be denied (under -y), not only blocked.
		deny bool
		// noPrompt: the command reads without showing a prompt.
		noPrompt bool
	}{
		{
			name: "python REPL reads an outside file", need: "python3",
			command: "python3 -q -i", input: "print(open('{secret}').read())", keys: []string{"enter"},
		},
		{
			name: "python REPL picked by mode auto", need: "python3",
			command: "python3", mode: "auto", input: "print(open('{secret}').read())", keys: []string{"enter"},
		},
		{
			name: "python REPL, the newline inside the text", need: "python3",
			command: "python3 -q -i", input: "print(open('{secret}').read())\n",
		},
		{
			name: "python REPL in bash's own process group", need: "python3",
			command: "cd . && python3 -q -i; true", input: "print(open('{secret}').read())", keys: []string{"enter"},
		},
		{
			name: "python copied under a shell's name", need: "python3",
			setup:   stdinPythonCopy,
			command: "./bash -q -i", input: "print(open('{secret}').read())", keys: []string{"enter"},
		},
		{
			name: "node REPL", need: "node",
			command: "node -i", input: "console.log(require('fs').readFileSync('{secret}','utf8'))", keys: []string{"enter"},
		},
		{
			name: "perl debugger", need: "perl",
			command: "perl -de 0", input: "print `cat {secret}`", keys: []string{"enter"},
		},
		{
			name: "sqlite3 shell", need: "sqlite3",
			command: "sqlite3", input: ".shell cat {secret}", keys: []string{"enter"},
		},
		{
			name:    "interactive bash reads an outside file",
			command: "bash --norc --noprofile -i", input: "cat {secret}", keys: []string{"enter"},
		},
		{
			name:    "interactive bash, the command split over two writes",
			command: "bash --norc --noprofile -i", before: []step{{input: "cat "}},
			input: "{secret}", keys: []string{"enter"},
		},
		{
			name:     "bash reading a line it evaluates",
			noPrompt: true,
			command:  `read -r line; eval "$line"`, input: "cat {secret}", keys: []string{"enter"},
		},
		{
			name:    "sh reading commands from the terminal",
			command: "sh -i", input: "cat {secret}", keys: []string{"enter"},
		},
		{
			name:    "bash working outside the workspace reads by a relative name",
			command: "cd {outside} && bash --norc --noprofile -i", input: "cat secret.txt", keys: []string{"enter"},
		},
		{
			name:    "a line composed with the cursor out of sight",
			command: "bash --norc --noprofile -i", before: []step{{input: "cat ecret.txt"}, {keys: stdinRepeat("left", len("ecret.txt"))}},
			input: "{outside}/s", keys: []string{"enter"},
		},
		{
			name:     "cat is not a shell: its input asks",
			noPrompt: true,
			command:  "cat", input: "{secret}", keys: []string{"enter"},
		},
		{
			name: "printenv denied under -y, typed into a bash python started", need: "python3",
			setup: func(t *testing.T, e *env) { stdinDenyConfig(e) }, flags: []string{"-y"},
			command: "python3 -q -i", before: []step{{input: stdinPyShell("bash --norc --noprofile -i"), keys: []string{"enter"}}},
			input: "printenv {secret}", keys: []string{"enter"}, deny: true,
		},
		{
			name: "printenv denied under -y, split over two writes", need: "python3",
			setup: func(t *testing.T, e *env) { stdinDenyConfig(e) }, flags: []string{"-y"},
			command: "python3 -q -i", before: []step{{input: stdinPyShell("bash --norc --noprofile -i"), keys: []string{"enter"}}, {input: "print"}},
			input: "env {secret}", keys: []string{"enter"}, deny: true,
		},
		{
			name: "printenv denied under -y, typed ahead for the bash python starts", need: "python3",
			setup: func(t *testing.T, e *env) { stdinDenyConfig(e) }, flags: []string{"-y"},
			command: "python3 -q -i", input: stdinPyShell("bash --norc --noprofile -i") + "\nprintenv {secret}", keys: []string{"enter"}, deny: true,
		},
		{
			name: "printenv denied under -y, typed ahead while bash runs sleep", need: "python3",
			setup: func(t *testing.T, e *env) { stdinDenyConfig(e) }, flags: []string{"-y"},
			command: "python3 -q -i", before: []step{{input: stdinPyShell("bash --norc --noprofile -i"), keys: []string{"enter"}}, {input: "sleep 8", keys: []string{"enter"}}},
			input: "printenv {secret}", keys: []string{"enter"}, deny: true,
		},
		{
			name: "printenv denied under -y, typed ahead in two writes while bash runs sleep", need: "python3",
			setup: func(t *testing.T, e *env) { stdinDenyConfig(e) }, flags: []string{"-y"},
			command: "python3 -q -i", before: []step{{input: stdinPyShell("bash --norc --noprofile -i"), keys: []string{"enter"}}, {input: "sleep 8", keys: []string{"enter"}}, {input: "print"}},
			input: "env {secret}", keys: []string{"enter"}, deny: true,
		},
		{
			name: "printenv denied under -y, behind env in sh", need: "python3",
			setup: func(t *testing.T, e *env) { stdinDenyConfig(e) }, flags: []string{"-y"},
			command: "python3 -q -i", before: []step{{input: stdinPyShell("sh -i"), keys: []string{"enter"}}},
			input: "env printenv {secret}", keys: []string{"enter"}, deny: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.need != "" {
				if _, err := exec.LookPath(tc.need); err != nil {
					t.Skipf("%s not installed", tc.need)
				}
			}
			e := newEnv(t)
			if tc.need == "python3" {
				stdinRealPython(t, e)
			}
			secretPath := filepath.Join(e.outside, "secret.txt")
			secret := e.secret(secretPath)
			if tc.deny {
				// printenv's argument names a variable holding the secret.
				secretPath = "HOSTILE_STDIN_SECRET"
				e.extraEnv = append(e.extraEnv, secretPath+"="+secret)
			}
			if tc.setup != nil {
				tc.setup(t, e)
			}
			c, u := stdinServe(e, tc.flags...)
			defer func() {
				if t.Failed() {
					u.mu.Lock()
					t.Logf("asked: %q", u.asked)
					u.mu.Unlock()
				}
			}()
			id := stdinTask(t, c, strings.ReplaceAll(tc.command, "{outside}", e.outside), tc.mode)
			if !tc.noPrompt {
				stdinPrompted(t, c, id)
			}
			for _, s := range tc.before {
				r := c.call(t, "write_stdin", map[string]any{"task_id": id, "input": s.input, "keys": s.keys})
				allowed(t, r)
			}
			if len(tc.before) > 0 {
				stdinOutput(t, c, id) // what they started settles
			}
			input := strings.ReplaceAll(strings.ReplaceAll(tc.input, "{secret}", secretPath), "{outside}", e.outside)
			args := map[string]any{"task_id": id, "input": input}
			if len(tc.keys) > 0 {
				args["keys"] = tc.keys
			}
			r := c.call(t, "write_stdin", args)
			if tc.deny {
				denied(t, r, secret)
			} else {
				blocked(t, r, secret)
			}
			// The program never got the text: a terminal echoes what it
			// reads, and nothing of it shows.
			out := stdinOutput(t, c, id)
			if strings.Contains(out, secretPath) || strings.Contains(out, secret) {
				t.Errorf("the blocked input reached the task: %q", out)
			}
		})
	}
}
