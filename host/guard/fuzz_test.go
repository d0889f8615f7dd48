package guard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/adapter"
	"github.com/yagent/yagent/sdk"
)

// FuzzCommandAnalysis: any command analyses without panicking; the guard
// refuses only on a deny rule, and a refusal names the denied program; a
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
	rules := &Policy{Exec: ExecRules{Rules: []ExecRule{{Action: ExecDeny, Program: "rm"}, {Action: ExecAsk, Program: "git"}}}}
	plain := fx.guard(nil)
	ruled := fx.guard(func(o *Options) { o.Policy = rules })
	f.Fuzz(func(t *testing.T, cmd string) {
		s := analyzeCommand(cmd, fx.ws, fx.home)
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
		if d.Action == adapter.Deny {
			t.Fatalf("%q denied without any deny rule: %s", cmd, d.Reason)
		}
		if d.Action == adapter.Ask && d.Reason == "" {
			t.Fatalf("%q asks without a reason", cmd)
		}
		if s.parseErr == nil && strings.Contains(cmd, " /etc/passwd") && !strings.ContainsAny(cmd, "#\\'\"$`") && d.Action != adapter.Ask {
			t.Fatalf("%q names /etc/passwd but was allowed", cmd)
		}
		rd := check(ruled, execTool, cmdArgs(cmd))
		if rd.Action == adapter.Deny && !strings.Contains(rd.Reason, "rm") {
			t.Fatalf("%q denied for %q, not by the rm rule", cmd, rd.Reason)
		}
	})
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
			if !within(fx.ws, real, !write) {
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
