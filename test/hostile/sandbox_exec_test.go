package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sbExecCase is one way to start a program the guard never sees.
type sbExecCase struct {
	name  string
	need  []string
	files func(pe string) map[string]string // in the case's folder; a name ending in * is made executable
	cmd   string
}

// sbWriteFiles writes files into dir of the workspace.
func sbWriteFiles(t *testing.T, e *env, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(e.ws(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := e.write(filepath.Join(dir, strings.TrimSuffix(name, "*")), content)
		if strings.HasSuffix(name, "*") {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sbRefusedExec fails t if out shows marker, or if the command ran and
// its output does not name the rule that refused the exec.
func sbRefusedExec(t *testing.T, r result, out, marker string) {
	t.Helper()
	if strings.Contains(out, marker) {
		t.Errorf("a denied printenv ran and showed the marker: %s", r)
		return
	}
	low := strings.ToLower(out)
	if r.Code == "" && (!strings.Contains(low, "printenv") || !strings.Contains(low, "deny")) {
		t.Errorf("the refused exec is not named in the output (want printenv and deny): %s", r)
	}
}

// TestSandboxExecRules: under -y, with the user's rule denying printenv,
// no program a command starts where the guard cannot see it runs
// printenv: the exec supervisor judges every execve of the tree.
func TestSandboxExecRules(t *testing.T) {
	t.Parallel()
	pe := execPrintenv(t)
	cases := []sbExecCase{
		{name: "make recipe", need: []string{"make"},
			files: func(string) map[string]string { return map[string]string{"Makefile": "all:\n\t@printenv X\n"} },
			cmd:   "make"},
		{name: "python os.system", need: []string{"python3"}, cmd: `python3 -c "import os; os.system('printenv X')"`},
		{name: "perl exec", need: []string{"perl"}, cmd: `perl -e 'exec "printenv", "X"'`},
		{name: "awk system", need: []string{"awk"}, cmd: `awk 'BEGIN{system("printenv X")}'`},
		// make runs what the guard never reads: its recipes.
		{name: "shebang naming printenv", need: []string{"make"},
			files: func(pe string) map[string]string {
				return map[string]string{"pe.sh*": "#!" + pe + " X\n", "Makefile": "all:\n\t@./pe.sh\n"}
			},
			cmd: "make"},
		{name: "git ! alias", need: []string{"git"}, cmd: `git -c alias.x='!printenv X' x`},
		{name: "npm script", need: []string{"npm"},
			files: func(string) map[string]string {
				return map[string]string{"package.json": `{"name":"p","version":"1.0.0","scripts":{"x":"printenv X"}}` + "\n"}
			},
			cmd: "npm run --silent x"},
		{name: "renamed copy made by a script make runs", need: []string{"make"},
			files: func(string) map[string]string {
				return map[string]string{"s.sh": `cp "$(command -v printenv)" ./pe; ./pe X` + "\n", "Makefile": "all:\n\t@bash s.sh\n"}
			},
			cmd: "make"},
		{name: "env through xargs", cmd: "echo printenv X | xargs env"},
		{name: "the dynamic loader running printenv", need: []string{"make", "/lib64/ld-linux-x86-64.so.2"},
			files: func(pe string) map[string]string {
				return map[string]string{"Makefile": "all:\n\t@/lib64/ld-linux-x86-64.so.2 " + pe + " X\n"}
			},
			cmd: "make"},
		{name: "fexecve of an open descriptor", need: []string{"python3"},
			files: func(pe string) map[string]string {
				return map[string]string{"f.py": "import os\nfd = os.open('" + pe + "', os.O_RDONLY)\nos.execve(fd, ['pe', 'X'], dict(os.environ))\n"}
			},
			cmd: "python3 f.py"},
		{name: "shebang through env -S", need: []string{"make"},
			files: func(string) map[string]string {
				return map[string]string{"pe.sh*": "#!/usr/bin/env -S printenv X\n", "Makefile": "all:\n\t@./pe.sh\n"}
			},
			cmd: "make"},
		// A program the supervisor cannot identify is judged by the
		// strictest rule: here, deny.
		{name: "a copy in a memfd", need: []string{"python3"},
			files: func(pe string) map[string]string {
				return map[string]string{"m.py": "import os\nfd = os.memfd_create('x', 0)\nos.write(fd, open('" + pe + "', 'rb').read())\n" +
					"os.execv('/proc/self/fd/%d' % fd, ['pe', 'X'])\n"}
			},
			cmd: "python3 m.py"},
	}
	e := newEnv(t)
	marker := e.secret("unused")
	e.extraEnv = []string{"X=" + marker}
	execConfig(e, "{action: deny, program: printenv}")
	c := e.serve("-y")
	for i, tc := range cases {
		dir := "c" + strconv.Itoa(i)
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			var files map[string]string
			if tc.files != nil {
				files = tc.files(pe)
			}
			sbWriteFiles(t, e, dir, files)
			r := sbRun(t, c, "cd "+dir+" && "+tc.cmd, 0)
			sbRefusedExec(t, r, sbText(r), marker)
		})
	}
	t.Run("python REPL fed through write_stdin", func(t *testing.T) {
		t.Parallel()
		sbNeed(t, "python3")
		id := stdinTask(t, c, "python3 -q -i", "pty")
		stdinPrompted(t, c, id)
		r := c.call(t, "write_stdin", map[string]any{"task_id": id, "input": `import os; os.system("printenv X")`, "keys": []string{"enter"}})
		out := sbText(r) + stdinOutput(t, c, id)
		sbRefusedExec(t, result{Text: out}, out, marker)
	})
	t.Run("is_background command", func(t *testing.T) {
		t.Parallel()
		sbNeed(t, "make")
		sbWriteFiles(t, e, "bg", map[string]string{"Makefile": "all:\n\t@printenv X\n"})
		r := c.call(t, "run_bash", map[string]any{"command": "cd bg && make", "is_background": true})
		id := sbTaskID(r)
		if id == "" {
			t.Fatalf("no background task: %s", r)
		}
		// The task's log fills as it runs; read it until it ends.
		out := sbText(r)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			w := c.call(t, "shell_wait", map[string]any{"task_id": id, "timeout_ms": 2000})
			out += sbText(w)
			var d struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(w.Data, &d)
			if d.Status != "running" {
				break
			}
		}
		sbRefusedExec(t, result{Text: out}, out, marker)
	})
}
