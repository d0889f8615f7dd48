package guard

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// TestCheck_Basis: each decision names its ground for the audit trail,
// and the rule that decided as the profile writes it.
func TestCheck_Basis(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prof := &policy.Rules{
		SkillDirs: []string{f.skills},
		ReadPaths: []string{f.other},
		Network:   policy.NetworkRules{Allow: []string{"*.example.com"}},
		Exec: policy.ExecRules{Rules: []policy.ExecRule{
			{Action: policy.ExecAllow, Program: "make", Args: []string{"test"}},
			{Action: policy.ExecAsk, Program: "git", Args: []string{"push"}},
			{Action: policy.ExecDeny, Program: "shred"},
		}},
	}
	g := f.guard(func(o *Options) { o.Policy = prof })
	approved := filepath.Join(f.home, ".ssh")
	sess := session.New("s")
	sess.ApprovePaths(approved)
	netRoles := map[string]sdk.Role{"url": sdk.RoleURL}
	tests := []struct {
		name   string
		sp     sdk.Spec
		args   map[string]any
		action adapter.Action
		basis  string
		rule   string
	}{
		{"inside the workspace", spec(sdk.EffectRead, readRoles), readArgs("README.md"), adapter.Allow, adapter.BasisWorkspace, ""},
		{"by a read root", spec(sdk.EffectRead, readRoles), readArgs(filepath.Join(f.other, "secret")), adapter.Allow, adapter.BasisReadRoot, ""},
		{"by the session's paths", spec(sdk.EffectRead, readRoles), readArgs(filepath.Join(approved, "id_rsa")), adapter.Allow, adapter.BasisSessionPaths, ""},
		{"no effect", spec(sdk.EffectNone, nil), map[string]any{}, adapter.Allow, adapter.BasisNoEffect, ""},
		{"by an exec allow rule", spec(sdk.EffectExec, execRoles), cmdArgs("make test"), adapter.Allow, adapter.BasisRule, "{action: allow, program: make, args: [test]}"},
		{"by network.allow", spec(sdk.EffectNetwork, netRoles), map[string]any{"url": "https://api.example.com/x"}, adapter.Allow, adapter.BasisRule, "network.allow: *.example.com"},
		{"a plain command", spec(sdk.EffectExec, execRoles), cmdArgs("ls sub"), adapter.Allow, adapter.BasisWorkspace, ""},
		{"asked by a rule", spec(sdk.EffectExec, execRoles), cmdArgs("git push origin"), adapter.Ask, adapter.BasisRule, "{action: ask, program: git, args: [push]}"},
		{"asked by the guard", spec(sdk.EffectWrite, writeRoles), readArgs(filepath.Join(f.other, "x")), adapter.Ask, adapter.BasisGuard, ""},
		{"denied by a rule", spec(sdk.EffectExec, execRoles), cmdArgs("shred -u sub/a.go"), adapter.Deny, adapter.BasisRule, "{action: deny, program: shred}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := g.Check(context.Background(), adapter.GuardRequest{Spec: tt.sp, Args: tt.args, Session: sess, Trusted: true})
			if d.Action != tt.action || d.Basis != tt.basis || d.Rule != tt.rule {
				t.Errorf("got %v basis %q rule %q (%s), want %v basis %q rule %q", d.Action, d.Basis, d.Rule, d.Reason, tt.action, tt.basis, tt.rule)
			}
		})
	}
}
