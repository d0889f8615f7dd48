package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
)

// TestTempOver: the session's folder stands for the machine's temp folders
// only with the sandbox on and a mount namespace, and never for one that
// holds the workspace, the home folder or a granted root.
func TestTempOver(t *testing.T) {
	ns := sandbox.Layers{MountNS: true}
	if over, notes := TempOver(policy.SandboxOff, ns, nil); over != nil || !strings.Contains(strings.Join(notes, ";"), "off") {
		t.Errorf("sandbox off: %v %v, want nothing bound and why", over, notes)
	}
	none := sandbox.Layers{Missing: map[string]string{sandbox.LayerMountNS: "no namespaces in this pod"}}
	if over, notes := TempOver(policy.SandboxOn, none, nil); over != nil || !strings.Contains(strings.Join(notes, ";"), "no namespaces in this pod") {
		t.Errorf("no mount namespace: %v %v, want nothing bound and why", over, notes)
	}
	over, _ := TempOver(policy.SandboxRequired, ns, []string{"/home/u/ws", "/home/u"})
	for _, want := range []string{"/tmp", "/var/tmp"} {
		if !slices.Contains(over, want) {
			t.Errorf("over %v: want %s", over, want)
		}
	}
	over, notes := TempOver(policy.SandboxOn, ns, []string{"/var/tmp/proj/ws", "/tmp"})
	if slices.Contains(over, "/var/tmp") || slices.Contains(over, "/tmp") {
		t.Errorf("over %v: a temp folder that holds the workspace or the home is bound", over)
	}
	if !strings.Contains(strings.Join(notes, ";"), "/var/tmp holds /var/tmp/proj/ws") {
		t.Errorf("notes %v: want why /var/tmp stays the machine's", notes)
	}
	prof := &config.Profile{Sandbox: policy.SandboxRules{Read: []string{"/srv/data"}, Write: []string{"/tmp/out"}}}
	keep := tempKeep("/w", "/home/u", []string{"/opt/skills"}, prof, []string{"GOCACHE=/tmp/gocache", "GOPATH=/a:/b"})
	for _, want := range []string{"/w", "/home/u", "/opt/skills", "/srv/data", "/tmp/out", "/tmp/gocache", "/a", "/b"} {
		if !slices.Contains(keep, want) {
			t.Errorf("tempKeep %v: want %s kept visible", keep, want)
		}
	}
}
