package netproxy_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/host/netproxy"
)

// TestConnectTLS: an HTTPS request through a CONNECT tunnel the Decider
// allowed reaches the TLS server the name resolved to, and the tunnel ends
// in one Event with the address and both byte counts.
func TestConnectTLS(t *testing.T) {
	t.Parallel()
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	t.Cleanup(ts.Close)
	up := ts.Listener.Addr().(*net.TCPAddr).AddrPort()
	res := newResolver(map[string][]netip.Addr{"allowed.test": {up.Addr()}})
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{}, Resolver: res, Record: rec.record})

	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	tr := &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}),
		// httptest's certificate names example.com and 127.0.0.1.
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"},
	}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("https://allowed.test:%d/tunnel", up.Port()))
	if err != nil {
		t.Fatalf("GET through the tunnel: %v", err)
	}
	if got := readBody(t, resp); got != "hello /tunnel" {
		t.Errorf("body: got %q, want %q", got, "hello /tunnel")
	}
	tr.CloseIdleConnections()

	ev := rec.next(t)
	want := netproxy.Target{Host: "allowed.test", Port: int(up.Port()), Proto: netproxy.ProtoConnect}
	if ev.Target != want || ev.Addr != up || !ev.Allowed || ev.Reason != "" {
		t.Errorf("Event: got %+v, want target %+v at %v, allowed, no reason", ev, want, up)
	}
	if ev.Up == 0 || ev.Down == 0 || ev.Start.IsZero() || ev.Duration <= 0 {
		t.Errorf("Event counts and times: up %d, down %d, start %v, duration %v: want all set", ev.Up, ev.Down, ev.Start, ev.Duration)
	}
	if n := res.count("allowed.test"); n != 1 {
		t.Errorf("allowed.test was looked up %d times, want 1", n)
	}
}

// TestConnectRefused: a name the Decider refuses gets a 403 whose body is
// the refusal's message, marked with the host, and is never looked up.
func TestConnectRefused(t *testing.T) {
	t.Parallel()
	res := newResolver(map[string][]netip.Addr{"denied.test": {netip.MustParseAddr("127.0.0.1")}})
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{
		Decider:  &decider{deny: map[string]bool{"denied.test": true}},
		Resolver: res, Record: rec.record,
	})

	resp, _, _ := connect(t, addr, "denied.test:443")
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status: got %d, want 403", resp.StatusCode)
	}
	if want := refusal("denied.test") + "\n"; body != want {
		t.Errorf("body: got %q, want %q", body, want)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type: got %q", got)
	}
	if got := resp.Header.Get(netproxy.RefusedHeader); got != "denied.test" {
		t.Errorf("%s: got %q, want denied.test", netproxy.RefusedHeader, got)
	}
	if n := res.total(); n != 0 {
		t.Errorf("the resolver was asked %d times about a refused name", n)
	}
	ev := rec.next(t)
	if ev.Allowed || ev.Reason != refusal("denied.test") || ev.Addr.IsValid() {
		t.Errorf("Event: got %+v, want refused with the message and no address", ev)
	}
}

// TestConnectDeciderError: an error that is not a Refusal refuses too; the
// client is told the host, not the error, which the Event keeps.
func TestConnectDeciderError(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{
		Decider:  &decider{errs: map[string]error{"broken.test": errors.New("the policy file is unreadable")}},
		Resolver: newResolver(nil), Record: rec.record,
	})
	resp, _, _ := connect(t, addr, "broken.test:443")
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "broken.test") || strings.Contains(body, "unreadable") {
		t.Errorf("got %d %q, want 403 naming broken.test without the Decider's error", resp.StatusCode, body)
	}
	if ev := rec.next(t); ev.Allowed || !strings.Contains(ev.Reason, "unreadable") {
		t.Errorf("Event: got %+v, want refused with the Decider's error in the reason", ev)
	}
}

// TestConnectNotReached: a name that does not resolve and an address that
// does not answer are 502s that say which.
func TestConnectNotReached(t *testing.T) {
	t.Parallel()
	down := netip.MustParseAddr("127.0.0.9")
	dl := &dialLog{fail: map[netip.Addr]bool{down: true}}
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{
		Decider:  &decider{},
		Resolver: newResolver(map[string][]netip.Addr{"down.test": {down}}),
		Dial:     dl.dial, Record: rec.record,
	})
	for _, c := range []struct {
		target      string
		want        []string
		wantAllowed bool
	}{
		{"nowhere.test:80", []string{"nowhere.test", "did not resolve"}, false},
		{"down.test:80", []string{"down.test", "127.0.0.9:80"}, true},
	} {
		resp, _, _ := connect(t, addr, c.target)
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("CONNECT %s: status %d, want 502", c.target, resp.StatusCode)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("CONNECT %s: body %q does not say %q", c.target, body, w)
			}
		}
		if ev := rec.next(t); ev.Allowed != c.wantAllowed || ev.Reason == "" {
			t.Errorf("CONNECT %s: Event %+v, want allowed=%v with a reason", c.target, ev, c.wantAllowed)
		}
	}
}

// TestConnectByteCounts: the Event of a tunnel counts its payload each
// way, and a client's end of stream reaches the upstream (the echo server
// hangs up only then) and comes back.
func TestConnectByteCounts(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{
		Decider:  &decider{},
		Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {e.addr.Addr()}}),
		Record:   rec.record,
	})
	resp, c, br := connect(t, addr, fmt.Sprintf("allowed.test:%d", e.addr.Port()))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	msg := strings.Repeat("0123456789", 100)
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitLimit))
	got, err := io.ReadAll(br)
	if err != nil || string(got) != msg {
		t.Fatalf("echo until the end: got %d bytes, %v; want the %d sent and end of stream", len(got), err, len(msg))
	}
	ev := rec.next(t)
	if ev.Up != int64(len(msg)) || ev.Down != int64(len(msg)) {
		t.Errorf("Event counts: up %d, down %d; want %d each", ev.Up, ev.Down, len(msg))
	}
}

// TestConnectIPLiteral: an IPv4-mapped IPv6 literal reaches the Decider as
// IPv4, and a literal is never sent to the resolver.
func TestConnectIPLiteral(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	d := &decider{}
	res := newResolver(nil)
	_, addr := startProxy(t, netproxy.Options{Decider: d, Resolver: res})
	resp, c, br := connect(t, addr, fmt.Sprintf("[::ffff:127.0.0.1]:%d", e.addr.Port()))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	roundTrip(t, c, br, "literal")
	names, addrs := d.calls()
	if len(names) != 1 || names[0].Host != "127.0.0.1" {
		t.Errorf("Name got %+v, want one question about 127.0.0.1", names)
	}
	if len(addrs) != 1 || !slices.Equal(addrs[0].addrs, []netip.Addr{e.addr.Addr()}) {
		t.Errorf("Addrs got %+v, want [127.0.0.1]", addrs)
	}
	if n := res.total(); n != 0 {
		t.Errorf("the resolver was asked %d times about an IP literal", n)
	}
}

// TestDialsOnlyDecidedAddrs: the proxy dials the addresses Addrs returned
// and no other, in its order, moving to the next when one fails.
func TestDialsOnlyDecidedAddrs(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	other := netip.MustParseAddr("127.0.0.9")
	for _, c := range []struct {
		name string
		keep func(netip.Addr) bool
		want []netip.AddrPort
	}{
		{"subset", func(a netip.Addr) bool { return a != other },
			[]netip.AddrPort{e.addr}},
		{"in order", nil,
			[]netip.AddrPort{netip.AddrPortFrom(other, e.addr.Port()), e.addr}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dl := &dialLog{fail: map[netip.Addr]bool{other: true}}
			rec := newRecorder()
			d := &decider{keep: c.keep}
			_, addr := startProxy(t, netproxy.Options{
				Decider:  d,
				Resolver: newResolver(map[string][]netip.Addr{"multi.test": {other, e.addr.Addr()}}),
				Dial:     dl.dial, Record: rec.record,
			})
			resp, conn, br := connect(t, addr, fmt.Sprintf("multi.test:%d", e.addr.Port()))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			roundTrip(t, conn, br, "which address")
			_ = conn.Close()
			if got := dl.addrs(); !slices.Equal(got, c.want) {
				t.Errorf("dialed %v, want %v", got, c.want)
			}
			if _, addrs := d.calls(); len(addrs) != 1 || !slices.Equal(addrs[0].addrs, []netip.Addr{other, e.addr.Addr()}) {
				t.Errorf("Addrs got %+v, want both resolved addresses once", addrs)
			}
			if ev := rec.next(t); ev.Addr != e.addr {
				t.Errorf("Event address %v, want %v", ev.Addr, e.addr)
			}
		})
	}
}

// TestConnectBadRequest: a CONNECT whose target is not host:port, or whose
// host is neither a name nor an address in its usual form, is a 400 that
// reaches no Decider.
func TestConnectBadRequest(t *testing.T) {
	t.Parallel()
	d := &decider{}
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{Decider: d, Resolver: newResolver(nil), Record: rec.record})
	for _, target := range []string{"allowed.test", "allowed.test:0", "allowed.test:99999", "0x7f.1:80", "[fe80::1%25eth0]:80"} {
		resp, _, _ := connect(t, addr, target)
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(body, "CONNECT takes host:port") {
			t.Errorf("CONNECT %s: got %d %q, want 400 saying what CONNECT takes", target, resp.StatusCode, body)
		}
	}
	if names, _ := d.calls(); len(names) != 0 {
		t.Errorf("the Decider was asked %+v", names)
	}
	rec.none(t)
}

// TestResolvedAddrsUnmapped: the Decider sees each resolved address once,
// an IPv4-mapped answer as IPv4.
func TestResolvedAddrsUnmapped(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	d := &decider{}
	mapped := netip.AddrFrom16(e.addr.Addr().As16())
	_, addr := startProxy(t, netproxy.Options{
		Decider:  d,
		Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {mapped, e.addr.Addr(), mapped}}),
	})
	resp, c, br := connect(t, addr, fmt.Sprintf("allowed.test:%d", e.addr.Port()))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	roundTrip(t, c, br, "unmapped")
	if _, addrs := d.calls(); len(addrs) != 1 || !slices.Equal(addrs[0].addrs, []netip.Addr{e.addr.Addr()}) {
		t.Errorf("Addrs got %+v, want [%v] once", addrs, e.addr.Addr())
	}
}
