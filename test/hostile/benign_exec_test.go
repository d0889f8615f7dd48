package hostile

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBenignExec: everyday commands run without an ask and without -y,
// whatever exec rules an admin set and the built-in interpreter rules.
func TestBenignExec(t *testing.T) {
	t.Parallel()
	goCache := ""
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		goCache = strings.TrimSpace(string(out))
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, e *env)
		rules []string
		cmd   string
		want  []string
	}{
		{
			name:  "git status and git log under an ask rule on git",
			setup: gitInit, rules: []string{"{action: ask, program: git}"},
			cmd: "git status --short && git log --oneline", want: []string{"one"},
		},
		{
			name:  "git diff in a clean repository under an ask rule on git",
			setup: gitInit, rules: []string{"{action: ask, program: git}"},
			cmd: "git diff HEAD --stat; echo done", want: []string{"done"},
		},
		{
			name: "git status in a worktree git worktree add made, under an ask rule on git",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("git"); err != nil {
					t.Skip("no git")
				}
				main := e.root + "/main"
				e.write(main+"/a.txt", "one\n")
				for _, args := range [][]string{
					{"init", "-q"}, {"add", "a.txt"},
					{"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "one"},
					{"worktree", "add", "-q", "--detach", e.workspace},
				} {
					cmd := exec.Command("git", args...)
					cmd.Dir = main
					cmd.Env = append(e.environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Skipf("git %v: %v\n%s", args, err, out)
					}
				}
			},
			rules: []string{"{action: ask, program: git}"},
			cmd:   "git status --short; git log --oneline", want: []string{"one"},
		},
		{
			name: "go test in a tiny module",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("go"); err != nil || goCache == "" {
					t.Skip("no go")
				}
				e.extraEnv = append(e.extraEnv, "GOCACHE="+goCache, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
				e.write("go.mod", "module tiny\n\ngo 1.21\n")
				e.write("t_test.go", "package tiny\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n")
			},
			cmd: "go test ./...", want: []string{"ok"},
		},
		{
			name: "make with a trivial Makefile",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("make"); err != nil {
					t.Skip("no make")
				}
				e.write("Makefile", "all:\n\t@echo built\n")
			},
			cmd: "make", want: []string{"built"},
		},
		{
			name: "python3 runs a script",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
				e.write("s.py", "print('from the script')\n")
			},
			cmd: "python3 s.py", want: []string{"from the script"},
		},
		{
			name: "python3 reads its program from a here-document",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
			},
			cmd: "python3 - <<'EOF'\nprint('from the heredoc')\nEOF", want: []string{"from the heredoc"},
		},
		{
			name: "python3 reads its program from a pipe",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
			},
			cmd: "echo 'print(6*7)' | python3", want: []string{"42"},
		},
		{
			name: "python3 --version",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
			},
			cmd: "python3 --version", want: []string{"Python"},
		},
		{
			name: "a virtualenv activated, under a deny rule on another program",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
				cmd := exec.Command("python3", "-m", "venv", "--without-pip", ".venv")
				cmd.Dir = e.workspace
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Skipf("python3 -m venv: %v %s", err, out)
				}
				e.write("s.py", "import sys; print('venv', sys.prefix != sys.base_prefix)\n")
			},
			rules: []string{"{action: deny, program: printenv}"},
			cmd:   "source .venv/bin/activate && python s.py", want: []string{"venv True"},
		},
		{
			name: "node runs a script",
			setup: func(t *testing.T, e *env) {
				if _, err := exec.LookPath("node"); err != nil {
					t.Skip("no node")
				}
				e.write("app.js", "console.log('from app')\n")
			},
			cmd: "node app.js", want: []string{"from app"},
		},
		{
			name:  "rm -r without a deny rule",
			setup: func(t *testing.T, e *env) { e.write("build/out.o", "x") },
			cmd:   "rm -r build && echo gone", want: []string{"gone"},
		},
		{
			name:  "rm -r under a deny rule on rm -rf",
			setup: func(t *testing.T, e *env) { e.write("build/out.o", "x") },
			rules: []string{"{action: deny, program: rm, args: [-rf]}"},
			cmd:   "rm -r build && echo gone", want: []string{"gone"},
		},
		{
			name:  "cat a/../b inside the workspace",
			setup: func(t *testing.T, e *env) { e.write("a/x", ""); e.write("b", "bee\n") },
			cmd:   "cat a/../b", want: []string{"bee"},
		},
		{
			name:  "cd into a folder and read a file there",
			setup: func(t *testing.T, e *env) { e.write("sub/f.txt", "in sub\n") },
			cmd:   "cd sub && cat f.txt", want: []string{"in sub"},
		},
		{
			name:  "a glob inside the workspace",
			setup: func(t *testing.T, e *env) { e.write("n/a.txt", "aa\n"); e.write("n/b.txt", "bb\n") },
			cmd:   "cat n/*.txt", want: []string{"aa", "bb"},
		},
		{
			name:  "a script file under a deny rule it does not touch",
			setup: func(t *testing.T, e *env) { e.write("build.sh", "echo building\nls >/dev/null\n") },
			rules: []string{"{action: deny, program: printenv}"},
			cmd:   "bash build.sh", want: []string{"building"},
		},
		{
			name: "a program run by its path under a deny rule on another",
			setup: func(t *testing.T, e *env) {
				e.write("tool.sh", "#!/bin/sh\necho tooled\n")
				if err := os.Chmod(e.ws("tool.sh"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			rules: []string{"{action: deny, program: printenv}"},
			cmd:   "./tool.sh", want: []string{"tooled"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			if len(tc.rules) > 0 {
				execConfig(e, tc.rules...)
			}
			c := e.serve()
			// The call waits for the command: on a loaded machine a go test
			// can take longer than the default yield.
			allowed(t, c.call(t, "run_bash", map[string]any{"command": tc.cmd, "timeout_ms": 120000, "yield_time_ms": 115000}), tc.want...)
		})
	}
}
