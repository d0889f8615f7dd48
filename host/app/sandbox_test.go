package app_test

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
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
		network            string
		want               string
		missing            int
	}{
		{"every layer", "on", "builtin:coder", all, nil, "on",
			"sandbox on: landlock ABI 7, seccomp exec and socket rules, cgroup /cg, mount and network namespaces, capability drop", 0},
		{"off by the flag", "off", "flags", all, nil, "on", "sandbox off (--sandbox): commands run with the guard's check only", 0},
		{"off by the profile", "off", "user ~/.yagent/config.yaml", all, nil, "on", "sandbox off (profile, user ~/.yagent/config.yaml): commands run with the guard's check only", 0},
		{"a missing layer", "on", "", noSeccomp, nil, "on",
			"sandbox on: landlock ABI 7, cgroup /cg, mount namespace, capability drop; missing: seccomp (exec rules at parse time only, unix sockets unjudged); commands run without them", 1},
		{"netns needed when the network is off", "required", "", noSeccomp, errors.New("no cgroup"), "off",
			"missing: seccomp (exec rules at parse time only, unix sockets unjudged), cgroup (process groups only), network-namespace (the network stays on); sandbox: required, so commands are refused here", 3},
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

// TestSandboxBounds: each bound of the profile is active by the way this
// machine has, off where the profile sets none, or missing with why and
// what follows; the temp folder's size is the session temp folder's.
func TestSandboxBounds(t *testing.T) {
	t.Parallel()
	enf := []cgroup.Enforcement{
		{Bound: cgroup.BoundPids, Via: cgroup.ViaV2, Dir: "/cg/own/yagent.9"},
		{Bound: cgroup.BoundMemory, Why: "no memory controller here"},
		{Bound: app.BoundTmpSize, Via: "tmpfs", Dir: "/var/tmp/yagent-tmp-9"},
	}
	got := app.SandboxBounds(policy.SandboxRules{Pids: 64, MemoryMB: 512, TmpSizeMB: 100}, enf)
	want := []app.SandboxBound{
		{Key: "sandbox.pids", What: "processes 64", Value: 64, Status: app.BoundActive, How: "the cgroup v2 controller under /cg/own"},
		{Key: "sandbox.memory_mb", What: "memory 512 MiB", Value: 512, Status: app.BoundMissing,
			How: "no memory controller here; commands run without it, so one command's tree can take all the memory of the machine"},
		{Key: "sandbox.tmp_size_mb", What: "temp folder 100 MiB", Value: 100, Status: app.BoundActive,
			How: "a tmpfs of that size on each session's folder under /var/tmp/yagent-tmp-9"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("SandboxBounds =\n%+v\nwant\n%+v", got, want)
	}
	got = app.SandboxBounds(policy.SandboxRules{}, enf)
	for _, b := range got {
		if b.Status != app.BoundOff {
			t.Errorf("%s with no value: %+v, want off", b.Key, b)
		}
	}
	if got[0].How != "no bound; the cgroup v2 controller under /cg/own would set one" || got[1].How != "no bound" {
		t.Errorf("off bounds say %q and %q", got[0].How, got[1].How)
	}
	// Off Linux every bound is missing, and says why.
	for _, e := range cgroup.Enforcements() {
		if runtime.GOOS != "linux" && (e.Via != "" || !strings.Contains(e.Why, "Linux")) {
			t.Errorf("%s on %s: %+v, want it missing, saying cgroups are Linux's", e.Bound, runtime.GOOS, e)
		}
	}
}

// TestSocketLine: with seccomp user notification the line names where a
// command may connect, the profile's sockets among them, and how abstract
// sockets are held (Landlock ABI 6 or the network namespace); without it,
// that nothing is judged.
func TestSocketLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		layers  sandbox.Layers
		sockets []string
		want    []string
	}{
		{"every layer", sandbox.Layers{Seccomp: true, LandlockABI: 7}, nil,
			[]string{"each connect judged by the supervisor", "(sandbox.unix_sockets names none)", "abstract sockets only its own (Landlock ABI 6 scoping)", "datagram sockets refused"}},
		{"sockets the admin exposes", sandbox.Layers{Seccomp: true, LandlockABI: 6}, []string{"/run/user/1000/ssh-agent.sock", "/run/docker.sock"},
			[]string{"sandbox.unix_sockets: /run/user/1000/ssh-agent.sock, /run/docker.sock;"}},
		{"older Landlock", sandbox.Layers{Seccomp: true, LandlockABI: 5}, nil,
			[]string{"abstract sockets any in its network namespace, the machine's unless sandbox.network is off"}},
		{"no seccomp", sandbox.Layers{LandlockABI: 7}, []string{"/run/docker.sock"},
			[]string{"not judged: without seccomp user notification a command connects to any unix socket the user can reach"}},
	} {
		got := app.SocketLine(tt.layers, tt.sockets)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: SocketLine = %q, want it to hold %q", tt.name, got, w)
			}
		}
	}
}
