package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// countingListener counts the writes of the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestHTTPFront_AnswerInOneWrite: on the connections of HTTPFront.Listener,
// with its ConnContext, the call lane's answer to a call done at once goes
// out in one write, its header with it, where net/http alone writes one
// larger than its buffer in two or three; over TLS too. The answer is the
// same either way.
func TestHTTPFront_AnswerInOneWrite(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 400) // an answer of about 6.5 KB
	for _, tc := range []struct {
		name       string
		held, tls  bool
		wantWrites int64 // 0: more than one
	}{
		{"held", true, false, 1},
		{"held, under TLS", true, true, 1},
		{"net/http alone", false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, sdkCalls := laneServerWith(t, nil)
			f, err := NewHTTPFront(HTTPOptions{Token: testToken, SessionIdle: -1})
			if err != nil {
				t.Fatal(err)
			}
			f.Attach(s)
			writes := new(atomic.Int64)
			srv := httptest.NewUnstartedServer(f)
			var ln net.Listener = countingListener{srv.Listener, writes}
			if tc.held {
				ln = f.Listener(ln)
				srv.Config.ConnContext = f.ConnContext
			}
			srv.Listener = ln
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			// One connection for all: the call's writes are its own.
			client := srv.Client()
			defer client.CloseIdleConnections()
			url := srv.URL + MCPPath
			post := func(body, session string) (*http.Response, string) {
				t.Helper()
				req := sessionRequest(t, context.Background(), http.MethodPost, url, body, session)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp, string(b)
			}
			resp, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, "")
			session := resp.Header.Get(sessionHeader)
			post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
			post(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`, session)

			before := writes.Load()
			resp, body := post(call(`2`, fmt.Sprintf(`{"name":"echo","arguments":{"x":%q}}`, big)), session)
			n := writes.Load() - before
			if resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, big) || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":2,"result":`) {
				t.Fatalf("the answer: %s %q…; want the call's result in a JSON body", resp.Header.Get("Content-Type"), body[:min(len(body), 80)])
			}
			if sdkCalls.Load() != 0 {
				t.Errorf("%d calls took the SDK's path, want 0", sdkCalls.Load())
			}
			switch {
			case tc.wantWrites == 0 && n < 2:
				t.Errorf("net/http alone wrote the %d-byte answer in %d write, want more: the test measures nothing", len(body), n)
			case tc.wantWrites != 0 && n != tc.wantWrites:
				t.Errorf("the %d-byte answer went out in %d writes, want %d", len(body), n, tc.wantWrites)
			}
		})
	}
}
