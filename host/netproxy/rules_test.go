package netproxy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/policy"
)

// TestRules: the proxy judged by the profile's network table. A denied
// name is refused before it is looked up; a name the table allows by a
// wildcard but which resolves to loopback is judged as loopback (the DNS
// answer cannot open this machine); an exact entry names it; an unlisted
// host goes to Ask, and without Ask is refused with what would allow it.
func TestRules(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	lo := echo.addr.Addr()
	res := newResolver(map[string][]netip.Addr{
		"denied.test":   {lo},
		"rebind.test":   {lo},
		"pinned.test":   {lo},
		"unlisted.test": {lo},
	})
	network := &policy.NetworkRules{
		Allow: []string{"*.test", "pinned.test"},
		Deny:  []string{"denied.test"},
	}
	var asked []string
	for _, c := range []struct {
		name   string
		host   string
		ask    func(context.Context, netproxy.Target, policy.NetDecision) error
		status int
		body   []string // substrings of the 403's body
		lookup bool     // the name was looked up
	}{
		{name: "deny before lookup", host: "denied.test", status: http.StatusForbidden,
			body: []string{"network.deny entry denied.test", "do not try to reach it another way"}},
		{name: "wildcard does not open loopback", host: "rebind.test", status: http.StatusForbidden, lookup: true,
			body: []string{"127.0.0.1 (which rebind.test resolves to) is a loopback address", "no one can be asked", "add 127.0.0.1 itself to network.allow"}},
		{name: "exact entry names it", host: "pinned.test", status: http.StatusOK, lookup: true},
		{name: "ask approves", host: "rebind.test", status: http.StatusOK, lookup: true,
			ask: func(_ context.Context, t netproxy.Target, d policy.NetDecision) error {
				asked = append(asked, t.HostPort()+": "+d.Reason)
				return nil
			}},
		{name: "ask refuses", host: "rebind.test", status: http.StatusForbidden, lookup: true, body: []string{"the user said no"},
			ask: func(context.Context, netproxy.Target, policy.NetDecision) error {
				return &netproxy.Refusal{Message: "the user said no"}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := res.count(c.host)
			_, addr := startProxy(t, netproxy.Options{Decider: &netproxy.Rules{Network: network, Ask: c.ask}, Resolver: res})
			resp, conn, br := connect(t, addr, fmt.Sprintf("%s:%d", c.host, echo.addr.Port()))
			if resp.StatusCode != c.status {
				body := "a tunnel" // a 200's body is the tunnel: reading it would wait for ever
				if resp.StatusCode != http.StatusOK {
					body = readBody(t, resp)
				}
				t.Fatalf("CONNECT %s: status %d, want %d (%s)", c.host, resp.StatusCode, c.status, body)
			}
			if c.status == http.StatusOK {
				roundTrip(t, conn, br, "ping")
			} else {
				body := readBody(t, resp)
				for _, w := range c.body {
					if !strings.Contains(body, w) {
						t.Errorf("refusal %q does not say %q", body, w)
					}
				}
			}
			if looked := res.count(c.host) > before; looked != c.lookup {
				t.Errorf("%s looked up: %v, want %v", c.host, looked, c.lookup)
			}
		})
	}
	if want := fmt.Sprintf("rebind.test:%d: 127.0.0.1 (which rebind.test resolves to) is a loopback address, which the profile does not name", echo.addr.Port()); len(asked) != 1 || asked[0] != want {
		t.Errorf("questions: got %q, want [%q]", asked, want)
	}
}

// TestRules_Addrs: of a name's addresses only those the table lets through
// are dialed; the public one stays when the name also resolves to a
// private one.
func TestRules_Addrs(t *testing.T) {
	t.Parallel()
	r := &netproxy.Rules{Network: &policy.NetworkRules{Allow: []string{"*.test"}, Deny: []string{"203.0.113.7"}}}
	tg := netproxy.Target{Host: "mixed.test", Port: 443, Proto: netproxy.ProtoConnect}
	pub, priv, denied := netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("203.0.113.7")
	got, err := r.Addrs(t.Context(), tg, []netip.Addr{priv, pub, denied})
	if err != nil || len(got) != 1 || got[0] != pub {
		t.Errorf("Addrs: got %v, %v; want [%v]", got, err, pub)
	}
	if _, err := r.Addrs(t.Context(), tg, []netip.Addr{denied}); err == nil || !strings.Contains(err.Error(), "network.deny entry 203.0.113.7") {
		t.Errorf("Addrs of a denied address alone: %v, want the deny entry named", err)
	}
}
