package fromconfig

import (
	"slices"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/guard"
)

// Policy returns what the guard reads of p: nil for a nil profile.
func Policy(p *config.Profile) *guard.Policy {
	if p == nil {
		return nil
	}
	rules := make([]guard.ExecRule, len(p.Exec.Rules))
	for i, r := range p.Exec.Rules {
		// A conversion, not a copy by hand: a field added to config.ExecRule
		// and not to guard.ExecRule stops the build here.
		rules[i] = guard.ExecRule(r)
	}
	sb := guard.SandboxRules(p.Sandbox)
	sb.Read, sb.Write, sb.UnixSockets = slices.Clone(sb.Read), slices.Clone(sb.Write), slices.Clone(sb.UnixSockets)
	return &guard.Policy{
		SkillDirs: slices.Clone(p.SkillDirs),
		ReadPaths: slices.Clone(p.ReadPaths),
		Network:   guard.NetworkRules{Allow: slices.Clone(p.Network.Allow)},
		Exec:      guard.ExecRules{Rules: rules},
		Sandbox:   sb,
	}
}
