package config

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
	Network NetworkRules `koanf:"network" json:"network,omitempty" yaml:"network,omitempty"`
	// Exec holds the exec rules, checked on every simple command.
	Exec ExecRules `koanf:"exec" json:"exec,omitempty" yaml:"exec,omitempty"`
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
	Sandbox SandboxRules `koanf:"sandbox" json:"sandbox,omitempty" yaml:"sandbox,omitempty"`
	// Audit is where and how the audit trail is kept (user and managed
	// layers only).
	Audit AuditRules `koanf:"audit" json:"audit,omitempty" yaml:"audit,omitempty"`
}

// SandboxRules say how a call's processes are contained (see sandbox.go).
type SandboxRules struct {
	// Mode is on (the default), off or required.
	Mode string `koanf:"mode" json:"mode,omitempty" yaml:"mode,omitempty"`
	// Read are roots the processes may read beyond the defaults.
	Read []string `koanf:"read" json:"read,omitempty" yaml:"read,omitempty"`
	// Write are roots they may read and write beyond the defaults.
	Write []string `koanf:"write" json:"write,omitempty" yaml:"write,omitempty"`
	// Network is on (the default) or off: an empty network namespace.
	Network string `koanf:"network" json:"network,omitempty" yaml:"network,omitempty"`
	// Pids is the most processes and threads the tree of one command may
	// hold at once; 0 (or absent from every layer) sets no bound.
	Pids int `koanf:"pids" json:"pids,omitempty" yaml:"pids"`
	// MemoryMB is the most memory, in MiB, the tree of one command may use,
	// swap included; 0 (or absent) sets no bound.
	MemoryMB int `koanf:"memory_mb" json:"memory_mb,omitempty" yaml:"memory_mb"`
	// TmpSizeMB is the size, in MiB, of the session temp folder; 0 (or
	// absent) gives it no size of its own.
	TmpSizeMB int `koanf:"tmp_size_mb" json:"tmp_size_mb,omitempty" yaml:"tmp_size_mb"`
	// UnixSockets are Unix sockets (absolute paths, or under ~/) that
	// commands may connect to: an ssh agent's, a container engine's. The
	// admin's word: a project may only remove entries, and the managed
	// layer's list bounds the others'.
	UnixSockets []string `koanf:"unix_sockets" json:"unix_sockets,omitempty" yaml:"unix_sockets,omitempty"`
}

// NetworkRules grants network access by host.
type NetworkRules struct {
	// Allow lists host names or globs ("*.example.com") reachable without asking.
	Allow []string `koanf:"allow" json:"allow,omitempty" yaml:"allow,omitempty"`
}

// ExecRules are the admin's rules on commands.
type ExecRules struct {
	Rules []ExecRule `koanf:"rules" json:"rules,omitempty" yaml:"rules,omitempty"`
}

// ExecRule matches a program (by basename, or by the file it runs) and the
// arguments it names.
type ExecRule struct {
	// Action is allow, ask or deny; deny is the only hard deny and stands under -y.
	Action string `koanf:"action" json:"action" yaml:"action"`
	// Program is the program's basename, such as "rm".
	Program string `koanf:"program" json:"program" yaml:"program"`
	// Args are arguments the command must hold: options as a set (-rf =
	// -fr = -r -f = --recursive --force), other words as a prefix of the
	// operands; empty matches any arguments.
	Args []string `koanf:"args" json:"args,omitempty" yaml:"args,omitempty"`
	// Interactive limits the rule to starting the program's REPL: no
	// script operand, or its interactive flag (python3 -i).
	Interactive bool `koanf:"interactive" json:"interactive,omitempty" yaml:"interactive,omitempty"`
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
