package toolspec

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestAdmit(t *testing.T) {
	t.Parallel()
	roles := map[string]sdk.Role{"path": sdk.RolePathRead}
	tests := []struct {
		name           string
		spec           sdk.Spec
		family         string
		pinned         bool
		skip           string // a part of the reason, "" = admitted
		effect         sdk.Effect
		trusted, roles bool
		tier           Tier
		warned         bool
	}{
		{name: "no name", spec: sdk.Spec{Effect: sdk.EffectNone}, family: "x", pinned: true, skip: "no name"},
		{name: "host-native", spec: sdk.Spec{Name: AgentExit}, family: "x", pinned: true, skip: "only the host serves it"},
		{name: "static from another family", spec: sdk.Spec{Name: "read_file", Effect: sdk.EffectNone}, family: "x", pinned: true, skip: "only the fs family's plugin"},
		{name: "static from its family", spec: sdk.Spec{Name: "read_file", Effect: sdk.EffectNone}, family: FamilyFS,
			effect: sdk.EffectRead, trusted: true, roles: true, tier: Warm},
		{name: "external pinned", spec: sdk.Spec{Name: "peek", Effect: sdk.EffectRead, Roles: roles}, family: "x", pinned: true,
			effect: sdk.EffectRead, trusted: true, roles: true, tier: Cold},
		{name: "external unpinned", spec: sdk.Spec{Name: "peek", Effect: sdk.EffectRead, Roles: roles}, family: "x",
			effect: sdk.EffectExec, tier: Cold},
		{name: "external pinned, unknown effect", spec: sdk.Spec{Name: "peek", Effect: "teleport", Roles: roles}, family: "x", pinned: true,
			effect: sdk.EffectExec, tier: Cold, warned: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ad, reason := Admit(tt.spec, "p", tt.family, tt.pinned)
			if tt.skip != "" {
				if !strings.Contains(reason, tt.skip) {
					t.Fatalf("Admit(%s) skip reason %q, want it to say %q", tt.spec.Name, reason, tt.skip)
				}
				return
			}
			if reason != "" || ad.Spec.Effect != tt.effect || ad.Trusted != tt.trusted || (len(ad.Spec.Roles) > 0) != tt.roles ||
				ad.Tier != tt.tier || (ad.Warning != "") != tt.warned {
				t.Fatalf("Admit(%s) = %+v, %q", tt.spec.Name, ad, reason)
			}
		})
	}
}
