package netproxy_test

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/proxy"

	"github.com/yagent/yagent/host/netproxy"
)

// TestSOCKS5Domain: a SOCKS5 client that sends a domain name (socks5h)
// reaches the address the proxy resolved it to, the name looked up once,
// and the connection ends in an Event counting the payload.
func TestSOCKS5Domain(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	res := newResolver(map[string][]netip.Addr{"allowed.test": {e.addr.Addr()}})
	rec := newRecorder()
	d := &decider{}
	_, addr := startProxy(t, netproxy.Options{Decider: d, Resolver: res, Record: rec.record})
	dialer, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dialer.Dial("tcp", fmt.Sprintf("Allowed.test:%d", e.addr.Port()))
	if err != nil {
		t.Fatalf("SOCKS5 dial: %v", err)
	}
	roundTrip(t, c, c, "through socks")
	_ = c.Close()

	ev := rec.next(t)
	want := netproxy.Target{Host: "allowed.test", Port: int(e.addr.Port()), Proto: netproxy.ProtoSOCKS5}
	if ev.Target != want || !ev.Allowed || ev.Addr != e.addr {
		t.Errorf("Event %+v, want %+v allowed at %v", ev, want, e.addr)
	}
	if n := int64(len("through socks")); ev.Up != n || ev.Down != n {
		t.Errorf("Event counts up %d, down %d; want %d each", ev.Up, ev.Down, n)
	}
	if n := res.count("allowed.test"); n != 1 {
		t.Errorf("allowed.test was looked up %d times, want 1", n)
	}
	if names, addrs := d.calls(); len(names) != 1 || len(addrs) != 1 {
		t.Errorf("the Decider was asked Name %d and Addrs %d times, want once each", len(names), len(addrs))
	}
}

// TestSOCKS5BoundAddress: the success reply carries the address the
// upstream connection is bound to, and the tunnel works after it.
func TestSOCKS5BoundAddress(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{}, Resolver: newResolver(nil)})
	s := dialSOCKS(t, addr)
	if m := s.hello(t, 0x00); m != 0x00 {
		t.Fatalf("method %#x, want 0x00", m)
	}
	s.send(t, 0x01, "127.0.0.1", int(e.addr.Port()))
	code, bound := s.reply(t)
	if code != 0x00 {
		t.Fatalf("reply %#x, want 0x00", code)
	}
	if bound.Addr() != e.addr.Addr() || bound.Port() == 0 {
		t.Errorf("bound address %v, want 127.0.0.1 and the upstream connection's port", bound)
	}
	roundTrip(t, s.c, s.c, "after the reply")
}

// TestSOCKS5Replies: each way a SOCKS5 request fails has its reply code,
// and only a request that reached the Decider has an Event.
func TestSOCKS5Replies(t *testing.T) {
	t.Parallel()
	down := netip.MustParseAddr("127.0.0.9")
	for _, c := range []struct {
		name      string
		methods   []byte
		wantMeth  byte
		cmd       byte
		host      string
		wantReply byte
		wantEvent bool
	}{
		{"refused", []byte{0}, 0x00, 0x01, "denied.test", 0x02, true},
		{"refused literal", []byte{0}, 0x00, 0x01, "127.0.0.2", 0x02, true},
		{"no such host", []byte{0}, 0x00, 0x01, "nowhere.test", 0x04, true},
		{"connection refused", []byte{0}, 0x00, 0x01, "down.test", 0x05, true},
		{"BIND", []byte{0}, 0x00, 0x02, "allowed.test", 0x07, false},
		{"UDP ASSOCIATE", []byte{0}, 0x00, 0x03, "allowed.test", 0x07, false},
		{"not a host name", []byte{0}, 0x00, 0x01, "0x7f.1", 0x01, false},
		{"username and password only", []byte{2}, 0xFF, 0, "", 0, false},
		{"GSSAPI and no authentication", []byte{1, 0}, 0x00, 0x01, "denied.test", 0x02, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			d := &decider{deny: map[string]bool{"denied.test": true, "127.0.0.2": true}}
			_, addr := startProxy(t, netproxy.Options{
				Decider:  d,
				Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("127.0.0.1")}, "down.test": {down}}),
				Dial:     (&dialLog{fail: map[netip.Addr]bool{down: true}}).dial,
				Record:   rec.record,
			})
			s := dialSOCKS(t, addr)
			if m := s.hello(t, c.methods...); m != c.wantMeth {
				t.Fatalf("method %#x, want %#x", m, c.wantMeth)
			}
			if c.wantMeth == 0xFF {
				closed(t, s.c)
				return
			}
			s.send(t, c.cmd, c.host, 80)
			if code, _ := s.reply(t); code != c.wantReply {
				t.Errorf("reply %#x, want %#x", code, c.wantReply)
			}
			closed(t, s.c)
			if c.wantEvent {
				if ev := rec.next(t); ev.Target.Proto != netproxy.ProtoSOCKS5 || ev.Reason == "" {
					t.Errorf("Event %+v, want a SOCKS5 target not reached, with its reason", ev)
				}
			}
			rec.none(t)
			if names, _ := d.calls(); c.wantEvent != (len(names) == 1) {
				t.Errorf("the Decider was asked %+v", names)
			}
		})
	}
}

// TestSOCKS5Refusal: the refusal's message is what the Event says, as it
// is what the proxy logs for the client.
func TestSOCKS5Refusal(t *testing.T) {
	t.Parallel()
	res := newResolver(map[string][]netip.Addr{"denied.test": {netip.MustParseAddr("127.0.0.1")}})
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{deny: map[string]bool{"denied.test": true}}, Resolver: res, Record: rec.record})
	dialer, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := dialer.Dial("tcp", "denied.test:443"); err == nil {
		_ = c.Close()
		t.Fatal("SOCKS5 dial of a refused name succeeded")
	} else if !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("dial error %q, want the client's words for reply 0x02", err)
	}
	if ev := rec.next(t); ev.Allowed || ev.Reason != refusal("denied.test") {
		t.Errorf("Event %+v, want refused with the message", ev)
	}
	if n := res.total(); n != 0 {
		t.Errorf("the resolver was asked %d times about a refused name", n)
	}
}

// TestSOCKS5Garbage: a client that breaks the handshake is hung up on, and
// the proxy serves the next one.
func TestSOCKS5Garbage(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{}, Resolver: newResolver(nil)})
	for _, c := range []struct {
		name  string
		bytes []byte
		reply []byte // what the proxy answers before it hangs up
	}{
		{"no methods", []byte{5, 0}, []byte{5, 0xFF}},
		{"request of another version", []byte{5, 1, 0, 4, 1, 0, 1, 127, 0, 0, 1, 0, 80}, []byte{5, 0}},
		{"unknown address type", []byte{5, 1, 0, 5, 1, 0, 9}, []byte{5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0}},
		{"cut short", []byte{5, 3, 0}, nil},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(c.bytes); err != nil {
			t.Fatal(err)
		}
		if c.reply == nil {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
		got := make([]byte, len(c.reply))
		if _, err := readFull(conn, got); err != nil || string(got) != string(c.reply) {
			t.Errorf("%s: got %v (%v), want %v", c.name, got, err, c.reply)
		}
		closed(t, conn)
		_ = conn.Close()
	}
	s := dialSOCKS(t, addr)
	s.hello(t, 0)
	s.send(t, 1, "127.0.0.1", int(e.addr.Port()))
	if code, _ := s.reply(t); code != 0 {
		t.Fatalf("the next client got reply %#x, want 0x00", code)
	}
	roundTrip(t, s.c, s.c, "still serving")
}
