package guard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// FuzzCommandAnalysis: any command analyses without panicking; the guard
// refuses only on a deny rule or a bound (FuzzCommandBounds), and a
// refusal by the rule names the denied program; a
// command the classifier calls read-only runs only programs of its table;
// a command naming /etc literally asks.
func FuzzCommandAnalysis(f *testing.F) {
	for _, s := range []string{
		"ls", "rm -rf /", "cat README.md | grep x", "echo $(cat ~/.ssh/id_rsa)", "bash -c \"rm x\"",
		"find . -exec rm {} +", "eval rm x", "r{m,} x", "$'\\x72m' x", "cat <<EOF\n$(id)\nEOF",
		"env -S 'rm x'", "xargs -I{} {} x", "sudo -u root -- rm x", "a=(/etc/x); echo ${a[0]:-/y}",
		"git status && sed -n '1,5p' f", "x=$((1+2)) cat /etc/passwd",
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	rules := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "rm"}, {Action: policy.ExecAsk, Program: "git"}}}}
	plain := fx.guard(nil)
	ruled := fx.guard(func(o *Options) { o.Policy = rules })
	f.Fuzz(func(t *testing.T, cmd string) {
		s := analyzeCommand(cmd, fx.ws, fx.home, nil)
		if s.readOnly {
			for _, c := range s.calls {
				if _, ok := readOnlyPrograms[c.prog]; !ok {
					t.Fatalf("%q classified read-only but runs %s", cmd, c.prog)
				}
			}
		}
		for _, p := range s.paths {
			if strings.Contains(p, unknownMark) {
				t.Fatalf("%q: path %q holds an unknown mark", cmd, p)
			}
		}
		d := check(plain, execTool, cmdArgs(cmd))
		if d.Action == adapter.Deny && s.bound == "" {
			t.Fatalf("%q denied without any deny rule: %s", cmd, d.Reason)
		}
		if d.Action == adapter.Ask && d.Reason == "" {
			t.Fatalf("%q asks without a reason", cmd)
		}
		if s.parseErr == nil && strings.Contains(cmd, " /etc/passwd") && !strings.ContainsAny(cmd, "#\\'\"$`") && d.Action != adapter.Ask {
			t.Fatalf("%q names /etc/passwd but was allowed", cmd)
		}
		rd := check(ruled, execTool, cmdArgs(cmd))
		if rd.Action == adapter.Deny && s.bound == "" && !strings.Contains(rd.Reason, "rm") {
			t.Fatalf("%q denied for %q, not by the rm rule", cmd, rd.Reason)
		}
	})
}

// FuzzCommandBounds: however deep a command nests, the guard judges it and
// the process lives: a command past a bound is refused, naming it and
// what to do instead, and only then. And the pre-scan keeps up with the
// parser: where it lets a command through, the parser recurses no more
// than 36 stack frames for each level it counted (the most any construct
// takes, $(( and ${a: included), so the frame bound behind it never has to
// decide.
func FuzzCommandBounds(f *testing.F) {
	for _, c := range nestConstructs {
		f.Add(c.prefix + strings.Repeat(c.unit, 3))
		f.Add(c.prefix + strings.Repeat(c.unit, maxShellDepth/c.levels+1))
	}
	for _, s := range []string{
		"cat <<E $(\n((((", "echo '(' ( ')' (", "case a in a) ( case a in a) (", "{ echo }; { echo }", "A[0[0[0 ",
		"cat <<EOF\n$(a)\nEOF\n(((", "cat <<-EOF\n\t((\n\tEOF\n((", "x=$(cat <<E\n((\nE\n)((", "let a=b=c x[y[1]]",
		"echo ${a:1:(2)} ${a: -1} ${a/[/x}", "a=([0]=1 [1]=$((2)))", "declare -a a[1]=2", "\"${a:-'}'}\" ((", "f() ( g() ( : ) )",
		"echo `echo \\`(\\`` ((", "for ((i=0;i<1;i++)); do ((a)); done", "echo {a,b}{c,d} " + strings.Repeat("{x,", 130),
		strings.Repeat("a|", 2600) + "a", "bash -c '" + strings.Repeat("(", 1200) + "'",
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	g := fx.guard(nil)
	f.Fuzz(func(t *testing.T, cmd string) {
		s := analyzeCommand(cmd, fx.ws, fx.home, nil)
		d := check(g, execTool, cmdArgs(cmd))
		if (d.Action == adapter.Deny) != (s.bound != "") {
			t.Fatalf("%.200q: %v (%.200s), bound %q", cmd, d.Action, d.Reason, s.bound)
		}
		if d.Action == adapter.Deny && (!strings.Contains(d.Reason, "past the guard's bound") || !strings.Contains(d.Reason, boundAdvice)) {
			t.Fatalf("%.200q refused for %.300s", cmd, d.Reason)
		}
		depth, err := newNestScan(cmd).run()
		if err != nil || len(cmd) > 16<<10 {
			return
		}
		if limit := 36*(depth+1) + 64; parseDeeper(cmd, limit) {
			t.Fatalf("%.200q: the parser recursed more than %d frames deep where the pre-scan counted %d levels", cmd, limit, depth)
		}
	})
}

// parseDeeper parses src and reports whether the parse went more than
// limit stack frames deeper than at its start, as seen every 16 bytes it
// reads.
func parseDeeper(src string, limit int) bool {
	r := &framesReader{r: strings.NewReader(src), limit: limit}
	_, _ = syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(r, "")
	return r.deeper
}

type framesReader struct {
	r           *strings.Reader
	base, limit int
	deeper      bool
}

func (f *framesReader) Read(b []byte) (int, error) {
	if f.base == 0 {
		var pcs [512]uintptr
		f.base = runtime.Callers(0, pcs[:])
	}
	var pc [1]uintptr
	if runtime.Callers(f.base+f.limit, pc[:]) > 0 {
		f.deeper = true
	}
	return f.r.Read(b[:min(len(b), 16)])
}

// FuzzPathGuard: whatever path a read or write names, the guard allows it
// without asking only when an independent resolution (the nearest
// existing ancestor through filepath.EvalSymlinks) lands inside the
// workspace: for a write strictly inside, for a read the workspace too.
func FuzzPathGuard(f *testing.F) {
	for _, s := range []string{
		"a.go", "../x", "escape/secret", "chain1/x", "relup", "dangle", "dangle_rel/y", "~/.ssh/id_rsa",
		"file:///etc/passwd", "a\x00b", "/proc/self/environ", ".", "sub/../..", "inner/../../x", "..test",
		"//etc", "wsself/x", "loop", "selfup/x",
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	g := fx.guard(func(o *Options) { o.Policy = nil })
	f.Fuzz(func(t *testing.T, p string) {
		for _, write := range []bool{false, true} {
			sp := spec(sdk.EffectRead, readRoles)
			if write {
				sp = spec(sdk.EffectWrite, writeRoles)
			}
			d := check(g, sp, readArgs(p))
			if d.Action != adapter.Allow {
				continue
			}
			if strings.ContainsRune(p, 0) || strings.HasPrefix(strings.ToLower(p), "file://") {
				t.Fatalf("%q allowed (write=%v): NUL and file:// must ask", p, write)
			}
			real, ok := oracle(fx.ws, fx.home, p)
			if !ok {
				continue // the oracle cannot follow it; the guard judged stricter
			}
			if !policy.Within(fx.ws, real, !write) {
				t.Fatalf("%q allowed (write=%v) but leads to %s", p, write, real)
			}
		}
	})
}

// oracle resolves p the simple way: lexically, then the nearest existing
// ancestor through filepath.EvalSymlinks. It follows no dangling link.
func oracle(ws, home, p string) (string, bool) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", false
			}
			return filepath.Join(real, rest), true
		} else if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			return "", false
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, true
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
