package netproxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/host/netproxy"
)

// readFull reads len(b) bytes, bounded by waitLimit.
func readFull(c net.Conn, b []byte) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(waitLimit))
	defer c.SetReadDeadline(time.Time{})
	return io.ReadFull(c, b)
}

// TestDeciderReleasedWhenClientCloses: a question waiting on a user is
// abandoned when its client hangs up, for each protocol.
func TestDeciderReleasedWhenClientCloses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ask  func(t *testing.T, conn net.Conn)
	}{
		{"CONNECT", func(t *testing.T, conn net.Conn) {
			fmt.Fprint(conn, "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
		}},
		{"GET", func(t *testing.T, conn net.Conn) {
			fmt.Fprint(conn, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
		}},
		{"SOCKS5", func(t *testing.T, conn net.Conn) {
			s := &socksClient{c: conn}
			s.hello(t, 0)
			s.send(t, 1, "allowed.test", 443)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := newBlockingDecider()
			rec := newRecorder()
			_, addr := startProxy(t, netproxy.Options{Decider: d, Resolver: newResolver(nil), Record: rec.record})
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			c.ask(t, conn)
			wait(t, d.entered, "the question")
			_ = conn.Close()
			if err := wait(t, d.released, "the question's release"); !errors.Is(err, context.Canceled) {
				t.Errorf("the question's context ended with %v, want Canceled", err)
			}
			if ev := rec.next(t); ev.Allowed {
				t.Errorf("Event %+v, want not allowed", ev)
			}
		})
	}
}

// TestCloseWaitsForDecider: Close releases a waiting question and returns
// only once the connection asking it is done.
func TestCloseWaitsForDecider(t *testing.T) {
	t.Parallel()
	d := newBlockingDecider()
	d.hold = make(chan struct{})
	rec := newRecorder()
	p, addr := startProxy(t, netproxy.Options{Decider: d, Resolver: newResolver(nil), Record: rec.record})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
	wait(t, d.entered, "the question")

	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	wait(t, d.released, "the question's release by Close")
	// Close hangs up on the client after it has cancelled the question,
	// and then has nothing left to do but wait.
	closed(t, conn)
	select {
	case <-done:
		t.Fatal("Close returned while a Decider was still running")
	default:
	}
	close(d.hold)
	if err := wait(t, done, "Close's return"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The connection's Event is recorded before its goroutine ends, so
	// it is there by the time Close returns.
	select {
	case <-rec.ch:
	default:
		t.Error("Close returned before the connection asking the Decider was done")
	}
}

// TestCloseEndsTunnels: Close closes a spliced tunnel at both ends and
// returns.
func TestCloseEndsTunnels(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	p, addr := startProxy(t, netproxy.Options{
		Decider:  &decider{},
		Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {e.addr.Addr()}}),
	})
	resp, c, br := connect(t, addr, fmt.Sprintf("allowed.test:%d", e.addr.Port()))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	roundTrip(t, c, br, "open")
	s := dialSOCKS(t, addr)
	s.hello(t, 0)
	s.send(t, 1, "allowed.test", int(e.addr.Port()))
	if code, _ := s.reply(t); code != 0 {
		t.Fatalf("SOCKS5 reply %#x, want 0", code)
	}
	roundTrip(t, s.c, s.c, "open too")

	closeProxy(t, p)
	closed(t, c)
	closed(t, s.c)
	wait(t, e.ended, "the upstream's end of the first tunnel")
	wait(t, e.ended, "the upstream's end of the second tunnel")
	closeProxy(t, p) // a second time
}

// TestServeAfterClose: Serve on a closed proxy returns ErrClosed and
// closes the listener.
func TestServeAfterClose(t *testing.T) {
	t.Parallel()
	p := netproxy.New(netproxy.Options{})
	closeProxy(t, p)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Serve(l); !errors.Is(err, netproxy.ErrClosed) {
		t.Errorf("Serve after Close: %v, want ErrClosed", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on the listener after Serve returned: %v, want it closed", err)
	}
}

// TestNilDeciderRefuses: a proxy built without a Decider refuses, rather
// than letting everything out.
func TestNilDeciderRefuses(t *testing.T) {
	t.Parallel()
	res := newResolver(nil)
	_, addr := startProxy(t, netproxy.Options{Resolver: res})
	resp, _, _ := connect(t, addr, "allowed.test:443")
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "no network policy") {
		t.Errorf("got %d %q, want 403 saying no policy is set", resp.StatusCode, body)
	}
	if res.total() != 0 {
		t.Error("a name was looked up without a Decider")
	}
}

// TestSeveralListeners: one proxy serves two listeners at once.
func TestSeveralListeners(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	l1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := serveOn(t, netproxy.Options{Decider: &decider{}, Resolver: newResolver(nil)}, l1)
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l2) }()
	for _, l := range []net.Listener{l1, l2} {
		resp, c, br := connect(t, l.Addr().String(), e.addr.String())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("via %v: status %d", l.Addr(), resp.StatusCode)
		}
		roundTrip(t, c, br, "via "+l.Addr().String())
	}
	closeProxy(t, p)
	if err := wait(t, served, "the second Serve's return"); !errors.Is(err, netproxy.ErrClosed) {
		t.Errorf("second Serve returned %v, want ErrClosed", err)
	}
}

// TestHTTPGarbage: a client that sends something that is not HTTP gets a
// 400, one whose headers pass the bound a 431, and the proxy serves the
// next client.
func TestHTTPGarbage(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{}, Resolver: newResolver(nil)})
	for _, c := range []struct {
		name, send, want string
	}{
		{"binary", "\x00\x01\x02\xff garbage\r\n\r\n", "HTTP/1.1 400 "},
		{"no version", "CONNECT\r\n\r\n", "HTTP/1.1 400 "},
		{"bad header", "GET http://allowed.test/ HTTP/1.1\r\nHost allowed.test\r\n\r\n", "HTTP/1.1 400 "},
		{"headers too large", "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nX-Big: " +
			strings.Repeat("a", 80<<10) + "\r\n\r\n", "HTTP/1.1 431 "},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		// The proxy may answer before it has read all of a request too
		// large, so the request is written beside the read.
		wg.Go(func() { _, _ = io.WriteString(conn, c.send) })
		line, err := bufio.NewReader(conn).ReadString('\n')
		if !strings.HasPrefix(line, c.want) {
			t.Errorf("%s: got %q (%v), want %q", c.name, line, err, c.want)
		}
		_ = conn.Close()
		wg.Wait()
	}
	resp, c, br := connect(t, addr, e.addr.String())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the next client got %d, want 200", resp.StatusCode)
	}
	roundTrip(t, c, br, "still serving")
}

// deadlineListener records the read deadlines set on the connections it
// accepts.
type deadlineListener struct {
	net.Listener
	mu        sync.Mutex
	deadlines []time.Time
}

func (l *deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: c, l: l}, nil
}

func (l *deadlineListener) log() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.deadlines...)
}

type deadlineConn struct {
	net.Conn
	l *deadlineListener
}

func (c *deadlineConn) note(t time.Time) {
	c.l.mu.Lock()
	c.l.deadlines = append(c.l.deadlines, t)
	c.l.mu.Unlock()
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.note(t)
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.note(t)
	return c.Conn.SetDeadline(t)
}

// deadlineDecider allows everything and reports the read deadline the
// connection had when Name was asked.
type deadlineDecider struct {
	decider
	asked chan time.Time
	l     *deadlineListener
}

func (d *deadlineDecider) Name(ctx context.Context, t netproxy.Target) error {
	log := d.l.log()
	d.asked <- log[len(log)-1]
	return nil
}

// TestHandshakeDeadline: a client has HandshakeTimeout to send its
// request or handshake; once it has, the question is asked without a
// deadline, and none is left on its connection to cut the tunnel.
func TestHandshakeDeadline(t *testing.T) {
	t.Parallel()
	e := newEcho(t)
	for _, proto := range []string{"CONNECT", "SOCKS5"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			tl, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			l := &deadlineListener{Listener: tl}
			asked := make(chan time.Time, 1)
			d := &deadlineDecider{asked: asked, l: l}
			serveOn(t, netproxy.Options{Decider: d, Resolver: newResolver(nil)}, l)
			before := time.Now()
			var conn net.Conn
			var r io.Reader
			if proto == "CONNECT" {
				resp, c, br := connect(t, tl.Addr().String(), e.addr.String())
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				conn, r = c, br
			} else {
				s := dialSOCKS(t, tl.Addr().String())
				s.hello(t, 0)
				s.send(t, 1, "127.0.0.1", int(e.addr.Port()))
				if code, _ := s.reply(t); code != 0 {
					t.Fatalf("reply %#x", code)
				}
				conn, r = s.c, s.c
			}
			after := time.Now()
			roundTrip(t, conn, r, "deadline")
			log := l.log()
			if len(log) == 0 {
				t.Fatal("no read deadline was set")
			}
			first := log[0]
			if first.Before(before.Add(netproxy.HandshakeTimeout)) || first.After(after.Add(netproxy.HandshakeTimeout)) {
				t.Errorf("first deadline %v after the connection, want %v", first.Sub(before), netproxy.HandshakeTimeout)
			}
			if last := log[len(log)-1]; !last.IsZero() {
				t.Errorf("the last deadline set is %v, want none left on the tunnel", last)
			}
			if d := wait(t, asked, "the question"); !d.IsZero() {
				t.Errorf("the question was asked under the deadline %v: a user's answer may take longer", d)
			}
		})
	}
}
