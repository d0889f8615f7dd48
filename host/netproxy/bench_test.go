package netproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/yagent/yagent/host/netproxy"
)

// BenchmarkConnect is a connection and one small request and response,
// direct and through a CONNECT tunnel: the difference is what the proxy
// costs a new connection (its decision, dial and splice).
func BenchmarkConnect(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	b.Cleanup(ts.Close)
	up := ts.Listener.Addr().(*net.TCPAddr).AddrPort()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p := netproxy.New(netproxy.Options{
		Decider:  &decider{},
		Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {up.Addr()}}),
	})
	go func() { _ = p.Serve(l) }()
	b.Cleanup(func() { _ = p.Close() })
	target := fmt.Sprintf("allowed.test:%d", up.Port())
	req := fmt.Sprintf("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)

	get := func(b *testing.B, c net.Conn, br *bufio.Reader) {
		if _, err := io.WriteString(c, req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", up.String())
			if err != nil {
				b.Fatal(err)
			}
			get(b, c, bufio.NewReader(c))
			_ = c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("CONNECT: %v %v", resp, err)
			}
			get(b, c, br)
			_ = c.Close()
		}
	})
}
