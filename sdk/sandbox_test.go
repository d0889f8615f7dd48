package sdk

import (
	"errors"
	"testing"
)

// TestSandbox_RequestProxy: a tool that sends requests itself sends them
// through the session's proxy under sandbox.network: proxy, and sends none
// when that proxy is missing (never the machine's network instead);
// otherwise it has no proxy.
func TestSandbox_RequestProxy(t *testing.T) {
	t.Parallel()
	egress := &Egress{Proxy: "127.0.0.1:4242"}
	for _, c := range []struct {
		name string
		sb   *Sandbox
		want string
		code string
	}{
		{name: "no sandbox", sb: nil},
		{name: "sandbox off", sb: &Sandbox{Mode: SandboxOff, Network: NetworkProxy, Egress: egress}},
		{name: "network on", sb: &Sandbox{Mode: SandboxOn, Network: NetworkOn}},
		{name: "proxy", sb: &Sandbox{Mode: SandboxOn, Network: NetworkProxy, Egress: egress}, want: "127.0.0.1:4242"},
		{name: "proxy missing", sb: &Sandbox{Mode: SandboxOn, Network: NetworkProxy}, code: CodeNoProxy},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.sb.RequestProxy()
			var te *ToolError
			switch {
			case c.code != "" && (!errors.As(err, &te) || te.Code != c.code):
				t.Errorf("RequestProxy = %q, %v; want the %s error", got, err, c.code)
			case c.code == "" && (err != nil || got != c.want):
				t.Errorf("RequestProxy = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
