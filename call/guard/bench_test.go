package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// BenchmarkWorkspaceGuard_Check measures one decision: the guard runs on
// every call, before the plugin does.
func BenchmarkWorkspaceGuard_Check(b *testing.B) {
	f := newFixture(b)
	g := f.guard(func(o *Options) {
		o.Policy.Exec = policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecAsk, Program: "git"}, {Action: policy.ExecDeny, Program: "rm", Args: []string{"-rf"}}}}
	})
	for _, bc := range []struct {
		name string
		spec sdk.Spec
		args map[string]any
	}{
		{"read inside", spec(sdk.EffectRead, readRoles), readArgs("sub/a.go")},
		{"read through symlink outside", spec(sdk.EffectRead, readRoles), readArgs("escape/secret")},
		{"write new file", spec(sdk.EffectWrite, writeRoles), readArgs("new/dir/f.txt")},
		{"command simple", execTool, cmdArgs("go test ./...")},
		{"command pipeline", execTool, cmdArgs("git status && git log --oneline | head -5; grep -rn TODO sub | wc -l")},
		{"command nested", execTool, cmdArgs(`find . -name '*.o' -exec sh -c 'rm "$1"' _ {} \; && bash -c "env nice -n 3 make -C sub all > /dev/null 2>&1"`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				check(g, bc.spec, bc.args)
			}
		})
	}
}

// BenchmarkWorkspaceGuard_Programs measures matching a command's program
// against the exec rules' programs by file: a copy of a denied program
// (same size, same bytes), a program of another size, and the exec
// supervisor's question about a copy. The copy is made once, and left to
// age past the racy window before the runs, as a file the workspace held
// for a while.
func BenchmarkWorkspaceGuard_Programs(b *testing.B) {
	pe, err := exec.LookPath("printenv")
	if err != nil {
		b.Skip("no printenv on PATH")
	}
	f := programsFixture(b, pe)
	g := f.guard(func(o *Options) {
		o.Policy.Exec = policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecAsk, Program: "git"}, {Action: policy.ExecDeny, Program: "printenv"}}}
	})
	copied := filepath.Join(f.ws, "pecopy")
	for _, bc := range []struct {
		name string
		run  func()
	}{
		{"check copy", func() { check(g, execTool, cmdArgs("./pecopy X")) }},
		{"check other", func() { check(g, execTool, cmdArgs("./sub/a.go X")) }},
		{"judge exec copy", func() { g.JudgeExec(copied, []string{"pecopy", "X"}, nil, false) }},
		{"judge exec other", func() { g.JudgeExec("/usr/bin/true", []string{"true"}, nil, false) }},
		{"exec programs", func() { g.ExecPrograms() }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				bc.run()
			}
		})
	}
}

// programsFixture is a fixture whose workspace holds a copy of pe, aged.
func programsFixture(b *testing.B, pe string) fixture {
	f := newFixture(b)
	data, err := os.ReadFile(pe)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "pecopy"), data, 0o755); err != nil {
		b.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	return f
}
