package parity

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// TestNetworkParity: one table of hosts, one profile, the same answer
// (allow, ask or deny) whether web_fetch or the browser names the host
// (the guard), a command connects to it (the session's proxy, before any
// lookup) or a page requests it (the proxy for pages, where the guard's
// question on the navigation is the ask). The proxy's second look, at the resolved address, is
// TestRules' (host/netproxy).
func TestNetworkParity(t *testing.T) {
	t.Parallel()
	rules := policy.NetworkRules{
		Allow: []string{"*.example.com", "pkg.example.org", "127.0.0.1", "10.1.0.0/16", "dev.localhost"},
		Deny:  []string{"evil.example.com", "169.254.169.254", "*.tracker.example"},
	}
	closed := rules
	closed.Unlisted = policy.NetworkDeny
	cases := []struct {
		host         string
		open, closed adapter.Action // under unlisted: ask, and unlisted: deny
	}{
		{"a.example.com", adapter.Allow, adapter.Allow},
		{"x.y.example.com", adapter.Allow, adapter.Allow},
		{"example.com", adapter.Ask, adapter.Deny},
		{"pkg.example.org", adapter.Allow, adapter.Allow},
		{"other.example.org", adapter.Ask, adapter.Deny},
		{"evil.example.com", adapter.Deny, adapter.Deny},
		{"a.tracker.example", adapter.Deny, adapter.Deny},
		{"169.254.169.254", adapter.Deny, adapter.Deny},
		{"127.0.0.1", adapter.Allow, adapter.Allow},
		{"127.0.0.2", adapter.Ask, adapter.Deny},
		{"::1", adapter.Ask, adapter.Deny},
		{"localhost", adapter.Ask, adapter.Deny},
		{"dev.localhost", adapter.Allow, adapter.Allow},
		{"10.1.2.3", adapter.Allow, adapter.Allow},
		{"10.2.0.1", adapter.Ask, adapter.Deny},
		{"192.168.1.1", adapter.Ask, adapter.Deny},
		{"8.8.8.8", adapter.Ask, adapter.Deny},
		{"fd00:ec2::254", adapter.Ask, adapter.Deny},
		{"xn--bcher-kva.example.com", adapter.Allow, adapter.Allow},
	}
	if len(cases) < 15 {
		t.Fatal("the table is too small to mean anything")
	}
	specs := []sdk.Spec{spec(t, "web_fetch"), spec(t, "browser_navigate")}
	for _, prof := range []struct {
		rules policy.NetworkRules
		want  func(i int) adapter.Action
	}{
		{rules, func(i int) adapter.Action { return cases[i].open }},
		{closed, func(i int) adapter.Action { return cases[i].closed }},
	} {
		g := guard.New(guard.Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: &policy.Rules{Network: prof.rules}})
		for i, c := range cases {
			want := prof.want(i)
			u := "https://" + c.host + "/x"
			if a, err := netip.ParseAddr(c.host); err == nil && a.Is6() {
				u = "https://[" + c.host + "]/x"
			}
			for _, sp := range specs {
				d := g.Check(context.Background(), adapter.GuardRequest{Spec: sp, Args: map[string]any{"url": u}, Session: session.New("s"), Trusted: true})
				if d.Action != want {
					t.Errorf("unlisted %q: %s %s = %v (%s), want %v", prof.rules.Unlisted, sp.Name, u, d.Action, d.Reason, want)
				}
			}
			if got := proxyAnswer(t, &prof.rules, c.host); got != want {
				t.Errorf("unlisted %q: a command's connection to %s = %v, want %v", prof.rules.Unlisted, c.host, got, want)
			}
			// The browser's requests: what the table allows or denies is
			// so for a page too, whether or not a navigation to the host
			// was approved; what it asks about was asked by the guard, and
			// a page reaches it once the navigation was approved.
			for _, approved := range []bool{false, true} {
				pw := want
				if want == adapter.Ask && approved {
					pw = adapter.Allow
				}
				if got := pageAnswer(t, &prof.rules, c.host, approved); pw != adapter.Ask && got != pw {
					t.Errorf("unlisted %q: a page's request to %s (navigation approved: %v) = %v, want %v", prof.rules.Unlisted, c.host, approved, got, pw)
				}
			}
		}
	}
}

// proxyAnswer is the session proxy's answer for a connection to host:443
// before any lookup: allow, ask (its Ask was called) or deny.
func proxyAnswer(t *testing.T, rules *policy.NetworkRules, host string) adapter.Action {
	t.Helper()
	asked := false
	r := &netproxy.Rules{Network: rules, Ask: func(context.Context, netproxy.Target, policy.NetDecision) error {
		asked = true
		return errors.New("declined")
	}}
	err := r.Name(context.Background(), netproxy.Target{Host: host, Port: 443, Proto: netproxy.ProtoConnect})
	switch {
	case err == nil:
		return adapter.Allow
	case asked:
		return adapter.Ask
	}
	var ref *netproxy.Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("%s:443: %v is no refusal", host, err)
	}
	return adapter.Deny
}

// pageAnswer is the session's proxy for pages' answer for a request to
// host:443 before any lookup: allow or deny (it never asks); approved says
// a navigation to that origin was approved.
func pageAnswer(t *testing.T, rules *policy.NetworkRules, host string, approved bool) adapter.Action {
	t.Helper()
	p := &netproxy.Pages{Network: rules, Approved: func(netproxy.Target) bool { return approved }}
	err := p.Name(context.Background(), netproxy.Target{Host: host, Port: 443, Proto: netproxy.ProtoConnect})
	if err == nil {
		return adapter.Allow
	}
	var ref *netproxy.Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("%s:443: %v is no refusal", host, err)
	}
	return adapter.Deny
}

func spec(t *testing.T, name string) sdk.Spec {
	t.Helper()
	st, ok := toolspec.Lookup(name)
	if !ok {
		t.Fatalf("no static spec %s", name)
	}
	return st.Bind(sdk.Spec{Name: name})
}
