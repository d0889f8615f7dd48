package surface

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/sdk"
)

func plugSpec(name string, effect sdk.Effect, roles map[string]sdk.Role) sdk.Spec {
	return sdk.Spec{Name: name, Description: "Plugin's " + name + ".", InputSchema: schemaOf(80), Effect: effect, Roles: roles}
}

func TestNew_BindsStaticSpecsToTheirFamily(t *testing.T) {
	t.Parallel()
	s, err := New([]Source{
		{Plugin: "fs", Family: toolspec.FamilyFS, Specs: []sdk.Spec{
			plugSpec("read_file", sdk.EffectNone, nil), // the registry's Effect and roles win
		}, Exec: echoExec("fs")},
		{Plugin: "impostor", Family: "impostor", Pinned: true, Specs: []sdk.Spec{
			plugSpec("write_file", sdk.EffectNone, nil), // a static name from the wrong family
			plugSpec(toolspec.AgentExit, sdk.EffectFlow, nil),
		}, Exec: echoExec("impostor")},
		{Plugin: "browser", Family: toolspec.FamilyBrowser, Specs: []sdk.Spec{plugSpec("browser_click", sdk.EffectNone, nil)}, Exec: echoExec("b")},
	}, opts(&config.Profile{Deferred: config.DeferredOff}))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := s.Lookup("read_file")
	st, _ := toolspec.Lookup("read_file")
	if !ok || a.Spec().Effect != st.Effect || a.Spec().Roles["path"] != sdk.RolePathRead || a.Tier() != st.Tier || a.Family() != toolspec.FamilyFS {
		t.Fatalf("read_file bound as %+v (tier %v)", a.Spec(), a.Tier())
	}
	if !s.Serial("browser_click") {
		t.Fatal("browser_click must be Serial from the registry")
	}
	if _, ok := s.Lookup("write_file"); ok {
		t.Fatal("write_file served by a plugin of another family")
	}
	sk := s.Skipped()
	if len(sk) != 2 || sk[0].Tool != "write_file" || sk[0].Plugin != "impostor" || !strings.Contains(sk[0].Reason, "only the fs family") ||
		sk[1].Tool != toolspec.AgentExit || !strings.Contains(sk[1].Reason, "host") {
		t.Fatalf("Skipped() = %+v", sk)
	}
	if a, _ := s.Lookup(toolspec.AgentExit); a.Family() != toolspec.FamilyHost {
		t.Fatal("agent_exit must be the host's")
	}
}

func TestNew_ExternalSpecs(t *testing.T) {
	t.Parallel()
	roles := map[string]sdk.Role{"x": sdk.RolePathRead}
	s, err := New([]Source{
		{Plugin: "loose", Family: "loose", Specs: []sdk.Spec{plugSpec("ext_loose", sdk.EffectRead, roles)}, Exec: echoExec("l")},
		{Plugin: "pinned", Family: "pinned", Pinned: true, Specs: []sdk.Spec{
			plugSpec("ext_pinned", sdk.EffectRead, roles),
			plugSpec("ext_loose", sdk.EffectNone, nil), // duplicate: first wins
			plugSpec("ext_bad_effect", "teleport", nil),
		}, Exec: echoExec("p")},
	}, opts(&config.Profile{Deferred: config.DeferredOff}))
	if err != nil {
		t.Fatal(err)
	}
	loose, _ := s.Lookup("ext_loose")
	if loose.Spec().Effect != sdk.EffectExec || loose.Spec().Roles != nil || loose.Trusted() || loose.Family() != "loose" {
		t.Fatalf("unpinned external = %+v trusted=%v; want exec, no roles, untrusted", loose.Spec(), loose.Trusted())
	}
	pinned, _ := s.Lookup("ext_pinned")
	if pinned.Spec().Effect != sdk.EffectRead || pinned.Spec().Roles["x"] != sdk.RolePathRead || !pinned.Trusted() {
		t.Fatalf("pinned external = %+v trusted=%v", pinned.Spec(), pinned.Trusted())
	}
	if bad, _ := s.Lookup("ext_bad_effect"); bad.Spec().Effect != sdk.EffectExec || bad.Trusted() {
		t.Fatalf("an invalid effect must fall back to untrusted exec: %+v", bad.Spec())
	}
	for _, d := range s.All() {
		if strings.HasPrefix(d.Name, "ext_") && d.Tier != toolspec.Cold {
			t.Errorf("%s is %v; external tools are always cold", d.Name, d.Tier)
		}
	}
	if sk := s.Skipped(); len(sk) != 1 || sk[0].Tool != "ext_loose" || sk[0].Plugin != "pinned" {
		t.Fatalf("Skipped() = %+v", sk)
	}
	if w := strings.Join(s.Warnings(), "\n"); !strings.Contains(w, "ext_bad_effect") {
		t.Fatalf("Warnings() = %q; want the bad effect", w)
	}
	// A profile cannot re-tier an external tool: it is refused, as the
	// same profile in a file is.
	_, err = New([]Source{{Plugin: "pinned", Family: "pinned", Pinned: true, Specs: []sdk.Spec{plugSpec("ext_pinned", sdk.EffectRead, roles)}, Exec: echoExec("p")}},
		opts(&config.Profile{Tiers: map[string]string{"ext_pinned": "hot"}}))
	if err == nil || !strings.Contains(err.Error(), "ext_pinned") {
		t.Fatalf("New with an external tool's tier: err = %v, want one naming ext_pinned", err)
	}
}

func TestNew_UnpinnedToolAsksThroughTheCentralGuard(t *testing.T) {
	t.Parallel()
	// No Guard in the options: the surface attaches the workspace guard itself.
	s, err := New([]Source{{Plugin: "loose", Family: "loose", Specs: []sdk.Spec{plugSpec("ext_loose", sdk.EffectNone, nil)}, Exec: echoExec("l")}},
		Options{Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Call(t.Context(), session.New("s"), "ext_loose", json.RawMessage(`{}`))
	if res.Code != sdk.CodeNeedsAuth || !strings.Contains(res.Text, "unpinned") {
		t.Fatalf("Call = %s %q; want needs_auth naming the unpinned plugin", res.Code, res.Text)
	}
	y, _ := New([]Source{{Plugin: "loose", Family: "loose", Specs: []sdk.Spec{plugSpec("ext_loose", sdk.EffectNone, nil)}, Exec: echoExec("l")}},
		Options{Workspace: t.TempDir(), Logger: quiet, Yolo: true})
	if res := y.Call(t.Context(), session.New("s"), "ext_loose", json.RawMessage(`{}`)); res.IsError() {
		t.Fatalf("under -y: %s %s", res.Code, res.Text)
	}
}

func TestNew_ProfileFilters(t *testing.T) {
	t.Parallel()
	src := func(fam string, names ...string) Source {
		var specs []sdk.Spec
		for _, n := range names {
			specs = append(specs, plugSpec(n, sdk.EffectNone, nil))
		}
		return Source{Plugin: fam, Family: fam, Specs: specs, Exec: echoExec(fam)}
	}
	sources := []Source{
		src(toolspec.FamilyFS, "read_file", "write_file", "list_dir"),
		src(toolspec.FamilyShell, "run_bash"),
		src("custom", "custom_tool"),
	}
	for _, tc := range []struct {
		name string
		prof config.Profile
		want []string
	}{
		{"families", config.Profile{Families: []string{toolspec.FamilyFS}},
			[]string{toolspec.AgentExit, toolspec.AskUserForHelp, "custom_tool", "list_dir", "read_file", "write_file"}},
		{"grant keeps host tools", config.Profile{Grant: []string{"read_*", "list_*"}},
			[]string{toolspec.AgentExit, toolspec.AskUserForHelp, "list_dir", "read_file"}},
		{"deny wins", config.Profile{Grant: []string{"*_file"}, Deny: []string{"write_*", toolspec.AskUserForHelp}},
			[]string{toolspec.AgentExit, "read_file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.prof
			p.Deferred = config.DeferredOff
			s, err := New(sources, opts(&p))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(s.All()); !slices.Equal(got, tc.want) {
				t.Fatalf("All() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNew_ProfileTiers(t *testing.T) {
	t.Parallel()
	fs := []Source{{Plugin: "fs", Family: toolspec.FamilyFS, Specs: []sdk.Spec{plugSpec("list_dir", sdk.EffectNone, nil), plugSpec("read_file", sdk.EffectNone, nil)}, Exec: echoExec("fs")}}
	s, err := New(fs, opts(&config.Profile{Deferred: config.DeferredOn, Tiers: map[string]string{"list_dir": "cold", "read_file": "hot"}}))
	if err != nil {
		t.Fatal(err)
	}
	tiers := map[string]toolspec.Tier{}
	for _, d := range s.All() {
		tiers[d.Name] = d.Tier
	}
	if tiers["list_dir"] != toolspec.Cold || tiers["read_file"] != toolspec.Hot || tiers[toolspec.AgentExit] != toolspec.Hot {
		t.Fatalf("tiers = %v; want list_dir cold, read_file hot, agent_exit hot", tiers)
	}
	// A host tool is always hot: a profile built in code that re-tiers
	// one is refused as the same profile in a file is.
	_, err = New(fs, opts(&config.Profile{Tiers: map[string]string{toolspec.AgentExit: "cold"}}))
	if err == nil || !strings.Contains(err.Error(), toolspec.AgentExit) {
		t.Fatalf("New with a host tool's tier: err = %v, want one naming %s", err, toolspec.AgentExit)
	}
}

func TestNew_BadProfile(t *testing.T) {
	t.Parallel()
	for _, p := range []config.Profile{
		{Name: "p", Deferred: "sometimes"},
		{Name: "p", Grant: []string{"[bad"}},
		{Name: "p", Tiers: map[string]string{"read_file": "lukewarm"}},
	} {
		if _, err := New(nil, opts(&p)); err == nil {
			t.Errorf("New with profile %+v: want an error", p)
		}
	}
}
