package guard

import "github.com/yagent/yagent/policy"

// Policy is what the guard reads of a profile: the read roots, the network
// grants, the exec rules and the sandbox settings. Its shape follows
// host/config.Profile key for key, and host/guard/fromconfig builds it from
// one; it is the guard's own type so that the guard, and sdk/plugintest
// with it, builds without the profile loader.
type Policy struct {
	// SkillDirs and ReadPaths are folders a read may reach without asking.
	SkillDirs []string
	ReadPaths []string
	Network   NetworkRules
	Exec      ExecRules
	Sandbox   SandboxRules
}

// NetworkRules are the hosts the profile grants.
type NetworkRules struct {
	// Allow lists host names or globs ("*.example.com") reachable without asking.
	Allow []string
}

// ExecRules are the admin's rules on commands.
type ExecRules struct {
	Rules []ExecRule
}

// ExecRule matches a program (by basename, or by the file it runs) and the
// arguments it names: host/config.ExecRule, field for field.
type ExecRule struct {
	// Action is ExecAllow, ExecAsk or ExecDeny; deny is the only hard deny
	// and stands under -y.
	Action string
	// Program is the program's basename, such as "rm".
	Program string
	// Args are arguments the command must hold: options as a set (-rf =
	// -fr = -r -f = --recursive --force), other words as a prefix of the
	// operands; empty matches any arguments.
	Args []string
	// Interactive limits the rule to starting the program's REPL: no
	// script operand, or its interactive flag (python3 -i).
	Interactive bool
}

// Exec rule actions, spelled as profiles write them.
const (
	ExecAllow = "allow"
	ExecAsk   = "ask"
	ExecDeny  = "deny"
)

// SandboxRules are the kernel sandbox settings: host/config.SandboxRules,
// field for field.
type SandboxRules struct {
	// Mode is policy.SandboxOff, policy.SandboxOn or policy.SandboxRequired; "" is on.
	Mode string
	// Read and Write are paths the call's processes may also read, write.
	Read  []string
	Write []string
	// Network is "off" for loopback only; anything else keeps the network.
	Network string
	// Pids and MemoryMB bound the tree of one command (processes and
	// threads; MiB), TmpSizeMB is the size of the session temp folder
	// (MiB); 0 for none.
	Pids, MemoryMB, TmpSizeMB int
	// UnixSockets are the Unix sockets commands may connect to (absolute,
	// resolved).
	UnixSockets []string
}

// projectDir is the workspace's folder of yagent settings
// (host/config.ProjectDir), which a write into asks.
const projectDir = ".yagent"

// SandboxMode returns the policy's sandbox mode, on when unset.
func (p *Policy) SandboxMode() string {
	if p == nil {
		return policy.SandboxOn
	}
	return policy.SandboxMode(p.Sandbox.Mode)
}

// SandboxNetwork reports whether the call's processes keep the network.
func (p *Policy) SandboxNetwork() bool {
	return p == nil || p.Sandbox.Network != policy.NetworkOff
}
