package parity

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// corpusCase is one line of policy/testdata/commands.txt.
type corpusCase struct {
	line                    int
	command                 string
	repl, pty, term, notOwn bool
}

// readCorpus reads policy/testdata/commands.txt (see its header).
func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "policy", "testdata", "commands.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if len(l) < 9 || l[1] != ' ' || l[3] != ' ' || l[5] != ' ' || l[7] != ' ' || strings.Trim(l[:7], "RPTF- ") != "" {
			t.Fatalf("commands.txt:%d: want \"R P T F  command\", got %q", n, l)
		}
		out = append(out, corpusCase{line: n, command: strings.TrimSpace(l[8:]),
			repl: l[0] == 'R', pty: l[2] == 'P', term: l[4] == 'T', notOwn: l[6] == 'F'})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestREPLParity runs every line of the corpus through the guard, with an
// interactive ask rule on every program the classifier knows, and through
// the shell runner's choice of transport, and holds both to the corpus:
// the guard asks before a REPL on the line's R, mode auto picks a PTY on
// its P, and P = (R and not F) or T, so that where the REPL's stdin is the
// call's own the guard's answer and the runner's are one.
func TestREPLParity(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws, home, filepath.Join(ws, "sub"), filepath.Join(ws, ".venv")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"x.py", "x.js", "x.ts", "x.pl", "x.rb", "x.php", "x.lua", "x.R", "x.jl", "x.hs", "x.sql", "x.txt",
		"x.tcl", "x.exs", "x.scala", "x.clj", "x.rkt", "x.ml", "x.sh", "x.el", "x.gdb", "cmds.gdb", "db.sqlite", "prog", "unix.cma"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Programs are matched by name alone: on this machine two of them
	// may be one file (pyenv's shims), which the guard would read as
	// either.
	t.Setenv("PATH", filepath.Join(root, "bin"))
	var rules []policy.ExecRule
	for _, p := range policy.Interpreters() {
		rules = append(rules, policy.ExecRule{Action: policy.ExecAsk, Program: p, Interactive: true})
	}
	g := guard.New(guard.Options{Workspace: ws, Home: home, Policy: &policy.Rules{Exec: policy.ExecRules{Rules: rules}}})
	spec := sdk.Spec{Name: "run_bash", Effect: sdk.EffectExec, Roles: map[string]sdk.Role{"command": sdk.RoleCommand}}
	cases := readCorpus(t)
	if len(cases) < 60 {
		t.Fatalf("the corpus holds %d command lines, want at least 60", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.command, func(t *testing.T) {
			if tc.pty != (tc.repl && !tc.notOwn || tc.term) {
				t.Fatalf("commands.txt:%d: P must be (R and not F) or T", tc.line)
			}
			d := g.Check(context.Background(), adapter.GuardRequest{Spec: spec, Args: map[string]any{"command": tc.command}, Session: session.New("s"), Trusted: true})
			if repl := strings.Contains(d.Reason, "interactive: true}"); repl != tc.repl {
				t.Errorf("commands.txt:%d: the guard's REPL ask on %q = %v, want %v (%v: %s)", tc.line, tc.command, repl, tc.repl, d.Action, d.Reason)
			}
			if pty := runner.NeedsTerminal(tc.command); pty != tc.pty {
				t.Errorf("commands.txt:%d: NeedsTerminal(%q) = %v, want %v", tc.line, tc.command, pty, tc.pty)
			}
		})
	}
}
