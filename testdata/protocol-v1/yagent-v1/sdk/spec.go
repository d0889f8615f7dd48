package sdk

import "encoding/json"

// Effect says what a call can do to the world. The host's guard decides on
// Effect and parameter roles, never on a tool's name.
type Effect string

// The effects a Spec may declare.
const (
	EffectNone    Effect = "none"
	EffectRead    Effect = "read"
	EffectWrite   Effect = "write"
	EffectExec    Effect = "exec"
	EffectNetwork Effect = "network"
	EffectBrowser Effect = "browser"
	EffectFlow    Effect = "flow"
)

// Valid reports whether e is one of the declared effects.
func (e Effect) Valid() bool {
	switch e {
	case EffectNone, EffectRead, EffectWrite, EffectExec, EffectNetwork, EffectBrowser, EffectFlow:
		return true
	}
	return false
}

// Role names what a parameter means to the guard.
type Role string

// The parameter roles the guard understands.
const (
	RolePathRead   Role = "path_read"
	RolePathWrite  Role = "path_write"
	RoleCommand    Role = "command"
	RoleURL        Role = "url"
	RoleDangerFlag Role = "danger_flag"
)

// Valid reports whether r is one of the declared roles.
func (r Role) Valid() bool {
	switch r {
	case RolePathRead, RolePathWrite, RoleCommand, RoleURL, RoleDangerFlag:
		return true
	}
	return false
}

// Spec describes one tool to the host.
//
// For tools the host knows by name (static specs), Effect, Roles, Serial,
// ReadOnly, AlwaysAsk and Brief are taken from the host's registry whatever
// the plugin declares; only Description and InputSchema come from here.
type Spec struct {
	// Name is the tool's name as the model sees it.
	Name string `json:"name"`
	// Description is the full text the model reads.
	Description string `json:"description"`
	// Brief is one line for catalogs of deferred tools.
	Brief string `json:"brief,omitempty"`
	// InputSchema is the JSON Schema of the tool's input object.
	InputSchema json.RawMessage `json:"input_schema"`
	// Effect is what a call can do to the world.
	Effect Effect `json:"effect"`
	// Serial tools run one at a time per session and family.
	Serial bool `json:"serial,omitempty"`
	// ReadOnly tools change nothing.
	ReadOnly bool `json:"read_only,omitempty"`
	// AlwaysAsk tools ask the user before every call unless a pass applies.
	AlwaysAsk bool `json:"always_ask,omitempty"`
	// Roles maps top-level parameter names to the role the guard must see.
	Roles map[string]Role `json:"roles,omitempty"`
}
