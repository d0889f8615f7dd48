package toolspec

import (
	"fmt"

	"github.com/yagent/yagent/sdk"
)

// Admission is how the host takes in one spec a plugin describes.
type Admission struct {
	// Spec is the spec as the host serves it: a static tool's bound by the
	// registry; an untrusted external tool's turned into exec with no roles.
	Spec sdk.Spec
	Tier Tier
	// Trusted says the host believes the declared Effect and roles.
	Trusted bool
	// Warning, when set, is logged: a pinned plugin's tool that declares
	// an unknown effect or role, and is treated as exec.
	Warning string
}

// Admit takes in spec, described by plugin of family (pinned: its binary's
// checksum is in the lock file), as the host does at load: a static tool is
// bound to the registry's spec when its own family serves it, an external
// one is Cold and, unless pinned and declaring only known words, treated as
// exec. It returns why the host skips the tool instead, "" when it serves
// it. The host's surface and sdk/plugintest both call it, so a plugin's
// test sees the skips its users will.
func Admit(spec sdk.Spec, plugin, family string, pinned bool) (Admission, string) {
	if spec.Name == "" {
		return Admission{}, "the spec has no name"
	}
	if st, ok := Lookup(spec.Name); ok {
		if st.Family == FamilyHost {
			return Admission{}, "a host-native tool; only the host serves it"
		}
		if family != st.Family {
			return Admission{}, fmt.Sprintf("a static %s tool; only the %s family's plugin may serve it, not family %q", st.Family, st.Family, family)
		}
		return Admission{Spec: st.Bind(spec), Tier: st.Tier, Trusted: true}, ""
	}
	ad := Admission{Spec: spec, Tier: Cold, Trusted: true}
	valid := spec.Effect.Valid()
	for _, r := range spec.Roles {
		valid = valid && r.Valid()
	}
	if !pinned || !valid {
		if pinned {
			ad.Warning = fmt.Sprintf("tool %s of plugin %s declares an unknown effect or role; it is treated as exec", spec.Name, plugin)
		}
		ad.Spec.Effect, ad.Spec.Roles, ad.Spec.ReadOnly = sdk.EffectExec, nil, false
		ad.Trusted = false
	}
	return ad, ""
}
