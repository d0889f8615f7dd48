package guard

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
)

func rulesProfile(rules ...policy.ExecRule) *policy.Rules {
	return &policy.Rules{Exec: policy.ExecRules{Rules: rules}}
}

// printenvPath is the host's printenv, which the identity cases copy and link.
func printenvPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("printenv")
	if err != nil {
		t.Skip("no printenv on PATH")
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestExecRules_MatchPrograms: a deny rule on printenv holds however the
// command reaches printenv (shell options, hash -p, wrappers, a path, a
// symlink, a copy), and under -y too.
func TestExecRules_MatchPrograms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pe := printenvPath(t)
	if err := os.Symlink(pe, filepath.Join(f.ws, "pe")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "pecopy"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.ws, "s.sh"), "echo hi\nprintenv X\n")
	write(t, filepath.Join(f.ws, "ok.sh"), "echo hi\nls\n")
	write(t, filepath.Join(f.ws, "she"), "#!/bin/sh\nprintenv X\n")
	write(t, filepath.Join(f.ws, "bang"), "#!"+pe+"\n")
	for _, p := range []string{"she", "bang"} {
		if err := os.Chmod(filepath.Join(f.ws, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prof := rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "printenv"})
	g := f.guard(func(o *Options) { o.Policy = prof })
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"printenv X", adapter.Deny},
		{"bash -c -- 'printenv X'", adapter.Deny},
		{"bash -c -e 'printenv X'", adapter.Deny},
		{"bash -ec 'printenv X'", adapter.Deny},
		{"bash -xc 'printenv X'", adapter.Deny},
		{"bash -o errexit -c 'printenv X'", adapter.Deny},
		{"bash +o history -c 'printenv X'", adapter.Deny},
		{"bash -O extglob -c 'printenv X'", adapter.Deny},
		{"sh -c -x -- 'printenv X' arg0", adapter.Deny},
		{"hash -p /usr/bin/printenv pe; pe X", adapter.Deny},
		{"hash -p " + pe + " zz; zz X", adapter.Deny},
		{"alias pe=printenv; pe X", adapter.Deny},
		{"exec -a name printenv X", adapter.Deny},
		{"command -p printenv X", adapter.Deny},
		{"taskset -c 0 printenv X", adapter.Deny},
		{"taskset 0x1 printenv X", adapter.Deny},
		{"flock ./lk printenv X", adapter.Deny},
		{"flock -w 3 ./lk -c 'printenv X'", adapter.Deny},
		{"script -qc 'printenv X' /dev/null", adapter.Deny},
		{"script -q -c 'printenv X'", adapter.Deny},
		{"nice -n 5 printenv X", adapter.Deny},
		{"ionice -c 3 printenv X", adapter.Deny},
		{"chrt -f 10 printenv X", adapter.Deny},
		{"chrt 0 printenv X", adapter.Deny},
		{"stdbuf -oL printenv X", adapter.Deny},
		{"timeout -k 1 5 printenv X", adapter.Deny},
		{"setsid -f printenv X", adapter.Deny},
		{"setsid -w printenv X", adapter.Deny},
		{"nohup printenv X", adapter.Deny},
		{"env -S 'printenv X'", adapter.Deny},
		{"echo X | xargs printenv", adapter.Deny},
		{"find . -maxdepth 0 -exec printenv X \\;", adapter.Deny},
		{"find . -ok printenv X \\;", adapter.Deny},
		{"parallel printenv ::: X", adapter.Deny},
		{"parallel -j 2 'printenv {}' ::: X", adapter.Deny},
		{"watch -n 1 printenv X", adapter.Deny},
		{"strace -f -o /dev/null printenv X", adapter.Deny},
		{"time printenv X", adapter.Deny},
		{"sudo -u root printenv X", adapter.Deny},
		{"doas printenv X", adapter.Deny},
		{"su -c 'printenv X'", adapter.Deny},
		{"su root -c 'printenv X'", adapter.Deny},
		{"chroot / printenv X", adapter.Deny},
		{"uv run printenv X", adapter.Deny},
		{"fish -c 'printenv X'", adapter.Deny},
		{"tmux new -d 'printenv X'", adapter.Deny},
		{"screen -dm printenv X", adapter.Deny},
		{"uv run --with rich printenv X", adapter.Deny},
		{"poetry run printenv X", adapter.Deny},
		{"bundle exec printenv X", adapter.Deny},
		{"direnv exec . printenv X", adapter.Deny},
		{"conda run -n base printenv X", adapter.Deny},
		{"npx -c 'printenv X'", adapter.Deny},
		{"/usr/bin/printenv X", adapter.Deny},
		{"./pe X", adapter.Deny},
		{"./pecopy X", adapter.Deny},
		{"PATH=.:$PATH pecopy X", adapter.Deny},
		{"cp /usr/bin/printenv ./p2 && ./p2 X", adapter.Deny},
		{"cp " + pe + " ./p2 && ./p2 X", adapter.Deny},
		{"ln -s " + pe + " p3; ./p3 X", adapter.Deny},
		{"ln " + pe + " p3", adapter.Deny},
		{"cat " + pe + " > p4; chmod +x p4; ./p4 X", adapter.Deny},
		{"install -m 755 " + pe + " p5", adapter.Deny},
		{"dd if=" + pe + " of=p6", adapter.Deny},
		{"cp " + filepath.Dir(pe) + "/printen? p7", adapter.Deny},
		{"cp \"$(which printenv)\" p8", adapter.Deny},
		{"cat < " + pe + " > p9", adapter.Deny},
		{"rm victim\n)", adapter.Deny},
		{"echo ok\nif then", adapter.Deny},
		{"bash s.sh", adapter.Deny},
		{"sh ./s.sh", adapter.Deny},
		{"source s.sh", adapter.Deny},
		{". ./s.sh", adapter.Deny},
		{"bash missing.sh", adapter.Deny},
		{"./she", adapter.Deny},
		{"./bang X", adapter.Deny},
		{"export PATH; PATH=.:$PATH pecopy X", adapter.Deny},

		{"echo printenv", adapter.Allow},
		{"command -v printenv", adapter.Allow},
		{"ls -l", adapter.Allow},
		{"cp README.md b.md", adapter.Allow},
		{"bash ok.sh", adapter.Allow},
		{"bash -c 'echo hi'", adapter.Allow},
		{"taskset -c 0 ls", adapter.Allow},
		{"tmux ls", adapter.Allow},
		{"[ -f README.md ] && echo yes", adapter.Allow},
		{"/bin/[ -f README.md ]", adapter.Allow},
		{"/bin/print[e]nv X", adapter.Deny},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
				t.Fatalf("Check(%q) under -y = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestExecRules_FlagsAsSet: a rule's short flags match as a set, anywhere
// before "--", and the long options of common programs as their short form.
func TestExecRules_FlagsAsSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prof := rulesProfile(
		policy.ExecRule{Action: policy.ExecDeny, Program: "rm", Args: []string{"-rf"}},
		policy.ExecRule{Action: policy.ExecAsk, Program: "git", Args: []string{"push", "--force"}},
		policy.ExecRule{Action: policy.ExecAllow, Program: "chmod", Args: []string{"-R"}},
		policy.ExecRule{Action: policy.ExecAsk, Program: "chmod"},
		policy.ExecRule{Action: policy.ExecDeny, Program: "find", Args: []string{"-delete"}},
	)
	g := f.guard(func(o *Options) { o.Policy = prof })
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"rm -rf x", adapter.Deny},
		{"rm -fr x", adapter.Deny},
		{"rm -r -f x", adapter.Deny},
		{"rm -f -r x", adapter.Deny},
		{"rm --recursive --force x", adapter.Deny},
		{"rm --force --recursive x", adapter.Deny},
		{"rm --rec --for x", adapter.Deny},
		{"rm -rfv x", adapter.Deny},
		{"rm -v -R -f x", adapter.Deny},
		{"rm x -rf", adapter.Deny},
		{"rm -r x -f", adapter.Deny},
		{"rm -r $f x", adapter.Deny},
		{"git push -f", adapter.Ask},
		{"git push --force origin main", adapter.Ask},
		{"git -C sub push -f", adapter.Ask},
		{"git push origin main -f", adapter.Ask},
		{"find . -name x -delete", adapter.Deny},
		{"chmod -R 755 sub", adapter.Allow},
		{"chmod --recursive 755 sub", adapter.Allow},
		{"chmod 755 sub", adapter.Ask},

		{"rm x", adapter.Allow},
		{"rm -r x", adapter.Allow},
		{"rm -f x", adapter.Allow},
		{"rm -- -rf", adapter.Allow},
		{"git push", adapter.Allow},
		{"git push --force-with-lease", adapter.Allow},
		{"find . -name x", adapter.Allow},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestExecRules_HardLink: a hard link of a rule's program is that program.
// Not parallel: the rule's program is found on a PATH the test sets.
func TestExecRules_HardLink(t *testing.T) {
	f := newFixture(t)
	bin := filepath.Join(f.root, "bin")
	mkdir(t, bin)
	tool := filepath.Join(bin, "mytool")
	write(t, tool, "#!/bin/true\n")
	if err := os.Chmod(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(tool, filepath.Join(f.ws, "h")); err != nil {
		t.Skipf("hard link: %v", err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	g := f.guard(func(o *Options) {
		o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "mytool"})
	})
	for _, cmd := range []string{"./h", "sub/../h x", "cd sub && ../h"} {
		if d := check(g, execTool, cmdArgs(cmd)); d.Action != adapter.Deny {
			t.Errorf("Check(%q) = %v (%s), want deny", cmd, d.Action, d.Reason)
		}
	}
}

// TestExecRules_DoubleDashOfOneDashPrograms: programs whose long options
// take one dash (go, gdb, sqlite3) take two as well: a rule on -race holds
// against --race.
func TestExecRules_DoubleDashOfOneDashPrograms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(func(o *Options) {
		o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "go", Args: []string{"test", "-race"}})
	})
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"go test -race ./...", adapter.Deny},
		{"go test --race ./...", adapter.Deny},
		{"go test --race=true ./...", adapter.Deny},
		{"go test ./...", adapter.Allow},
	} {
		if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
			t.Errorf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
		}
	}
}

// TestCommandPaths_GlobTooManyMatches: a glob with more matches than the
// guard judges one by one is not judged by its folder alone: among the
// matches could be a link out of the workspace. It asks, and under a deny
// rule a copy through it is refused.
func TestCommandPaths_GlobTooManyMatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	many := filepath.Join(f.ws, "many")
	mkdir(t, many)
	for i := range maxGlobMatches + 1 {
		write(t, filepath.Join(many, fmt.Sprintf("f%04d", i)), "")
	}
	if err := os.Symlink(filepath.Join(f.other, "secret"), filepath.Join(many, "zlink")); err != nil {
		t.Fatal(err)
	}
	if d := check(f.guard(nil), execTool, cmdArgs("chmod 777 many/*")); d.Action != adapter.Ask {
		t.Errorf("chmod 777 many/* over %d matches = %v (%s), want ask", maxGlobMatches+1, d.Action, d.Reason)
	}
	deny := f.guard(func(o *Options) {
		o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "printenv"})
	})
	if d := check(deny, execTool, cmdArgs("cp many/* d/")); d.Action != adapter.Deny {
		t.Errorf("cp many/* under a deny rule = %v (%s), want deny", d.Action, d.Reason)
	}
}

// TestExecRules_NamedRuleSpeaks: two programs that are the same file (the
// shims of a version manager) both match a rule on either; the rule that
// names the program the command calls is the one the message quotes.
func TestExecRules_NamedRuleSpeaks(t *testing.T) {
	f := newFixture(t)
	bin := filepath.Join(f.root, "bin")
	mkdir(t, bin)
	for _, name := range []string{"shima", "shimb"} {
		write(t, filepath.Join(bin, name), "#!/bin/sh\nexec real \"$0\" \"$@\"\n")
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	for _, action := range []string{policy.ExecAsk, policy.ExecDeny} {
		g := f.guard(func(o *Options) {
			o.Policy = rulesProfile(policy.ExecRule{Action: action, Program: "shima"}, policy.ExecRule{Action: action, Program: "shimb"})
		})
		d := check(g, execTool, cmdArgs("shimb x"))
		if !strings.Contains(d.Reason, "program: shimb}") || strings.Contains(d.Reason, "same file") {
			t.Errorf("%s rules: Check(shimb x) = %v (%s), want the reason to quote the rule on shimb", action, d.Action, d.Reason)
		}
	}
}

// TestExecRules_Interactive: the interactive ask rules of the built-in
// profiles ask before a REPL starts, never before a script runs.
func TestExecRules_Interactive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var rules []policy.ExecRule
	for _, p := range []string{"python3", "node", "perl", "ruby", "irb", "php", "lua", "R", "sqlite3", "psql", "mysql", "gdb"} {
		rules = append(rules, policy.ExecRule{Action: policy.ExecAsk, Program: p, Interactive: true})
	}
	write(t, filepath.Join(f.ws, "s.py"), "print(1)\n")
	write(t, filepath.Join(f.ws, "schema.sql"), "select 1;\n")
	if err := os.Symlink("/dev/tty", filepath.Join(f.ws, "tty")); err != nil {
		t.Fatal(err)
	}
	g := f.guard(func(o *Options) { o.Policy = rulesProfile(rules...) })
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"python3", adapter.Ask},
		{"python3 -i", adapter.Ask},
		{"python3 -q -i", adapter.Ask},
		{"python3 -qi", adapter.Ask},
		{"python3 -i s.py", adapter.Ask},
		{"python3 -", adapter.Ask},
		{"python3 -W ignore", adapter.Ask},
		{"env python3 -q", adapter.Ask},
		{"uv run python3", adapter.Ask},
		{"poetry run python3 -i", adapter.Ask},
		{"node", adapter.Ask},
		{"node -i", adapter.Ask},
		{"node --interactive", adapter.Ask},
		{"perl -de0", adapter.Ask},
		{"perl", adapter.Ask},
		{"ruby", adapter.Ask},
		{"irb", adapter.Ask},
		{"php -a", adapter.Ask},
		{"lua", adapter.Ask},
		{"lua -i s.lua", adapter.Ask},
		{"R --vanilla", adapter.Ask},
		{"sqlite3 db.sqlite", adapter.Ask},
		{"psql -d app", adapter.Ask},
		{"mysql -u root app", adapter.Ask},
		{"gdb ./prog", adapter.Ask},
		{"gdb -ex run ./prog", adapter.Ask},
		{"python3 $x", adapter.Ask},
		{"python3 -c 'while 1: exec(input())'", adapter.Ask},
		{"python3 -c 'import code; code.interact()'", adapter.Ask},
		{"python3 -m code", adapter.Ask},
		{"python3 -m asyncio", adapter.Ask},
		{"python3 -c \"$s\"", adapter.Ask},
		{"node -e \"require('repl').start()\"", adapter.Ask},
		{"node --eval \"require('repl').start()\"", adapter.Ask},
		{"perl -e 'while(<STDIN>){eval}'", adapter.Ask},
		{"perl -ne 'eval'", adapter.Ask},
		{"ruby -e 'loop { eval gets }'", adapter.Ask},
		{"python3 -v", adapter.Ask},
		{"psql -h db", adapter.Ask},

		{"python3 s.py", adapter.Allow},
		{"uv run python3 s.py", adapter.Allow},
		{"python3 - <<'EOF'\nprint(1)\nEOF", adapter.Allow},
		{"python3 <<< 'print(1)'", adapter.Allow},
		{"echo 'print(1)' | python3", adapter.Allow},
		{"python3 < s.py", adapter.Allow},
		{"sqlite3 db.sqlite < schema.sql", adapter.Allow},
		{"cat q.sql | psql -d app", adapter.Allow},
		{"python3 2>/dev/null", adapter.Ask},
		{"python3 -i < /dev/tty", adapter.Ask},
		{"python3 -i <&0", adapter.Ask},
		{"python3 -i < $t", adapter.Ask},
		{"python3 -i < tty", adapter.Ask},
		{"python3 | tee log", adapter.Ask},
		{"python3 --version", adapter.Allow},
		{"python3 -V", adapter.Allow},
		{"node -v", adapter.Allow},
		{"psql --version", adapter.Allow},
		{"sqlite3 -version", adapter.Allow},
		{"python3 s.py -i", adapter.Allow},
		{"python3 -c 'print(1)' -i", adapter.Allow},
		{"node -i s.js", adapter.Allow},
		{"bash -c 'python3 -i'", adapter.Ask},
		{"python3 -u s.py arg", adapter.Allow},
		{"python3 -c 'print(1)'", adapter.Allow},
		{"python3 -c 'import sys; print(sys.stdin.read())' < s.py", adapter.Allow},
		{"echo x | python3 -c 'import sys; print(sys.stdin.read())'", adapter.Allow},
		{"python3 -m venv .venv", adapter.Allow},
		{"python3 -W ignore s.py", adapter.Allow},
		{"node app.js", adapter.Allow},
		{"node -e 'console.log(1)'", adapter.Allow},
		{"node -r ts-node/register app.ts", adapter.Allow},
		{"perl -e 'print 1'", adapter.Allow},
		{"perl -ne 'print' a.txt", adapter.Allow},
		{"perl -pi -e 's/a/b/' a.txt", adapter.Allow},
		{"perl -Ilib t.pl", adapter.Allow},
		{"ruby s.rb", adapter.Allow},
		{"php s.php", adapter.Allow},
		{"php -r 'echo 1;'", adapter.Allow},
		{"lua s.lua", adapter.Allow},
		{"R -e 'x'", adapter.Allow},
		{"R -f s.R", adapter.Allow},
		{"sqlite3 db.sqlite 'select 1'", adapter.Allow},
		{"psql -c 'select 1'", adapter.Allow},
		{"mysql -e 'select 1' app", adapter.Allow},
		{"gdb -batch -ex run ./prog", adapter.Allow},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestCommandPaths_AsKernel: a command's paths are judged as the kernel
// resolves them: symlinks before "..", the folders cd moves to, every
// match of a glob.
func TestCommandPaths_AsKernel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mkdir(t, filepath.Join(f.other, "deep"))
	for link, target := range map[string]string{
		"e":    filepath.Join(f.other, "deep"),
		"etcl": f.other,
	} {
		if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	g := f.guard(nil)
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"cat e/../secret", adapter.Ask},
		{"cat ./e/../secret", adapter.Ask},
		{"cat " + f.ws + "/e/../secret", adapter.Ask},
		{"cat sub/../e/../secret", adapter.Ask},
		{"cd -P e/.. && cat secret", adapter.Ask},
		{"cd e && cat ../secret", adapter.Ask},
		{"cd e; cd ..; cat secret", adapter.Ask},
		{"cat etcl*/secret", adapter.Ask},
		{"cat etc?/secret", adapter.Ask},
		{"cat e*/../secret", adapter.Ask},
		{"cat [e]tcl/secret", adapter.Ask},
		{"cd $D && cat secret", adapter.Ask},
		{"cd \"$(mktemp -d)\" && cat x", adapter.Ask},

		{"cat sub/../README.md", adapter.Allow},
		{"cd sub && cat a.go", adapter.Allow},
		{"cat sub/*.go", adapter.Allow},
		{"rm -f *.o", adapter.Allow},
		{"cat nomatch*/x", adapter.Allow},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestCommand_FIFOsDoNotStall: a FIFO planted where the guard reads a
// script or a git file is refused unread, so the check returns.
func TestCommand_FIFOsDoNotStall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, p := range []string{"fifo.sh", ".git"} {
		if err := syscall.Mkfifo(filepath.Join(f.ws, p), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	g := f.guard(func(o *Options) {
		o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "printenv"}, policy.ExecRule{Action: policy.ExecAsk, Program: "git"})
	})
	done := make(chan adapter.Decision, 2)
	go func() {
		done <- check(g, execTool, cmdArgs("bash fifo.sh"))
		done <- check(g, execTool, cmdArgs("git status"))
	}()
	for _, want := range []adapter.Action{adapter.Deny, adapter.Ask} {
		select {
		case d := <-done:
			if d.Action != want {
				t.Errorf("Check = %v (%s), want %v", d.Action, d.Reason, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the check is stalled on a FIFO")
		}
	}
}

// TestCommand_Bounded: globs and script files that fan out are bounded; past
// the bound the command asks (or, for scripts, is denied under a deny rule).
func TestCommand_Bounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	write(t, filepath.Join(f.ws, "loop.sh"), strings.Repeat(". ./loop.sh\n", 20))
	plain := f.guard(nil)
	deny := f.guard(func(o *Options) {
		o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "printenv"})
	})
	if d := check(plain, execTool, cmdArgs("ls sub/*")); d.Action != adapter.Allow {
		t.Errorf("one glob: %v (%s), want allow", d.Action, d.Reason)
	}
	for i := range 20 {
		mkdir(t, filepath.Join(f.ws, "g", fmt.Sprint("d", i)))
	}
	if d := check(plain, execTool, cmdArgs("ls g/*/*")); d.Action != adapter.Allow {
		t.Errorf("a glob over 21 folders: %v (%s), want allow", d.Action, d.Reason)
	}
	var many strings.Builder
	for i := range 250 {
		fmt.Fprintf(&many, " g/*/*%d", i)
	}
	if d := check(plain, execTool, cmdArgs("ls"+many.String())); d.Action != adapter.Ask || !strings.Contains(d.Reason, "globs") {
		t.Errorf("250 globs over 21 folders each: %v (%s), want an ask naming the globs", d.Action, d.Reason)
	}
	if d := check(plain, execTool, cmdArgs("source loop.sh")); d.Action != adapter.Allow {
		t.Errorf("a script sourcing itself, no deny rule: %v (%s), want allow", d.Action, d.Reason)
	}
	if d := check(deny, execTool, cmdArgs("source loop.sh")); d.Action != adapter.Deny {
		t.Errorf("a script sourcing itself, deny rule: %v (%s), want deny", d.Action, d.Reason)
	}
}
