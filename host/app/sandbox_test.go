package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/internal/sandbox"
)

func TestSandboxLine(t *testing.T) {
	t.Parallel()
	all := sandbox.Layers{LandlockABI: 7, Seccomp: true, CapDrop: true, MountNS: true, NetNS: true}
	noSeccomp := all
	noSeccomp.Seccomp = false
	noSeccomp.NetNS = false
	noSeccomp.Missing = map[string]string{sandbox.LayerSeccomp: "no seccomp here", sandbox.LayerNetNS: "no netns"}
	for _, tt := range []struct {
		name, mode, origin string
		layers             sandbox.Layers
		cgErr              error
		network            bool
		want               string
		missing            int
	}{
		{"every layer", "on", "builtin:coder", all, nil, true,
			"sandbox on: landlock ABI 7, seccomp exec rules, cgroup /cg, mount and network namespaces, capability drop", 0},
		{"off by the flag", "off", "flags", all, nil, true, "sandbox off (--sandbox): commands run with the guard's check only", 0},
		{"off by the profile", "off", "user ~/.yagent/config.yaml", all, nil, true, "sandbox off (profile, user ~/.yagent/config.yaml): commands run with the guard's check only", 0},
		{"a missing layer", "on", "", noSeccomp, nil, true,
			"sandbox on: landlock ABI 7, cgroup /cg, mount namespace, capability drop; missing: seccomp (exec rules at parse time only); commands run without them", 1},
		{"netns needed when the network is off", "required", "", noSeccomp, errors.New("no cgroup"), false,
			"missing: seccomp (exec rules at parse time only), cgroup (process groups only), network-namespace (the network stays on); sandbox: required, so commands are refused here", 3},
	} {
		layers := app.SandboxLayers(tt.layers, "/cg", tt.cgErr, tt.network)
		if got := app.SandboxLine(tt.mode, tt.origin, layers); !strings.Contains(got, tt.want) {
			t.Errorf("%s: SandboxLine = %q, want it to hold %q", tt.name, got, tt.want)
		}
		if got := len(app.SandboxMissing(layers)); got != tt.missing {
			t.Errorf("%s: %d layers missing, want %d", tt.name, got, tt.missing)
		}
	}
}
