package fromconfig

import (
	"reflect"
	"testing"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/guard"
	"github.com/yagent/yagent/policy"
)

// The guard spells the profile's words as host/config does.
func TestPolicy_SpellsAsConfig(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{
		{guard.ExecAllow, config.ExecAllow}, {guard.ExecAsk, config.ExecAsk}, {guard.ExecDeny, config.ExecDeny},
		{policy.SandboxOff, policy.SandboxOff}, {policy.SandboxOn, policy.SandboxOn},
		{policy.SandboxRequired, policy.SandboxRequired}, {policy.NetworkOff, policy.NetworkOff},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("guard spells %q, config %q", p[0], p[1])
		}
	}
}

// Every key the guard reads reaches it, and the defaults agree.
func TestPolicy_CarriesEveryKey(t *testing.T) {
	t.Parallel()
	if Policy(nil) != nil {
		t.Fatal("Policy(nil) is not nil")
	}
	prof := &config.Profile{
		SkillDirs: []string{"/s"},
		ReadPaths: []string{"/r"},
		Network:   config.NetworkRules{Allow: []string{"*.example.com"}},
		Exec:      config.ExecRules{Rules: []config.ExecRule{{Action: config.ExecAsk, Program: "python3", Args: []string{"-c"}, Interactive: true}}},
		Sandbox:   config.SandboxRules{Mode: policy.SandboxRequired, Read: []string{"/sr"}, Write: []string{"/sw"}, Network: policy.NetworkOff},
	}
	want := &guard.Policy{
		SkillDirs: []string{"/s"},
		ReadPaths: []string{"/r"},
		Network:   guard.NetworkRules{Allow: []string{"*.example.com"}},
		Exec:      guard.ExecRules{Rules: []guard.ExecRule{{Action: guard.ExecAsk, Program: "python3", Args: []string{"-c"}, Interactive: true}}},
		Sandbox:   guard.SandboxRules{Mode: policy.SandboxRequired, Read: []string{"/sr"}, Write: []string{"/sw"}, Network: policy.NetworkOff},
	}
	got := Policy(prof)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Policy(profile) = %+v, want %+v", got, want)
	}
	if got.SandboxMode() != prof.SandboxMode() || got.SandboxNetwork() != prof.SandboxNetwork() {
		t.Fatalf("sandbox mode %q/%v, profile says %q/%v", got.SandboxMode(), got.SandboxNetwork(), prof.SandboxMode(), prof.SandboxNetwork())
	}
	empty := Policy(&config.Profile{})
	if empty.SandboxMode() != (&config.Profile{}).SandboxMode() || empty.SandboxNetwork() != (&config.Profile{}).SandboxNetwork() {
		t.Fatalf("defaults differ: %q/%v", empty.SandboxMode(), empty.SandboxNetwork())
	}
	if config.ProjectDir("") != ".yagent" {
		t.Fatalf("config.ProjectDir = %q; the guard protects .yagent (host/guard projectDir)", config.ProjectDir(""))
	}
}
