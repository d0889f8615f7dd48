package netproxy_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/policy"
)

// TestPages: a browser's requests are never asked about. What the table
// allows or denies it decides; what it leaves open is connected when it is
// the origin of an approved navigation, refused when it is of this machine
// or its networks (by name, by address, or by what a public name resolves
// to), and otherwise connected (a page's public subresources); under
// unlisted: deny the table refuses those itself.
func TestPages(t *testing.T) {
	t.Parallel()
	pub, lo, meta := netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254")
	open := &policy.NetworkRules{Allow: []string{"*.example.com", "dev.localhost"}, Deny: []string{"tracker.example"}}
	closed := &policy.NetworkRules{Allow: open.Allow, Deny: open.Deny, Unlisted: policy.NetworkDeny}
	approved := func(t netproxy.Target) bool { return t.HostPort() == "127.0.0.1:3000" }
	for _, c := range []struct {
		name  string
		rules *policy.NetworkRules
		host  string
		port  int
		addrs []netip.Addr
		err   string // "" = connected, to addrs
	}{
		{name: "allowed", rules: open, host: "cdn.example.com", addrs: []netip.Addr{pub}},
		{name: "denied", rules: open, host: "tracker.example", err: "network.deny entry tracker.example"},
		{name: "public unlisted", rules: open, host: "fonts.other.test", addrs: []netip.Addr{pub}},
		{name: "public unlisted under deny", rules: closed, host: "fonts.other.test", err: "refuses unlisted hosts"},
		{name: "loopback address", rules: open, host: "127.0.0.1", port: 8080, addrs: []netip.Addr{lo}, err: "the request to 127.0.0.1:8080"},
		{name: "loopback name", rules: open, host: "localhost", err: "localhost is a loopback name"},
		{name: "metadata", rules: open, host: "169.254.169.254", addrs: []netip.Addr{meta}, err: "a cloud metadata address"},
		{name: "public name resolving to loopback", rules: open, host: "rebind.other.test", addrs: []netip.Addr{lo}, err: "127.0.0.1 (which rebind.other.test resolves to) is a loopback address"},
		{name: "wildcard name resolving to loopback", rules: open, host: "rebind.example.com", addrs: []netip.Addr{lo}, err: "the request to rebind.example.com:443"},
		{name: "named exactly", rules: open, host: "dev.localhost", addrs: []netip.Addr{lo}},
		{name: "approved navigation's origin", rules: open, host: "127.0.0.1", port: 3000, addrs: []netip.Addr{lo}},
		{name: "approved origin, other port", rules: open, host: "127.0.0.1", port: 3001, addrs: []netip.Addr{lo}, err: "the request to 127.0.0.1:3001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &netproxy.Pages{Network: c.rules, Approved: approved}
			port := c.port
			if port == 0 {
				port = 443
			}
			tg := netproxy.Target{Host: c.host, Port: port, Proto: netproxy.ProtoConnect}
			err := p.Name(t.Context(), tg)
			var got []netip.Addr
			if err == nil && c.addrs != nil {
				got, err = p.Addrs(t.Context(), tg, c.addrs)
			}
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err == "" && len(got) != len(c.addrs):
				t.Fatalf("connects to %v, want %v", got, c.addrs)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("got %v, want a refusal saying %q", err, c.err)
			case c.err != "" && strings.Contains(err.Error(), "the request to") && !strings.Contains(err.Error(), "Do not try to reach it another way"):
				t.Errorf("the refusal %q does not tell the model to stop", err)
			}
		})
	}
}

// TestPages_Audit: through the proxy, a page's refused request is a 403
// naming the rule, and each connection's line says who answered for what
// the table left open (the approved navigation, or the page rule).
func TestPages_Audit(t *testing.T) {
	t.Parallel()
	echo := newEcho(t)
	rec := newRecorder()
	port := echo.addr.Port()
	res := newResolver(map[string][]netip.Addr{"app.localhost": {echo.addr.Addr()}})
	pages := &netproxy.Pages{Approved: func(t netproxy.Target) bool { return t.Host == "app.localhost" }}
	_, addr := startProxy(t, netproxy.Options{Decider: pages, Resolver: res, Record: rec.record})

	resp, conn, br := connect(t, addr, fmt.Sprintf("app.localhost:%d", port))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT to the approved origin: %d %s", resp.StatusCode, readBody(t, resp))
	}
	roundTrip(t, conn, br, "ping")
	conn.Close()
	if ev := rec.next(t); !ev.Allowed || ev.Verdict.Answer == nil || ev.Verdict.Answer.By != netproxy.ByNavigation {
		t.Errorf("the approved origin's line: %+v, want allowed by %q", ev, netproxy.ByNavigation)
	}

	resp, conn, _ = connect(t, addr, fmt.Sprintf("127.0.0.1:%d", port))
	defer conn.Close()
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "a page or web_fetch reaches such a host only when the profile names it") {
		t.Errorf("CONNECT 127.0.0.1 from a page: %d %q, want 403 with the page rule", resp.StatusCode, body)
	}
	if ev := rec.next(t); ev.Allowed || ev.Verdict.Decision != policy.NetworkAsk || ev.Verdict.Answer == nil || ev.Verdict.Answer.By != netproxy.ByPage || ev.Verdict.Answer.Approved {
		t.Errorf("the refused request's line: %+v, want the table's ask refused by %q", ev, netproxy.ByPage)
	}
}
