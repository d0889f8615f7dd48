package policy

// Rules is the security part of a profile: the folders a read reaches
// without asking, the network grants, the exec rules and the sandbox. The
// profile loader decodes a profile's keys into these types (their tags are
// the profile's keys); the guard judges a call by them and the sandbox
// holds the call's processes to them.
type Rules struct {
	// SkillDirs and ReadPaths are folders a read may reach without asking.
	SkillDirs []string
	ReadPaths []string
	Network   NetworkRules
	Exec      ExecRules
	Sandbox   SandboxRules
}

// ExecRules are the admin's rules on commands, checked on every simple
// command.
type ExecRules struct {
	Rules []ExecRule `koanf:"rules" json:"rules,omitempty" yaml:"rules,omitempty"`
}

// ExecRule matches a program (by basename, or by the file it runs) and the
// arguments it names.
type ExecRule struct {
	// Action is ExecAllow, ExecAsk or ExecDeny.
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

// Exec rule actions, spelled as profiles write them.
const (
	ExecAllow = "allow"
	ExecAsk   = "ask"
	// ExecDeny is the only hard deny: it stands under -y and -Y.
	ExecDeny = "deny"
)

// SandboxRules are the kernel containment of the processes a call starts.
type SandboxRules struct {
	// Mode is SandboxOn (the default, also for ""), SandboxOff or
	// SandboxRequired.
	Mode string `koanf:"mode" json:"mode,omitempty" yaml:"mode,omitempty"`
	// Read are roots the processes may read beyond the defaults.
	Read []string `koanf:"read" json:"read,omitempty" yaml:"read,omitempty"`
	// Write are roots they may read and write beyond the defaults.
	Write []string `koanf:"write" json:"write,omitempty" yaml:"write,omitempty"`
	// Network is NetworkOn (the default) or NetworkOff: an empty network
	// namespace, loopback only.
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

// SandboxMode returns the rules' sandbox mode, on when unset.
func (r *Rules) SandboxMode() string {
	if r == nil {
		return SandboxOn
	}
	return SandboxMode(r.Sandbox.Mode)
}

// SandboxNetwork reports whether the call's processes keep the network.
func (r *Rules) SandboxNetwork() bool {
	return r == nil || r.Sandbox.Network != NetworkOff
}
