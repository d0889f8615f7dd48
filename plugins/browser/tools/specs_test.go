package tools

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// describedSpecs returns the browser tools' specs as the host receives
// them over gRPC, by name.
func describedSpecs(t *testing.T) map[string]sdk.Spec {
	t.Helper()
	c := plugintest.Start(t, sdk.Plugin{Name: "browser", Version: Version, Tools: All(session.NewManager(session.Options{}))}, nil)
	desc, err := c.Describe(context.Background())
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	out := map[string]sdk.Spec{}
	for _, s := range desc.Specs {
		out[s.Name] = s
	}
	return out
}

// TestBrowserSpecsMatchRegistry holds the plugin's specs to the host's
// registry: the same fourteen names, and for each the registry's Effect,
// Serial, ReadOnly, AlwaysAsk, roles and brief. The registry wins at run
// time anyway; a plugin that disagrees with it is a plugin whose own
// tests and callers see another tool than the model does.
func TestBrowserSpecsMatchRegistry(t *testing.T) {
	t.Parallel()
	registry := map[string]toolspec.Static{}
	for _, s := range toolspec.OfFamily(toolspec.FamilyBrowser) {
		registry[s.Name] = s
	}
	if len(registry) != 14 {
		t.Fatalf("the registry names %d browser tools, want 14: %v", len(registry), slices.Sorted(maps.Keys(registry)))
	}
	described := describedSpecs(t)
	local := map[string]sdk.Spec{}
	for _, tool := range All(nil) {
		local[tool.Spec().Name] = tool.Spec()
	}
	for _, specs := range []struct {
		from  string
		specs map[string]sdk.Spec
	}{{"the tools", local}, {"Describe over gRPC", described}} {
		if got, want := slices.Sorted(maps.Keys(specs.specs)), slices.Sorted(maps.Keys(registry)); !slices.Equal(got, want) {
			t.Fatalf("%s: tools %v, registry %v", specs.from, got, want)
		}
		for name, st := range registry {
			got := specs.specs[name]
			switch {
			case got.Effect != st.Effect:
				t.Errorf("%s: %s Effect %q, registry %q", specs.from, name, got.Effect, st.Effect)
			case got.Serial != st.Serial:
				t.Errorf("%s: %s Serial %v, registry %v", specs.from, name, got.Serial, st.Serial)
			case got.ReadOnly != st.ReadOnly:
				t.Errorf("%s: %s ReadOnly %v, registry %v", specs.from, name, got.ReadOnly, st.ReadOnly)
			case got.AlwaysAsk != st.AlwaysAsk:
				t.Errorf("%s: %s AlwaysAsk %v, registry %v", specs.from, name, got.AlwaysAsk, st.AlwaysAsk)
			case !maps.Equal(got.Roles, st.Roles):
				t.Errorf("%s: %s roles %v, registry %v", specs.from, name, got.Roles, st.Roles)
			case got.Brief != st.Brief:
				t.Errorf("%s: %s brief %q, registry %q", specs.from, name, got.Brief, st.Brief)
			case got.Description == "":
				t.Errorf("%s: %s has no description", specs.from, name)
			}
		}
	}
}

// TestBrowserToolsAreNeverReadOnly pins the browser's nature: every tool
// drives a live page, so none is ReadOnly (a read-only profile must not
// get them by that flag), all are Serial with Effect browser, and only
// browser_evaluate always asks.
func TestBrowserToolsAreNeverReadOnly(t *testing.T) {
	t.Parallel()
	tools := All(nil)
	if len(tools) != 14 {
		t.Fatalf("%d browser tools, want 14", len(tools))
	}
	for _, tool := range tools {
		s := tool.Spec()
		if s.ReadOnly {
			t.Errorf("%s is ReadOnly; no browser tool may be", s.Name)
		}
		if !s.Serial || s.Effect != sdk.EffectBrowser {
			t.Errorf("%s: Serial %v, Effect %q; every browser tool is Serial with Effect browser", s.Name, s.Serial, s.Effect)
		}
		if s.AlwaysAsk != (s.Name == EvaluateName) {
			t.Errorf("%s: AlwaysAsk %v; only %s always asks", s.Name, s.AlwaysAsk, EvaluateName)
		}
	}
	for _, st := range toolspec.OfFamily(toolspec.FamilyBrowser) {
		if st.ReadOnly {
			t.Errorf("the registry marks %s ReadOnly", st.Name)
		}
	}
}
