package sandbox

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestForCall_CarriesTheBounds: the policy of a call holds what its
// sandbox says of the bounds, the temp folder's size and the sockets.
func TestForCall_CarriesTheBounds(t *testing.T) {
	t.Parallel()
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{Workspace: "/ws", Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn,
		Pids: 64, MemoryMB: 512, TmpSizeMB: 128, UnixSockets: []string{"/run/a.sock"}}})
	p, mode, ok := ForCall(ctx, []string{"A=1"})
	if !ok || mode != sdk.SandboxOn {
		t.Fatalf("ForCall: mode %q, ok %v", mode, ok)
	}
	if p.Pids != 64 || p.MemoryMB != 512 || p.TmpSizeMB != 128 || !slices.Equal(p.UnixSockets, []string{"/run/a.sock"}) {
		t.Errorf("policy %+v, want pids 64, memory 512 MiB, temp 128 MiB and the socket", p)
	}
}

// TestForCall_Network: what each network setting gives a command. Under
// proxy it enters the session's namespace; with no namespace from the
// host it keeps the machine's network, which counts as the namespace
// missing (a required sandbox refuses it); with no proxy at all it gets
// the empty namespace, never the machine's network.
func TestForCall_Network(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		sb       sdk.Sandbox
		network  bool
		netns    string
		required bool // CheckRequired refuses it for the namespace, whatever the machine
		env      bool // ProxyEnv names the proxy
	}{
		{name: "on", sb: sdk.Sandbox{Network: sdk.NetworkOn}, network: true},
		{name: "unset is on", sb: sdk.Sandbox{}, network: true},
		{name: "off", sb: sdk.Sandbox{Network: sdk.NetworkOff}},
		{name: "proxy in the session's namespace", sb: sdk.Sandbox{Network: sdk.NetworkProxy, Egress: &sdk.Egress{NetNS: "/proc/1/fd/7", Proxy: "127.0.0.1:41000"}},
			netns: "/proc/1/fd/7", env: true},
		{name: "proxy without a namespace", sb: sdk.Sandbox{Network: sdk.NetworkProxy, Egress: &sdk.Egress{Proxy: "127.0.0.1:41000"}},
			network: true, required: true, env: true},
		{name: "proxy without a proxy", sb: sdk.Sandbox{Network: sdk.NetworkProxy}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sb := c.sb
			sb.Mode = sdk.SandboxRequired
			p, mode, ok := ForCall(sdk.WithCall(context.Background(), sdk.CallInfo{Workspace: "/ws", Sandbox: &sb}), []string{"A=1"})
			if !ok || p.Network != c.network || p.NetNS != c.netns {
				t.Fatalf("ForCall: ok %v, network %v, netns %q; want network %v, netns %q", ok, p.Network, p.NetNS, c.network, c.netns)
			}
			err := CheckRequired(mode, p)
			var re *RequiredError
			// A cut network counts the namespace as this machine has it.
			if refused := errors.As(err, &re) && re.Missing[LayerNetNS] != ""; refused != c.required && (p.Network || c.required) {
				t.Errorf("CheckRequired: %v; want the network namespace missing: %v", err, c.required)
			}
			env := ProxyEnv(&sb)
			if named := slices.Contains(env, "HTTPS_PROXY=http://127.0.0.1:41000") && slices.Contains(env, "all_proxy=socks5h://127.0.0.1:41000") &&
				slices.Contains(env, "GIT_SSH_COMMAND="+gitSSHRefusal); named != c.env {
				t.Errorf("ProxyEnv: %q; want the proxy named: %v", env, c.env)
			}
		})
	}
}
