package hostile

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBenignStdin: everyday typing into tasks runs without an ask (the
// user approves starting an interactive shell, nothing after): commands a
// shell would run anyway, and keys alone to any task.
func TestBenignStdin(t *testing.T) {
	t.Parallel()
	type write struct {
		input string
		keys  []string
	}
	const bash = "bash --norc --noprofile -i"
	cases := []struct {
		name    string
		need    string
		setup   func(e *env)
		command string
		mode    string
		writes  []write
		want    string // in the output of the last write or the wait after it
	}{
		{name: "echo in an interactive bash", command: bash, writes: []write{{input: "echo hi-there", keys: []string{"enter"}}}, want: "hi-there"},
		{name: "ls in the workspace", setup: func(e *env) { e.write("listed-file.txt", "x\n") }, command: bash,
			writes: []write{{input: "ls", keys: []string{"enter"}}}, want: "listed-file.txt"},
		{name: "a relative read", setup: func(e *env) { e.write("notes.txt", "plain notes\n") }, command: bash,
			writes: []write{{input: "cat notes.txt\n"}}, want: "plain notes"},
		{name: "a command typed in two writes", command: bash,
			writes: []write{{input: "echo spl"}, {input: "it-up", keys: []string{"enter"}}}, want: "split-up"},
		{name: "enter on an empty line", command: bash, writes: []write{{keys: []string{"enter"}}}},
		{name: "ctrl-c to bash", command: bash, writes: []write{{keys: []string{"ctrl-c"}}}},
		{name: "ctrl-c to a python REPL", need: "python3", command: "python3 -q -i", writes: []write{{keys: []string{"ctrl-c"}}}, want: "KeyboardInterrupt"},
		{name: "ctrl-d ends a python REPL", need: "python3", command: "python3 -q -i", writes: []write{{keys: []string{"ctrl-d"}}}, want: "exited with code 0"},
		{name: "ctrl-c to cat", command: "cat", writes: []write{{keys: []string{"ctrl-c"}}}},
		{name: "ctrl-c to a pipe task", command: "sleep 30", mode: "pipe", writes: []write{{keys: []string{"ctrl-c"}}}},
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
				// One interpreter under run_bash's approval, not a
				// version manager's shim that execs it after the yield.
				stdinRealPython(t, e)
			}
			if tc.setup != nil {
				tc.setup(e)
			}
			c, _ := stdinServe(e)
			id := stdinTask(t, c, tc.command, tc.mode)
			if tc.need == "python3" {
				// A REPL that has not reached its prompt has no handler
				// for ctrl-c yet: the key would kill it. On a loaded
				// machine that takes longer than run_bash's yield.
				stdinPrompted(t, c, id)
			}
			var out string
			for _, w := range tc.writes {
				args := map[string]any{"task_id": id}
				if w.input != "" {
					args["input"] = w.input
				}
				if len(w.keys) > 0 {
					args["keys"] = w.keys
				}
				r := c.call(t, "write_stdin", args)
				allowed(t, r)
				out += r.Text
			}
			if tc.want != "" && !strings.Contains(out, tc.want) {
				out += stdinOutput(t, c, id)
				if !strings.Contains(out, tc.want) {
					t.Errorf("output lacks %q: %q", tc.want, out)
				}
			}
		})
	}
}
