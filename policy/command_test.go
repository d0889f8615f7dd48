package policy

import (
	"slices"
	"strings"
	"testing"
)

// words splits a command's arguments on spaces; a word starting with $ is
// only known when the command runs.
func words(s string) []Arg {
	var out []Arg
	for _, w := range strings.Fields(s) {
		out = append(out, Arg{Text: w, Static: !strings.HasPrefix(w, "$")})
	}
	return out
}

// TestInteractive: how each interpreter's arguments tell a script run
// from its REPL, as the program itself reads them.
func TestInteractive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"python3", true},
		{"python3 -i", true},
		{"python3 -qi", true},
		{"python3 -i x.py", true},
		{"python3 -i -c x", true},
		{"python3 -c input()", true},
		{"python3 -m asyncio", true},
		{"python3 -", true},
		{"python3 --", true},
		{"python3 -W ignore", true},
		{"python3 $x", true},
		{"python3 -c $x", true},
		{"python3 --check-hash-based-pycs always", true},
		{"/usr/bin/python3", true},
		{"python3 x.py", false},
		{"python3 x.py -i", false},
		{"python3 -c print(1) -i", false},
		{"python3 -m json.tool -i", false},
		{"python3 -m pytest", false},
		{"python3 -- x.py", false},
		{"python3 --version", false},
		{"python3 -V", false},
		{"node", true},
		{"node -i", true},
		{"node -i -e x", true},
		{"node -e x -i", true},
		{"node --eval $x", true},
		{"node -r ts-node/register", true},
		{"node -i x.js", false},
		{"node x.js -i", false},
		{"node --eval x", false},
		{"node -r ts-node/register x.ts", false},
		{"deno", true},
		{"deno repl", true},
		{"deno run x.ts", false},
		{"deno x.ts", false},
		{"deno eval x", false},
		{"bun repl", true},
		{"bun", false},
		{"bun x.ts", false},
		{"bun -e x", false},
		{"perl", true},
		{"perl -de0", true},
		{"perl -ne print", true},
		{"perl -ne print x.txt", false},
		{"perl x.pl -d", false},
		{"irb", true},
		{"irb -r json", true},
		{"irb x.rb", false},
		{"irb -v", false},
		{"pry x.rb", true},
		{"jshell", true},
		{"jshell --version", false},
		{"php", true},
		{"php -a", true},
		{"php x.php", false},
		{"lua -i x.lua", true},
		{"ghci", true},
		{"ghci x.hs", true},
		{"ghci -iexamples", true},
		{"ghci -e 1+1", false},
		{"sqlite3 db", true},
		{"sqlite3 -cmd .tables db", true},
		{"sqlite3 db select", false},
		{"psql -h db app", true},
		{"psql -c select", false},
		{"mysql -u root app", true},
		{"gdb -x cmds ./prog", true},
		{"gdb -batch ./prog", false},
		{"erl", true},
		{"erl -eval halt().", true},
		{"erl -noshell -eval halt().", false},
		{"iex", true},
		{"iex -S mix", true},
		{"iex x.exs", true},
		{"iex --version", false},
		{"scala", true},
		{"scala repl", true},
		{"scala --dep os-lib", true},
		{"scala -i x.scala", true},
		{"scala x.scala", false},
		{"scala run .", false},
		{"scala -e x", false},
		{"clojure", true},
		{"clj -M:dev", true},
		{"clojure -Sdeps {}", true},
		{"clojure -M -e x -r", true},
		{"clojure x.clj", false},
		{"clojure -M -m app.main", false},
		{"clojure -X:deps tree", false},
		{"clojure -M -e x", false},
		{"racket", true},
		{"racket -e x -i", true},
		{"racket -il typed/racket", true},
		{"racket x.rkt", false},
		{"racket -e x", false},
		{"racket -l racket/base", false},
		{"ocaml", true},
		{"ocaml unix.cma", true},
		{"ocaml -I +unix", true},
		{"ocaml -stdin", true},
		{"ocaml x.ml", false},
		{"ocaml unix.cma x.ml", false},
		{"utop", true},
		{"mongosh", true},
		{"mongosh mongodb://db/app", true},
		{"mongosh --eval x --shell", true},
		{"mongosh x.js", false},
		{"mongosh mongodb://db/app x.js", false},
		{"mongosh --eval x", false},
		{"redis-cli", true},
		{"redis-cli -h db -p 6379 -n 2", true},
		{"redis-cli --pipe", true},
		{"redis-cli PING", false},
		{"redis-cli -h db GET k", false},
		{"redis-cli --scan", false},
		{"bash", true},
		{"bash -i", true},
		{"bash --norc --noprofile -i", true},
		{"bash -s", true},
		{"bash -s x", true},
		{"bash -o errexit", true},
		{"bash +O extglob", true},
		{"bash --rcfile rc", true},
		{"bash $x", true},
		{"bash x.sh", false},
		{"bash -i x.sh", false},
		{"bash -c x", false},
		{"bash -ic x", false},
		{"bash -c -e x", false},
		{"bash --version", false},
		{"bash --norc --version", false},
		{"bash -o errexit x.sh", false},
		{"sh", true},
		{"zsh", true},
		{"dash -", true},
		{"ksh x.sh", false},
		{"fish", true},
		{"fish -C x", true},
		{"fish -c x", false},
		{"fish --command x", false},
		{"fish -v", false},
		{"unknownrepl", true},
		{"unknownrepl x", false},
	} {
		args := words(tc.cmd)
		if got := Interactive(args[0].Text, args[1:]); got != tc.want {
			t.Errorf("Interactive(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestInterpreter: the programs with a REPL, and no other.
func TestInterpreter(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"python3", "/usr/bin/python3", "node", "erl", "iex", "scala", "clojure", "clj", "racket", "ocaml", "utop", "mongosh", "redis-cli", "bash", "sh", "zsh", "fish", "dash", "ksh", "psql"} {
		if !Interpreter(p) {
			t.Errorf("Interpreter(%q) = false, want true", p)
		}
	}
	for _, p := range []string{"ls", "git", "vim", "env", ""} {
		if Interpreter(p) {
			t.Errorf("Interpreter(%q) = true, want false", p)
		}
	}
	names := Interpreters()
	if !slices.IsSorted(names) || !slices.Contains(names, "python3") || !slices.Contains(names, "redis-cli") || len(names) != len(interpreters) {
		t.Errorf("Interpreters() = %v, want every interpreter, sorted", names)
	}
}

// TestShellScript: the script a shell runs with -c, found as bash finds it.
func TestShellScript(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd, want string
		ok        bool
	}{
		{"bash -c python3", "python3", true},
		{"bash -lc python3", "python3", true},
		{"bash -c -e python3", "python3", true},
		{"bash -c -- python3", "python3", true},
		{"bash -o errexit -c python3", "python3", true},
		{"/bin/sh -c node", "node", true},
		{"fish --command node", "node", true},
		{"bash -c $x", "", false},
		{"bash x.sh", "", false},
		{"bash -c", "", false},
		{"bash", "", false},
		{"python3 -c x", "", false},
		{"env -c x", "", false},
	} {
		args := words(tc.cmd)
		got, ok := ShellScript(args[0].Text, args[1:])
		if ok != tc.ok || got.Text != tc.want {
			t.Errorf("ShellScript(%q) = %q, %v, want %q, %v", tc.cmd, got.Text, ok, tc.want, tc.ok)
		}
	}
}

// TestWantsTerminal: the programs that prompt or draw the screen, emacs
// --batch apart, and git's interactive subcommands.
func TestWantsTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"sudo ls", true},
		{"/usr/bin/sudo ls", true},
		{"ssh host", true},
		{"vim x.go", true},
		{"less x", true},
		{"top", true},
		{"man ls", true},
		{"tmux", true},
		{"emacs x.el", true},
		{"emacs --batch -l x.el", false},
		{"emacs -batch -l x.el", false},
		{"emacs --script x.el", false},
		{"git add -p", true},
		{"git add --interactive", true},
		{"git add -i", true},
		{"git checkout -p", true},
		{"git reset --patch", true},
		{"git restore -p x", true},
		{"git stash -p", true},
		{"git commit -p", true},
		{"git commit --interactive", true},
		{"git rebase -i HEAD~3", true},
		{"git rebase --interactive main", true},
		{"git clean -i", true},
		{"git -C sub rebase -i HEAD~3", true},
		{"git -c core.editor=vi rebase -i main", true},
		{"git --git-dir .git add -p", true},
		{"git commit -i -m x", false},
		{"git rebase main", false},
		{"git add .", false},
		{"git log -p", false},
		{"git", false},
		{"python3", false},
		{"ls -la", false},
	} {
		w := strings.Fields(tc.cmd)
		if got := WantsTerminal(w[0], w[1:]); got != tc.want {
			t.Errorf("WantsTerminal(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestStripWrappers: each wrapper's options and operands are dropped, as
// it reads them, down to the program it runs.
func TestStripWrappers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd, want string
	}{
		{"python3 -i", "python3 -i"},
		{"env python3", "python3"},
		{"/usr/bin/env python3 -i", "python3 -i"},
		{"env FOO=1 BAR=2 python3", "python3"},
		{"env -i FOO=1 python3", "python3"},
		{"env -u HOME python3", "python3"},
		{"env --unset HOME python3", "python3"},
		{"env --unset=HOME python3", "python3"},
		{"env -C /tmp python3", "python3"},
		{"env -- python3", "python3"},
		{"env -S python3", "python3"},
		{"env -Spython3 x.py", "python3 x.py"},
		{"env --split-string python3 x.py", "python3 x.py"},
		{"nohup python3", "python3"},
		{"setsid -w python3", "python3"},
		{"nice python3", "python3"},
		{"nice -n 5 python3", "python3"},
		{"nice -n5 python3", "python3"},
		{"nice --adjustment 5 python3", "python3"},
		{"nice --adjustment=5 python3", "python3"},
		{"timeout 5 python3", "python3"},
		{"timeout -s KILL 5 python3", "python3"},
		{"timeout -sKILL -k 1 5 python3", "python3"},
		{"timeout --signal KILL 5 python3", "python3"},
		{"timeout --preserve-status 5 python3", "python3"},
		{"stdbuf -oL python3", "python3"},
		{"stdbuf -o L -e 0 python3", "python3"},
		{"stdbuf --output=L python3", "python3"},
		{"time python3", "python3"},
		{"time -f %e python3", "python3"},
		{"time -p python3", "python3"},
		{"command python3", "python3"},
		{"command -p python3", "python3"},
		{"exec python3", "python3"},
		{"exec -a py python3", "python3"},
		{"exec -cl python3", "python3"},
		{"builtin exec python3", "python3"},
		{"ionice -c 3 python3", "python3"},
		{"taskset -c 0 python3", "python3"},
		{"taskset 0x1 python3", "python3"},
		{"chrt -r 5 python3", "python3"},
		{"numactl --membind 0 python3", "python3"},
		{"nohup nice -n 5 timeout 5 env FOO=1 python3 -i", "python3 -i"},
		{"uv run python3", "python3"},
		{"uv run --with rich python3", "python3"},
		{"poetry run python3 -i", "python3 -i"},
		{"bundle exec irb", "irb"},
		{"direnv exec . python3", "python3"},
		{"uv pip install x", "uv pip install x"},
		{"bundle install", "bundle install"},
		{"sudo python3", "sudo python3"},
		{"xargs python3", "xargs python3"},
		{"env $P python3", "$P python3"},
		{"nice $N python3", "$N python3"},
		{"nice -n $N python3", "python3"},
		{"env -S $S", "$S"},
		{"command -v python3", ""},
		{"command -V python3", ""},
		{"taskset -p 1", ""},
		{"ionice -p 1", ""},
		{"chrt -p 1", ""},
		{"nohup", ""},
		{"timeout 5", ""},
	} {
		var got []string
		for _, a := range StripWrappers(words(tc.cmd)) {
			if !a.Static {
				a.Text = "$" + strings.TrimPrefix(a.Text, "$")
			}
			got = append(got, a.Text)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("StripWrappers(%q) = %q, want %q", tc.cmd, g, tc.want)
		}
	}
}
