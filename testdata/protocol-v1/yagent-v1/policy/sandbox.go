package policy

// Sandbox modes (a profile's sandbox.mode, sdk.Sandbox.Mode on the wire)
// and network settings (sandbox.network), spelled as profiles write them.
const (
	// SandboxOff runs a call's processes under the guard's parse-time
	// check only.
	SandboxOff = "off"
	// SandboxOn applies every kernel layer the machine has and says which
	// are missing.
	SandboxOn = "on"
	// SandboxRequired refuses to run processes where a layer is missing.
	SandboxRequired = "required"

	NetworkOn  = "on"
	NetworkOff = "off"
)

// SandboxMode returns the mode mode acts as: "" is on, both in a profile
// that says nothing and in a sandbox sent without a mode. Only an explicit
// "off" turns the kernel layers off.
func SandboxMode(mode string) string {
	if mode == "" {
		return SandboxOn
	}
	return mode
}

// SandboxRank orders the modes by strictness (off < on < required), so a
// lower layer's profile can be held to the admin's ceiling.
func SandboxRank(mode string) int {
	switch SandboxMode(mode) {
	case SandboxOff:
		return 0
	case SandboxRequired:
		return 2
	}
	return 1
}
