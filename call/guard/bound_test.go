package guard

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
)

// The attack of issue 29: a command nested far deeper than mvdan.cc/sh's
// parser survives overflowed the host's stack ("fatal error: stack
// overflow", which no recover catches) while the guard judged it. Each of
// these ended the test binary before the bounds (bound.go).

// deepCommands nest past the depth at which parsing, or walking the parsed
// tree, overflows the stack; each stays under 1 MiB, so the nesting is what
// refuses it.
var deepCommands = []struct{ name, cmd string }{
	{"200,000 (", strings.Repeat("(", 200_000)},
	{"400,000 $(", "echo " + strings.Repeat("$(", 400_000)},
	{"backquotes around 400,000 $(", "echo `" + strings.Repeat("$(", 400_000)},
	{"500,000 {", strings.Repeat("{ ", 500_000)},
	{"150,000 ${a[", "echo " + strings.Repeat("${a[", 150_000)},
	{"150,000 $((", "echo " + strings.Repeat("$((", 150_000)},
	{"bash -c of 200,000 (", "bash -c '" + strings.Repeat("(", 200_000) + "'"},
	{"eval of 150,000 $((", "eval '" + strings.Repeat("$((", 150_000) + "'"},
	{"a here-document of 400,000 $(", "cat <<EOF\n" + strings.Repeat("$(", 400_000) + "\nEOF\n"},
	{"a pipeline of 450,000 commands", strings.Repeat("a|", 450_000) + "a"},
}

func TestCheckCommand_DeepNestingRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	for _, tc := range deepCommands {
		t.Run(tc.name, func(t *testing.T) {
			d := check(g, execTool, cmdArgs(tc.cmd))
			if d.Action != adapter.Deny || !strings.Contains(d.Reason, "past the guard's bound") || !strings.Contains(d.Reason, "split it into smaller commands") {
				t.Fatalf("got %v: %.300s", d.Action, d.Reason)
			}
		})
	}
}

// TestCheckCommand_BoundsRefuse: what passes a bound other than nesting is
// refused too, naming it.
func TestCheckCommand_BoundsRefuse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	word := "echo " + strings.Repeat("x", 300_000)
	for _, tc := range []struct{ name, cmd, want string }{
		{"over 1 MiB", strings.Repeat("echo a; ", (1<<20)/8+1), "bytes long, past the guard's bound of 1048576 bytes"},
		{"a word of 129 braces", "echo " + strings.Repeat("{a,", 129), "holds 129 braces, past the guard's bound of 128"},
		{"a tree 6,000 levels deep", strings.Repeat("a && ", 3000) + "a", "syntax tree more than 5000 levels deep"},
		{"eval repeating its script past 2 MiB", strings.Repeat("eval '"+word+"'{,,}; ", 3), "more than 2097152 bytes (2 MiB) to parse"},
		{"sh -c nested too deep", "sh -c 'true; " + strings.Repeat("$(", 2000) + "'", "the script sh -c runs nests more than 1000 levels deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := check(g, execTool, cmdArgs(tc.cmd))
			if d.Action != adapter.Deny || !strings.Contains(d.Reason, tc.want) {
				t.Fatalf("got %v: %.300s", d.Action, d.Reason)
			}
		})
	}
}

// TestCheckCommand_BraceBound: one word of more braces than the bound is
// refused before syntax.SplitBraces reads it (quadratic: 8,000 unclosed
// took 1.5 GB); past the braces of a whole command the rest ask.
func TestCheckCommand_BraceBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	if d := check(g, execTool, cmdArgs("echo "+strings.Repeat("{a,", 129))); d.Action != adapter.Deny || !strings.Contains(d.Reason, "129 braces") {
		t.Errorf("129 braces in a word: got %v: %.300s", d.Action, d.Reason)
	}
	if d := check(g, execTool, cmdArgs("echo "+strings.Repeat("{c}", 128))); d.Action != adapter.Allow {
		t.Errorf("128 braces in a word: got %v: %s", d.Action, d.Reason)
	}
	many := "echo" + strings.Repeat(" x{a,b}"+strings.Repeat("{c,d}", 99), 42)
	if d := check(g, execTool, cmdArgs(many)); d.Action != adapter.Ask || !strings.Contains(d.Reason, "more than 4096 braces to expand") {
		t.Errorf("4,200 braces in a command: got %v: %.300s", d.Action, d.Reason)
	}
}

// TestCheckCommand_DeepScriptFile: a script file of the workspace nested
// too deep is not parsed: without a deny rule bash runs it as it would
// any script, under one it is refused as a script the guard cannot read.
func TestCheckCommand_DeepScriptFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	write(t, filepath.Join(f.ws, "deep.sh"), "echo "+strings.Repeat("$(", 400_000)+"\n")
	if d := check(f.guard(nil), execTool, cmdArgs("bash deep.sh")); d.Action == adapter.Deny {
		t.Errorf("without a deny rule: got %v: %.300s", d.Action, d.Reason)
	}
	ruled := f.guard(func(o *Options) {
		o.Policy = &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "rm"}}}}
	})
	d := check(ruled, execTool, cmdArgs("bash deep.sh"))
	if d.Action != adapter.Deny || !strings.Contains(d.Reason, "the script deep.sh that bash runs nests more than 1000 levels deep") {
		t.Errorf("under a deny rule: got %v: %.300s", d.Action, d.Reason)
	}
}

// TestCheckCommand_BoundsLetRealCommandsThrough: commands far larger or
// deeper than real ones still pass every bound.
func TestCheckCommand_BoundsLetRealCommandsThrough(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	code := strings.Repeat("func f(x []int) (int, error) { if x[0] > (1+2)*3 { return g(h(x)), nil }; return 0, fmt.Errorf(\"%d (\", x[1]) }\n", 1700)
	script := strings.Repeat(`
build() {
	local out="${1:-bin}" n=$(( ${#2} + 1 ))
	for f in $(ls src/*.go 2>/dev/null); do
		case "$f" in
		*_test.go) continue ;;
		(*.go) if [[ -n "$f" && ! -d "$f" ]]; then go vet "$f" | grep -v '^#' >> "$out/vet.txt" || true; fi ;;
		esac
	done
	while read -r line; do echo "${line//(/[}" "$((n * 2))"; done < <(cat "$out/vet.txt")
}
`, 600)
	for _, tc := range []struct{ name, cmd string }{
		{"a 200 KB here-document, quoted", "cat > big.go <<'EOF'\n" + code + "EOF\n"},
		{"a 200 KB here-document, unquoted", "cat > big.go <<EOF\n// $(date)\n" + code + "EOF\ngo vet ./..."},
		{"a 200 KB script", script},
		{"a script 100 levels deep", strings.Repeat("if true; then echo \"$(", 50) + "x" + strings.Repeat(")\"; fi", 50)},
		{"1,000 commands joined by &&", strings.Repeat("echo a && ", 999) + "echo a"},
		{"an arithmetic sum of 1,000 terms", "echo $((" + strings.Repeat("1+", 999) + "1))"},
		{"a 1 MiB word", "echo " + strings.Repeat("x", 1<<20-len("echo "))},
		{"a bash -c script 900 levels deep", "bash -c '" + strings.Repeat("(", 900) + "1" + strings.Repeat(")", 900) + "'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action == adapter.Deny {
				t.Fatalf("refused: %.300s", d.Reason)
			}
		})
	}
}

// nestConstructs are the constructs mvdan.cc/sh's parser recurses into, as
// prefix + unit repeated; levels is what the pre-scan counts a unit.
var nestConstructs = []struct {
	name, prefix, unit string
	levels             int
}{
	{"arithmetic (", "echo $((", "(", 1},
	{"(( (", "((", "(", 1},
	{"subshell", "", "( ", 1},
	{"$(", "echo ", "$(", 1},
	{"\"$(", "echo ", "\"$(", 2},
	{"` $(", "echo `", "$(", 1},
	{"{", "", "{ ", 1},
	{"${ cmd;}", "echo ", "${ ", 1},
	{"${a:-", "echo ", "${a:-", 1},
	{"\"${a:-", "echo ", "\"${a:-", 2},
	{"${a[", "echo ", "${a[", 2},
	{"${a:", "echo ", "${a:", 2},
	{"$((", "echo ", "$((", 1},
	{"$[", "echo ", "$[", 1},
	{"index a[", "echo $((", "a[", 1},
	{"name[ assignment", "", "A[", 1},
	{"a=([", "a=([", "a[", 1},
	{"unary -", "echo $((", "- ", 1},
	{"unary !", "echo $((", "!", 1},
	{"assignment", "echo $((", "a=", 1},
	{"ternary", "echo $((", "a?a:", 1},
	{"**", "echo $((", "a**", 1},
	{"let", "let ", "!", 1},
	{"[[ (", "[[ ", "( ", 1},
	{"[[ !", "[[ ", "! ", 1},
	{"[[ &&", "[[ a", " && a", 1},
	{"if", "", "if ", 1},
	{"while", "", "while ", 1},
	{"until", "", "until ", 1},
	{"for", "", "for x in a; do ", 1},
	{"for ((", "", "for ((;;)); do ", 1},
	{"select", "", "select x in a; do ", 1},
	{"case", "", "case a in a) ", 1},
	{"case (a)", "", "case a in (a) ", 1},
	{"name()", "", "a() ", 1},
	{"name() {", "", "a() { ", 2},
	{"time", "", "time ", 1},
	{"coproc", "", "coproc ", 1},
	{"<(", "cat ", "<(", 1},
	{">(", "cat ", ">(", 1},
	{"a=($(", "", "a=($(", 2},
	{"here-document $(", "", "cat <<E\n$(", 2},
}

// TestScanNesting_CountsEveryRecursingConstruct: the pre-scan counts each
// construct the parser recurses into, refuses it one level past the bound,
// and what it lets through parses within the frame bound.
func TestScanNesting_CountsEveryRecursingConstruct(t *testing.T) {
	t.Parallel()
	for _, c := range nestConstructs {
		t.Run(c.name, func(t *testing.T) {
			d, err := newNestScan(c.prefix + strings.Repeat(c.unit, 10)).run()
			if err != nil || d < 10*c.levels || d > 10*c.levels+2 {
				t.Fatalf("10 units: depth %d, want %d (and the prefix's), %v", d, 10*c.levels, err)
			}
			n := (maxShellDepth - (d - 10*c.levels)) / c.levels // units at the bound
			at := c.prefix + strings.Repeat(c.unit, n)
			if err := scanNesting(at); err != nil {
				t.Errorf("%d units: %v", n, err)
			}
			if _, err := parse(at); err == errParseFrames {
				t.Errorf("%d units: the parse passed %d frames", n, maxParseFrames)
			}
			past := at + c.unit
			if err := scanNesting(past); err == nil || !strings.Contains(err.Error(), "nests more than 1000 levels deep") {
				t.Errorf("%d units: %v", n+1, err)
			}
		})
	}
}

// TestScanNesting_InertText: what the parser reads as text does not nest:
// quotes, comments, quoted here-documents, escapes, case patterns.
func TestScanNesting_InertText(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("$((", 2000)
	for _, src := range []string{
		"echo '" + deep + "'",
		"echo $'\\'" + deep + "'",
		"echo \"'\"; echo '" + deep + "'",
		"# " + deep + "\nls",
		"cat <<'EOF'\n" + deep + "\nEOF\nls",
		"cat <<-\"EOF\"\n" + deep + "\n\t\tEOF\nls",
		"cat <<EOF\n" + strings.Repeat("(", 2000) + " if while { [[\nEOF\nls",
		"echo " + strings.Repeat("\\(", 2000),
		"case x in " + strings.Repeat("a) ;; ", 2000) + "esac",
		"echo " + strings.Repeat("if for { ", 2000),
		"echo \"" + strings.Repeat("( { [[ if ", 2000) + "\"",
		"echo $((" + strings.Repeat("a=1, ", 2000) + "1))",
		strings.Repeat("f() { :; }\n", 2000),
		strings.Repeat("time ls\n", 2000),
	} {
		if d, err := newNestScan(src).run(); err != nil || d > 3 {
			t.Errorf("%.60q: depth %d, %v", src, d, err)
		}
	}
}

// TestParse_FrameBound: a parse the pre-scan lets through still stops
// once the goroutine's stack holds more than maxParseFrames frames, for
// any nesting the pre-scan does not count; here the stack is that deep
// before the parse starts.
func TestParse_FrameBound(t *testing.T) {
	t.Parallel()
	var deepen func(n int) error
	deepen = func(n int) error {
		if n == 0 {
			_, err := parse("echo $(ls)")
			return err
		}
		return deepen(n - 1)
	}
	if err := deepen(70_000); err == nil || !strings.Contains(err.Error(), "stack frames") {
		t.Fatalf("70,000 frames deep: %v", err)
	}
	if err := deepen(100); err != nil {
		t.Fatalf("100 frames deep: %v", err)
	}
}
