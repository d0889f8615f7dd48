package config

import (
	"slices"

	"github.com/yagent/yagent/policy"
)

// Profile is one resolved profile: which families and tools are enabled, how
// they are listed, and what the guard allows without asking.
type Profile struct {
	// Name of the profile, such as "coder".
	Name string `koanf:"name" json:"name" yaml:"name"`
	// Description is one line for `yagent profiles list`.
	Description string `koanf:"description" json:"description,omitempty" yaml:"description,omitempty"`
	// Families lists the enabled families; empty means every first-party family.
	Families []string `koanf:"families" json:"families,omitempty" yaml:"families,omitempty"`
	// Grant lists globs over tool names; when set, only matching tools are kept.
	Grant []string `koanf:"grant" json:"grant,omitempty" yaml:"grant,omitempty"`
	// Deny lists globs over tool names removed from the surface; Deny wins over Grant.
	Deny []string `koanf:"deny" json:"deny,omitempty" yaml:"deny,omitempty"`
	// Tiers overrides the default tier of static tools: name -> hot|warm|cold.
	Tiers map[string]string `koanf:"tiers" json:"tiers,omitempty" yaml:"tiers,omitempty"`
	// Deferred is auto (default), on or off.
	Deferred string `koanf:"deferred" json:"deferred,omitempty" yaml:"deferred,omitempty"`
	// SchemaBudgetBytes is the listing budget of deferred auto mode and of
	// Warm demotion; 0 means the default (24 KiB).
	SchemaBudgetBytes int `koanf:"schema_budget_bytes" json:"schema_budget_bytes,omitempty" yaml:"schema_budget_bytes,omitempty"`
	// Network lists hosts the network tools may reach without asking.
	Network policy.NetworkRules `koanf:"network" json:"network,omitempty" yaml:"network,omitempty"`
	// Exec holds the exec rules, checked on every simple command.
	Exec policy.ExecRules `koanf:"exec" json:"exec,omitempty" yaml:"exec,omitempty"`
	// Plugins holds per-plugin settings passed to that plugin, such as
	// search.rg_path or browser.chromium; the setting enabled ("true" or
	// "false") is the host's own: a plugin whose enabled is false is
	// switched off, never launched (PluginEnabled).
	Plugins map[string]map[string]string `koanf:"plugins" json:"plugins,omitempty" yaml:"plugins,omitempty"`
	// PluginDevDir is a development override: a folder whose
	// yagent-plugin-* binaries are used before those of the plugin folders,
	// without a pin check, and count as unpinned. Only the user's and the
	// managed layer (and the --plugin-dev-dir flag) may set it; it must be
	// absolute or start with ~/.
	PluginDevDir string `koanf:"plugin_dev_dir" json:"plugin_dev_dir,omitempty" yaml:"plugin_dev_dir,omitempty"`
	// SkillDirs are folders holding skills (each a folder with a SKILL.md).
	SkillDirs []string `koanf:"skill_dirs" json:"skill_dirs,omitempty" yaml:"skill_dirs,omitempty"`
	// ReadPaths are extra folders outside the workspace readable without asking.
	ReadPaths []string `koanf:"read_paths" json:"read_paths,omitempty" yaml:"read_paths,omitempty"`
	// Sandbox is the kernel containment of the processes a call starts.
	Sandbox policy.SandboxRules `koanf:"sandbox" json:"sandbox,omitempty" yaml:"sandbox,omitempty"`
	// Audit is where and how the audit trail is kept (user and managed
	// layers only).
	Audit AuditRules `koanf:"audit" json:"audit,omitempty" yaml:"audit,omitempty"`
}

// Rules returns the security part of the profile, its own copy: nil for
// a nil profile.
func (p *Profile) Rules() *policy.Rules {
	if p == nil {
		return nil
	}
	sb := p.Sandbox
	sb.Read, sb.Write, sb.UnixSockets = slices.Clone(sb.Read), slices.Clone(sb.Write), slices.Clone(sb.UnixSockets)
	return &policy.Rules{
		SkillDirs: slices.Clone(p.SkillDirs),
		ReadPaths: slices.Clone(p.ReadPaths),
		Network:   policy.NetworkRules{Allow: slices.Clone(p.Network.Allow)},
		Exec:      policy.ExecRules{Rules: slices.Clone(p.Exec.Rules)},
		Sandbox:   sb,
	}
}

// PluginEnabledKey is the setting under plugins.NAME that switches plugin
// NAME on or off; the host keeps it from the plugin.
const PluginEnabledKey = "enabled"

// PluginEnabled reports whether the profile lets plugin name run: every
// plugin does but one whose plugins.NAME.enabled is false. (A first-party
// plugin is also held back by families; see the app.)
func (p *Profile) PluginEnabled(name string) bool {
	return p == nil || p.Plugins[name][PluginEnabledKey] != "false"
}

// Deferred modes.
const (
	DeferredAuto = "auto"
	DeferredOn   = "on"
	DeferredOff  = "off"
)

// DefaultSchemaBudgetBytes is the listing budget when a profile sets none.
const DefaultSchemaBudgetBytes = 24 * 1024

// Budget returns the profile's schema budget, or the default.
func (p *Profile) Budget() int {
	if p == nil || p.SchemaBudgetBytes <= 0 {
		return DefaultSchemaBudgetBytes
	}
	return p.SchemaBudgetBytes
}

// DeferredMode returns the profile's deferred mode, auto when unset.
func (p *Profile) DeferredMode() string {
	if p == nil || p.Deferred == "" {
		return DeferredAuto
	}
	return p.Deferred
}
