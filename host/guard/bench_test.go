package guard

import (
	"testing"

	"github.com/yagent/yagent/sdk"
)

// BenchmarkWorkspaceGuard_Check measures one decision: the guard runs on
// every call, before the plugin does.
func BenchmarkWorkspaceGuard_Check(b *testing.B) {
	f := newFixture(b)
	g := f.guard(func(o *Options) {
		o.Policy.Exec = ExecRules{Rules: []ExecRule{{Action: ExecAsk, Program: "git"}, {Action: ExecDeny, Program: "rm", Args: []string{"-rf"}}}}
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
