package netproxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/netproxy"
)

// seen is what the upstream of the forwarding tests was sent.
type seen struct {
	Method, URI, Host, Body string
	Header                  http.Header
}

// newEchoHTTP is an HTTP server on 127.0.0.1 that answers with what it
// was sent, as JSON.
func newEchoHTTP(t *testing.T) netip.AddrPort {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(seen{r.Method, r.RequestURI, r.Host, string(b), r.Header})
	}))
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().(*net.TCPAddr).AddrPort()
}

// TestForward: a GET and a POST (sized and chunked) in absolute form reach
// the upstream with their bodies, without hop-by-hop headers or the
// proxy's credentials, and each ends in an Event counting the bodies.
func TestForward(t *testing.T) {
	t.Parallel()
	up := newEchoHTTP(t)
	res := newResolver(map[string][]netip.Addr{"allowed.test": {up.Addr()}})
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{}, Resolver: res, Record: rec.record})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("agent", "secret"), Host: addr})}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	target := fmt.Sprintf("http://allowed.test:%d/path?q=1", up.Port())

	for _, c := range []struct {
		name, method string
		body         io.Reader
		want         string
	}{
		{"GET", http.MethodGet, nil, ""},
		{"POST", http.MethodPost, strings.NewReader("a sized body"), "a sized body"},
		// A reader of no known length goes chunked.
		{"POST chunked", http.MethodPost, io.MultiReader(strings.NewReader("a chunked "), strings.NewReader("body")), "a chunked body"},
	} {
		req, err := http.NewRequest(c.method, target, c.body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Connection", "X-Hop")
		req.Header.Set("X-Hop", "1")
		req.Header.Set("Keep-Alive", "timeout=5")
		req.Header.Set("Proxy-Connection", "keep-alive")
		req.Header.Set("X-End", "kept")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		raw := readBody(t, resp)
		var s seen
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatalf("%s: the upstream's answer %q: %v", c.name, raw, err)
		}
		if s.Method != c.method || s.URI != "/path?q=1" || s.Body != c.want {
			t.Errorf("%s: upstream saw %s %s with body %q, want %s /path?q=1 with %q", c.name, s.Method, s.URI, s.Body, c.method, c.want)
		}
		for _, h := range []string{"X-Hop", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization"} {
			if v, ok := s.Header[h]; ok {
				t.Errorf("%s: upstream saw %s: %q", c.name, h, v)
			}
		}
		if strings.Contains(strings.Join(s.Header["Connection"], ","), "X-Hop") {
			t.Errorf("%s: upstream saw the client's Connection header %q", c.name, s.Header["Connection"])
		}
		if s.Header.Get("X-End") != "kept" {
			t.Errorf("%s: upstream lost the end-to-end header X-End", c.name)
		}
		ev := rec.next(t)
		wantTarget := netproxy.Target{Host: "allowed.test", Port: int(up.Port()), Proto: netproxy.ProtoHTTP, Method: c.method, URL: target}
		if ev.Target != wantTarget || !ev.Allowed || ev.Addr != up || ev.Reason != "" {
			t.Errorf("%s: Event %+v, want %+v allowed at %v", c.name, ev, wantTarget, up)
		}
		if ev.Up != int64(len(c.want)) || ev.Down != int64(len(raw)) {
			t.Errorf("%s: Event counts up %d, down %d; want %d, %d", c.name, ev.Up, ev.Down, len(c.want), len(raw))
		}
	}
	if n := res.count("allowed.test"); n != 3 {
		t.Errorf("allowed.test was looked up %d times for 3 requests, want 3: each request is decided on its own", n)
	}
}

// TestForwardResponseHopHeaders: the upstream's hop-by-hop headers, those
// its Connection header names included, stay with the upstream. (The
// Connection header here has no "close": net/http drops a Connection
// header that has, and the names with it.)
func TestForwardResponseHopHeaders(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			served <- err
			return
		}
		_, err = io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: X-Upstream-Hop\r\nX-Upstream-Hop: 1\r\n"+
			"Keep-Alive: timeout=5\r\nProxy-Authenticate: Basic\r\nX-Upstream-End: kept\r\nContent-Length: 2\r\n\r\nok")
		served <- err
	}()
	up := l.Addr().(*net.TCPAddr).AddrPort()
	_, addr := startProxy(t, netproxy.Options{
		Decider:  &decider{},
		Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {up.Addr()}}),
	})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr})}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("http://allowed.test:%d/", up.Port()))
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); body != "ok" {
		t.Errorf("body %q, want ok", body)
	}
	if err := wait(t, served, "the upstream's answer"); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"X-Upstream-Hop", "Keep-Alive", "Proxy-Authenticate"} {
		if v := resp.Header.Get(h); v != "" {
			t.Errorf("the client got the upstream's %s: %q", h, v)
		}
	}
	if resp.Header.Get("X-Upstream-End") != "kept" {
		t.Errorf("the client lost the end-to-end header X-Upstream-End: %v", resp.Header)
	}
}

// TestForwardHostFromURL: the upstream is told the host of the URL the
// Decider judged, not a Host header naming another site.
func TestForwardHostFromURL(t *testing.T) {
	t.Parallel()
	up := newEchoHTTP(t)
	res := newResolver(map[string][]netip.Addr{"allowed.test": {up.Addr()}})
	_, addr := startProxy(t, netproxy.Options{Decider: &decider{deny: map[string]bool{"denied.test": true}}, Resolver: res})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://Allowed.TEST.:%d/ HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n", up.Port())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var s seen
	if err := json.Unmarshal([]byte(readBody(t, resp)), &s); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("allowed.test:%d", up.Port()); s.Host != want {
		t.Errorf("upstream saw Host %q, want %q", s.Host, want)
	}
}

// TestForwardRefusedAndBadRequests: a refused target is a 403 as for
// CONNECT; a request in origin form, an https:// URL or another scheme is
// a 400 telling the client what to send, and reaches no Decider.
func TestForwardRefusedAndBadRequests(t *testing.T) {
	t.Parallel()
	d := &decider{deny: map[string]bool{"denied.test": true}}
	res := newResolver(nil)
	rec := newRecorder()
	_, addr := startProxy(t, netproxy.Options{Decider: d, Resolver: res, Record: rec.record})
	for _, c := range []struct {
		request  string
		code     int
		bodyHas  string
		refusal  bool
		decision bool
	}{
		{"GET http://denied.test/x HTTP/1.1\r\nHost: denied.test\r\n\r\n", 403, refusal("denied.test"), true, true},
		{"GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "absolute URL", false, false},
		{"OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "absolute URL", false, false},
		{"GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "CONNECT host:443", false, false},
		{"GET ftp://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "http:// URLs only", false, false},
		{"GET http://0x7f.1/ HTTP/1.1\r\nHost: 0x7f.1\r\n\r\n", 400, "bad host", false, false},
	} {
		line := c.request[:strings.Index(c.request, "\r\n")]
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, c.request)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		body := readBody(t, resp)
		_ = conn.Close()
		if resp.StatusCode != c.code || !strings.Contains(body, c.bodyHas) || !strings.HasSuffix(body, "\n") {
			t.Errorf("%s: got %d %q, want %d with a line saying %q", line, resp.StatusCode, body, c.code, c.bodyHas)
		}
		if got := resp.Header.Get(netproxy.RefusedHeader) != ""; got != c.refusal {
			t.Errorf("%s: %s set: %v, want %v", line, netproxy.RefusedHeader, got, c.refusal)
		}
		if c.decision {
			if ev := rec.next(t); ev.Allowed || ev.Target.Method != http.MethodGet || ev.Target.URL != "http://denied.test/x" {
				t.Errorf("%s: Event %+v, want the refused GET", line, ev)
			}
		}
	}
	if names, _ := d.calls(); len(names) != 1 {
		t.Errorf("the Decider was asked %d times, want once (the refused GET)", len(names))
	}
	if n := res.total(); n != 0 {
		t.Errorf("the resolver was asked %d times", n)
	}
	rec.none(t)
}
