package policy

import (
	"net/netip"
	"strings"
	"testing"
)

// TestParseIPv4_AsBrowsers: the IPv4 spellings the WHATWG URL parser
// takes, and those it refuses.
func TestParseIPv4_AsBrowsers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "2130706433": "127.0.0.1", "0x7f.1": "127.0.0.1", "0x7f000001": "127.0.0.1",
		"0177.0.0.01": "127.0.0.1", "127.1": "127.0.0.1", "10.1.65535": "10.1.255.255", "0x": "0.0.0.0",
		"1.0x": "1.0.0.0", "4294967295": "255.255.255.255", "example.com": "", "1.2.3.a": "", "0x1g": "",
		"1.2.3.4.5": "!", "4294967296": "!", "256.1.1.1": "!", "1.2.3.08": "!", "1..2": "!", "09": "!",
	} {
		a, ok, err := parseIPv4(in)
		var got string
		switch {
		case err != nil:
			got = "!"
		case ok:
			got = a.String()
		}
		if got != want {
			t.Errorf("parseIPv4(%q) = %v, %v, %v; want %q (\"\" a name, \"!\" refused)", in, a, ok, err, want)
		}
	}
}

// TestJudge_Table: deny wins over allow, a wildcard covers subdomains at
// any depth but not the name itself and never a host of this machine or
// its networks when allowing, IPs and CIDR blocks name addresses in any
// spelling, and network.unlisted decides the rest.
func TestJudge_Table(t *testing.T) {
	t.Parallel()
	r := &NetworkRules{
		Allow: []string{"example.com", "*.github.com", "8.8.8.8", "10.1.0.0/16", "localhost", "*.internal.test", "*.localhost"},
		Deny:  []string{"evil.example.com", "*.ads.github.com", "10.1.2.0/24", "169.254.169.254"},
	}
	deny := &NetworkRules{Allow: r.Allow, Deny: r.Deny, Unlisted: NetworkDeny}
	for _, c := range []struct {
		host      string
		want, unl string // the answer under unlisted ask, and under unlisted deny
	}{
		{"example.com", NetworkAllow, NetworkAllow},
		{"EXAMPLE.com.", NetworkAllow, NetworkAllow},
		{"www.example.com", NetworkAsk, NetworkDeny},
		{"evil.example.com", NetworkDeny, NetworkDeny},
		{"github.com", NetworkAsk, NetworkDeny},
		{"api.github.com", NetworkAllow, NetworkAllow},
		{"a.b.github.com", NetworkAllow, NetworkAllow},
		{"x.ads.github.com", NetworkDeny, NetworkDeny},
		{"github.com.evil.test", NetworkAsk, NetworkDeny},
		{"8.8.8.8", NetworkAllow, NetworkAllow},
		{"134744072", NetworkAllow, NetworkAllow}, // 8.8.8.8
		{"::ffff:8.8.8.8", NetworkAllow, NetworkAllow},
		{"10.1.9.9", NetworkAllow, NetworkAllow},
		{"10.1.2.3", NetworkDeny, NetworkDeny},
		{"10.2.0.1", NetworkAsk, NetworkDeny},
		{"localhost", NetworkAllow, NetworkAllow},
		{"app.localhost", NetworkAsk, NetworkDeny},
		{"127.0.0.1", NetworkAsk, NetworkDeny},
		{"169.254.169.254", NetworkDeny, NetworkDeny},
		{"0xa9.0xfe.0xa9.0xfe", NetworkDeny, NetworkDeny},
		{"fd00:ec2::254", NetworkAsk, NetworkDeny},
		{"[::1]", NetworkAsk, NetworkDeny},
		{"a.internal.test", NetworkAllow, NetworkAllow},
	} {
		h, err := ParseHost(c.host)
		if err != nil {
			t.Fatalf("ParseHost(%q): %v", c.host, err)
		}
		if d := r.Judge(h); d.Action != c.want {
			t.Errorf("Judge(%q) = %s (%s %s); want %s", c.host, d.Action, d.Entry, d.Reason, c.want)
		}
		if d := deny.Judge(h); d.Action != c.unl {
			t.Errorf("with unlisted: deny, Judge(%q) = %s (%s %s); want %s", c.host, d.Action, d.Entry, d.Reason, c.unl)
		}
	}
	var none *NetworkRules
	if d := none.Judge(Host{Name: "example.com"}); d.Action != NetworkAsk {
		t.Errorf("no rules: Judge(example.com) = %s; want ask", d.Action)
	}
}

// TestJudge_Says: a refusal names the entry and says not to go round it;
// a question about an internal host says what the host is.
func TestJudge_Says(t *testing.T) {
	t.Parallel()
	r := &NetworkRules{Deny: []string{"*.evil.test"}}
	d := r.Judge(Host{Name: "a.evil.test"})
	if d.Entry != "network.deny: *.evil.test" || !strings.Contains(d.Reason, "*.evil.test") || !strings.Contains(d.Hint, "another way") {
		t.Errorf("deny: %+v", d)
	}
	h, _ := ParseHost("0x7f.1")
	d = r.Judge(h)
	if d.Action != NetworkAsk || !strings.Contains(d.Reason, "127.0.0.1 is a loopback address") || !strings.Contains(d.Hint, "network.allow") {
		t.Errorf("loopback: %+v", d)
	}
}

// TestJudgeAddr_Resolved: a name is judged again on the address it
// resolved to: internal addresses ask (or, under unlisted deny, are
// refused) unless named by address, block or the exact name; a denied
// address is refused whatever name reached it.
func TestJudgeAddr_Resolved(t *testing.T) {
	t.Parallel()
	r := &NetworkRules{
		Allow: []string{"*.example.com", "dev.test", "192.168.7.0/24"},
		Deny:  []string{"203.0.113.9", "169.254.169.254"},
	}
	deny := &NetworkRules{Allow: r.Allow, Deny: r.Deny, Unlisted: NetworkDeny}
	for _, c := range []struct {
		host, addr string
		want, unl  string
	}{
		{"a.example.com", "93.184.215.14", NetworkAllow, NetworkAllow},
		{"a.example.com", "127.0.0.1", NetworkAsk, NetworkDeny},
		{"a.example.com", "::ffff:127.0.0.1", NetworkAsk, NetworkDeny},
		{"a.example.com", "10.0.0.5", NetworkAsk, NetworkDeny},
		{"a.example.com", "169.254.169.254", NetworkDeny, NetworkDeny},
		{"a.example.com", "203.0.113.9", NetworkDeny, NetworkDeny},
		{"a.example.com", "192.168.7.20", NetworkAllow, NetworkAllow},
		{"dev.test", "127.0.0.1", NetworkAllow, NetworkAllow},
		{"other.test", "fe80::1", NetworkAsk, NetworkDeny},
	} {
		h, _ := ParseHost(c.host)
		a := netip.MustParseAddr(c.addr)
		if d := r.JudgeAddr(h, a); d.Action != c.want {
			t.Errorf("JudgeAddr(%s, %s) = %s (%s); want %s", c.host, c.addr, d.Action, d.Reason, c.want)
		}
		if d := deny.JudgeAddr(h, a); d.Action != c.unl {
			t.Errorf("with unlisted: deny, JudgeAddr(%s, %s) = %s (%s); want %s", c.host, c.addr, d.Action, d.Reason, c.unl)
		}
	}
	h, _ := ParseHost("a.example.com")
	if d := r.JudgeAddr(h, netip.MustParseAddr("127.0.0.1")); !strings.Contains(d.Reason, "127.0.0.1 (which a.example.com resolves to) is a loopback address") {
		t.Errorf("the question does not say the name resolved to loopback: %q", d.Reason)
	}
}

// TestCheckNetworkEntry: entries the rules read pass; a URL, a path, white
// space or a broken pattern is refused with what to write instead.
func TestCheckNetworkEntry(t *testing.T) {
	t.Parallel()
	for _, e := range []string{"example.com", "*.example.com", "10.0.0.0/8", "::1", "[::1]", "fd00::/8", "api-*.example.com", "localhost"} {
		if err := CheckNetworkEntry(e); err != nil {
			t.Errorf("CheckNetworkEntry(%q) = %v; want nil", e, err)
		}
	}
	for _, e := range []string{"", " ", "https://example.com", "example.com/x", "a b", "[x", "10.0.0.0/33"} {
		if err := CheckNetworkEntry(e); err == nil {
			t.Errorf("CheckNetworkEntry(%q) = nil; want an error", e)
		}
	}
}
