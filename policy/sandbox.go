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

	// NetworkOff gives a call's processes an empty network namespace:
	// loopback only.
	NetworkOff = "off"
	// NetworkProxy gives them a network namespace of their session whose
	// only way out is the session's egress proxy, which judges each host
	// by the profile's network table.
	NetworkProxy = "proxy"
	// NetworkOn leaves them the machine's network.
	NetworkOn = "on"
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

// NetworkMode returns the network setting mode acts as: "" is on, as in a
// profile that says nothing.
func NetworkMode(mode string) string {
	if mode == "" {
		return NetworkOn
	}
	return mode
}

// NetworkRank orders the network settings by how far a command reaches
// (off < proxy < on), so a lower layer's profile can be held to the
// admin's ceiling and a project can only lower it.
func NetworkRank(mode string) int {
	switch NetworkMode(mode) {
	case NetworkOff:
		return 0
	case NetworkProxy:
		return 1
	}
	return 2
}
