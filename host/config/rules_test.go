package config

import (
	"reflect"
	"testing"

	"github.com/yagent/yagent/policy"
)

// Every key the guard reads reaches it as its own copy, and the defaults
// agree.
func TestProfile_Rules(t *testing.T) {
	t.Parallel()
	if (*Profile)(nil).Rules() != nil {
		t.Fatal("Rules of a nil profile is not nil")
	}
	prof := &Profile{
		SkillDirs: []string{"/s"},
		ReadPaths: []string{"/r"},
		Network:   policy.NetworkRules{Allow: []string{"*.example.com"}},
		Exec:      policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecAsk, Program: "python3", Args: []string{"-c"}, Interactive: true}}},
		Sandbox:   policy.SandboxRules{Mode: policy.SandboxRequired, Read: []string{"/sr"}, Write: []string{"/sw"}, Network: policy.NetworkOff, UnixSockets: []string{"/run/s"}},
	}
	want := &policy.Rules{SkillDirs: prof.SkillDirs, ReadPaths: prof.ReadPaths, Network: prof.Network, Exec: prof.Exec, Sandbox: prof.Sandbox}
	got := prof.Rules()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Rules() = %+v, want %+v", got, want)
	}
	got.ReadPaths[0], got.Exec.Rules[0].Program, got.Sandbox.Read[0] = "x", "x", "x"
	if prof.ReadPaths[0] != "/r" || prof.Exec.Rules[0].Program != "python3" || prof.Sandbox.Read[0] != "/sr" {
		t.Fatal("the rules share their lists with the profile")
	}
	if got.SandboxMode() != prof.SandboxMode() || got.SandboxNetwork() != prof.SandboxNetwork() {
		t.Fatalf("sandbox mode %q/%v, profile says %q/%v", got.SandboxMode(), got.SandboxNetwork(), prof.SandboxMode(), prof.SandboxNetwork())
	}
	empty := (&Profile{}).Rules()
	if empty.SandboxMode() != (&Profile{}).SandboxMode() || empty.SandboxNetwork() != (&Profile{}).SandboxNetwork() {
		t.Fatalf("defaults differ: %q/%v", empty.SandboxMode(), empty.SandboxNetwork())
	}
	if ProjectDir("") != ".yagent" {
		t.Fatalf("ProjectDir = %q; the guard protects .yagent (call/guard projectDir)", ProjectDir(""))
	}
}
