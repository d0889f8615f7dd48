package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/sdk"
)

const testToken = "s3cret-token"

// guarded serves f's guard in front of a handler that reads the whole body
// and answers 413 when the cap stops it, as the SDK's handler does; reached
// counts the requests that got through.
func guarded(t *testing.T, opts HTTPOptions) (srv *httptest.Server, reached *atomic.Int32) {
	t.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	f, err := NewHTTPFront(opts)
	if err != nil {
		t.Fatal(err)
	}
	reached = &atomic.Int32{}
	srv = httptest.NewServer(f.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if _, err := io.ReadAll(r.Body); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, "too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "through")
	})))
	t.Cleanup(srv.Close)
	return srv, reached
}

// freshClient opens a connection for every request: the tests run side by
// side, each on a server of its own, and a kept connection to a server that
// closed (whose port the next server may get again) fails the request that
// reuses it with EOF.
var freshClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func do(t *testing.T, method, url string, body io.Reader, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := freshClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestHTTPFront_TokenOnEveryRequest(t *testing.T) {
	t.Parallel()
	srv, reached := guarded(t, HTTPOptions{})
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"missing", "", http.StatusUnauthorized},
		{"wrong", "Bearer nope", http.StatusUnauthorized},
		{"prefix of the token", "Bearer " + testToken[:4], http.StatusUnauthorized},
		{"token with a suffix", "Bearer " + testToken + "x", http.StatusUnauthorized},
		{"no scheme", testToken, http.StatusUnauthorized},
		{"basic scheme", "Basic " + testToken, http.StatusUnauthorized},
		{"right", "Bearer " + testToken, http.StatusOK},
		{"scheme in lower case", "bearer " + testToken, http.StatusOK},
	} {
		hdr := map[string]string{}
		if tc.auth != "" {
			hdr["Authorization"] = tc.auth
		}
		before := reached.Load()
		resp := do(t, http.MethodPost, srv.URL, strings.NewReader("{}"), hdr)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: POST with Authorization %q: got %d, want %d", tc.name, tc.auth, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusUnauthorized {
			if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("%s: 401 without WWW-Authenticate: Bearer (got %q)", tc.name, got)
			}
			if reached.Load() != before {
				t.Errorf("%s: a refused request reached the MCP handler", tc.name)
			}
		}
	}
}

func TestHTTPFront_OriginChecked(t *testing.T) {
	t.Parallel()
	srv, reached := guarded(t, HTTPOptions{AllowOrigins: []string{"https://ide.example.com"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"http://127.0.0.1:" + port, http.StatusOK},
		{"http://localhost:" + port, http.StatusOK},
		{"http://[::1]:" + port, http.StatusOK},
		{"https://ide.example.com", http.StatusOK},
		{"https://IDE.example.com", http.StatusOK},
		{"http://ide.example.com", http.StatusForbidden},          // another scheme is another origin
		{"https://evil.example.com", http.StatusForbidden},        // not listed
		{"http://evil.example.com:" + port, http.StatusForbidden}, // a rebound name on our port
		{"http://127.0.0.1:1", http.StatusForbidden},              // loopback, another port: another local server's page
		{"http://localhost", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"file://", http.StatusForbidden},
	} {
		hdr := map[string]string{"Authorization": "Bearer " + testToken}
		if tc.origin != "" {
			hdr["Origin"] = tc.origin
		}
		before := reached.Load()
		resp := do(t, http.MethodPost, srv.URL, strings.NewReader("{}"), hdr)
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %q: got %d, want %d", tc.origin, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusForbidden && reached.Load() != before {
			t.Errorf("Origin %q: a refused request reached the MCP handler", tc.origin)
		}
	}
}

func TestHTTPFront_OriginRefusedBeforeToken(t *testing.T) {
	t.Parallel()
	srv, _ := guarded(t, HTTPOptions{})
	resp := do(t, http.MethodPost, srv.URL, strings.NewReader("{}"), map[string]string{"Origin": "https://evil.example.com"})
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Origin, no token: got %d, want 403", resp.StatusCode)
	}
}

func TestHTTPFront_BadAllowOriginRefused(t *testing.T) {
	t.Parallel()
	for _, o := range []string{"ide.example.com", "https://ide.example.com/path", "ftp://x"} {
		if _, err := NewHTTPFront(HTTPOptions{Token: testToken, AllowOrigins: []string{o}}); err == nil {
			t.Errorf("NewHTTPFront(--allow-origin %q): want an error", o)
		}
	}
	if _, err := NewHTTPFront(HTTPOptions{}); err == nil {
		t.Error("NewHTTPFront without a token: want an error")
	}
}

func TestHTTPFront_BodyCapped(t *testing.T) {
	t.Parallel()
	const limit = 1024
	srv, reached := guarded(t, HTTPOptions{MaxBody: limit})
	auth := map[string]string{"Authorization": "Bearer " + testToken}

	if resp := do(t, http.MethodPost, srv.URL, strings.NewReader(strings.Repeat("x", limit)), auth); resp.StatusCode != http.StatusOK {
		t.Errorf("body of exactly %d bytes: got %d, want 200", limit, resp.StatusCode)
	}

	// A declared length over the cap is refused before anything reads it.
	before := reached.Load()
	if resp := do(t, http.MethodPost, srv.URL, strings.NewReader(strings.Repeat("x", limit+1)), auth); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("Content-Length %d: got %d, want 413", limit+1, resp.StatusCode)
	}
	if reached.Load() != before {
		t.Error("a body declared over the cap reached the MCP handler")
	}

	// A chunked body (no length) is cut while it is read.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(strings.Repeat("x", 4*limit)))
		pw.Close()
	}()
	if resp := do(t, http.MethodPost, srv.URL, pr, auth); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body of %d bytes: got %d, want 413", 4*limit, resp.StatusCode)
	}
}

func emptyServer(t *testing.T) *Server {
	t.Helper()
	return New(surface.NewSurfaceFromAdapters(nil, surface.Options{}), nil)
}

type allowAll struct{}

func (allowAll) Check(context.Context, adapter.GuardRequest) adapter.Decision {
	return adapter.Decision{Action: adapter.Allow}
}

// blocker is a tool that runs until its call's context ends, as a
// foreground command does.
type blocker struct {
	started, ended chan struct{}
	// returns counts the calls that returned, without a receive that
	// would race the test's own wait on ended.
	returns atomic.Int32
}

func newBlockingServer(t *testing.T) (*Server, *blocker) {
	t.Helper()
	return newBlockingServerWith(t, nil)
}

func newBlockingServerWith(t *testing.T, opts *Options) (*Server, *blocker) {
	t.Helper()
	b := &blocker{started: make(chan struct{}, 4), ended: make(chan struct{}, 4)}
	exec := adapter.ExecutorFunc(func(ctx context.Context, _ sdk.CallInfo, _ json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		b.started <- struct{}{}
		<-ctx.Done()
		b.returns.Add(1)
		b.ended <- struct{}{}
		return &sdk.Result{Text: "cancelled"}, nil
	})
	spec := sdk.Spec{Name: "block", Description: "Blocks until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: sdk.EffectNone}
	a := adapter.New(spec, "test", toolspec.Hot, exec, adapter.Options{Trusted: true, Logger: slog.New(slog.DiscardHandler)})
	surf := surface.NewSurfaceFromAdapters([]*adapter.Adapter{a}, surface.Options{Guard: allowAll{}, Logger: slog.New(slog.DiscardHandler)})
	return New(surf, opts), b
}

func (b *blocker) wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("gave up after 10s waiting for the blocking call to be %s", what)
	}
}

func TestHTTPFront_HealthAndReadiness(t *testing.T) {
	t.Parallel()
	// A request to /mcp before the server waits ReadyWait: 1 ns here.
	f, err := NewHTTPFront(HTTPOptions{Token: testToken, ReadyWait: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	check := func(when, path string, want int, hdr map[string]string) {
		t.Helper()
		if resp := do(t, http.MethodGet, srv.URL+path, nil, hdr); resp.StatusCode != want {
			t.Errorf("%s: GET %s: got %d, want %d", when, path, resp.StatusCode, want)
		}
	}
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	check("before attach", "/healthz", http.StatusOK, nil)
	check("before attach", "/readyz", http.StatusServiceUnavailable, nil)
	check("before attach", MCPPath, http.StatusServiceUnavailable, auth)
	check("before attach", MCPPath, http.StatusUnauthorized, nil)
	f.Attach(emptyServer(t))
	check("after attach", "/healthz", http.StatusOK, nil)
	check("after attach", "/readyz", http.StatusOK, nil)
	check("after attach", MCPPath, http.StatusUnauthorized, nil)
	check("after attach", "/elsewhere", http.StatusNotFound, auth)
}

// TestHTTPFront_EarlyRequestWaitsForTheServer: a client that sends its
// initialize before the plugins are described (serve's first moments) gets
// it answered once the server is attached, not a 503 it would not retry.
func TestHTTPFront_EarlyRequestWaitsForTheServer(t *testing.T) {
	t.Parallel()
	f, err := NewHTTPFront(HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MCPPath {
			once.Do(func() { close(arrived) })
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// One POST, as a client that does not retry a 503 sends it.
	status := make(chan int, 1)
	go func() {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
		req, _ := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("the early initialize: %v", err)
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the initialize did not arrive")
	}
	f.Attach(emptyServer(t))
	if got := <-status; got != http.StatusOK {
		t.Errorf("an initialize sent before the server was attached: %d, want 200", got)
	}
}

// bearer adds the token to every request of a client transport.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{testToken}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	return cs
}

func (s *Server) sessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// waitSessions polls until s holds want host sessions.
func waitSessions(t *testing.T, s *Server, want int, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.sessionCount() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the server still holds %d host sessions, want %d", why, s.sessionCount(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func httpFront(t *testing.T, opts HTTPOptions) (*Server, string) {
	t.Helper()
	return attachFront(t, emptyServer(t), opts)
}

func attachFront(t *testing.T, s *Server, opts HTTPOptions) (*Server, string) {
	t.Helper()
	opts.Token = testToken
	f, err := NewHTTPFront(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.Attach(s)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	// Runs before the test server's Close, which waits for the handlers: a
	// broken build must fail the test, not hang it.
	t.Cleanup(func() {
		for ss := range s.server.Sessions() {
			s.cancelCalls(ss.ID())
		}
	})
	return s, srv.URL + MCPPath
}

func TestHTTPFront_DeleteDropsHostSession(t *testing.T) {
	t.Parallel()
	s, url := httpFront(t, HTTPOptions{})
	a, b := connectHTTP(t, url), connectHTTP(t, url)
	defer b.Close()
	for _, cs := range []*mcp.ClientSession{a, b} {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitSessions(t, s, 2, "two sessions listed tools")
	if err := a.Close(); err != nil { // sends DELETE
		t.Fatal(err)
	}
	waitSessions(t, s, 1, "one session ended with DELETE")
	if _, err := b.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("the other session after a DELETE: %v", err)
	}
}

func TestHTTPFront_IdleSessionEnds(t *testing.T) {
	t.Parallel()
	s, url := httpFront(t, HTTPOptions{SessionIdle: 200 * time.Millisecond})
	cs := connectHTTP(t, url)
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	waitSessions(t, s, 0, "a session idle past --session-idle")
}

// rawSession opens a session with raw requests, so that a call can be left
// in flight with its stream dropped, as a client that went away leaves it.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
	id := rawDo(t, req, "").Header.Get(sessionHeader)
	if id == "" {
		t.Fatal("initialize: no Mcp-Session-Id in the answer")
	}
	req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	rawDo(t, req, id)
	return id
}

func rawDo(t *testing.T, req *http.Request, id string) *http.Response {
	t.Helper()
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set(sessionHeader, id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := freshClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.Method, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// startCall sends a tools/call of block and returns once it runs; cancel
// drops its stream (not a cancellation: the client may come back).
func startCall(t *testing.T, url, id string, b *blocker) (drop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(sessionHeader, id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	go func() {
		if resp, err := freshClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	b.wait(t, b.started, "started")
	return cancel
}

func TestHTTPFront_DeleteEndsTheCallInFlight(t *testing.T) {
	t.Parallel()
	s, b := newBlockingServer(t)
	_, url := attachFront(t, s, HTTPOptions{SessionIdle: -1})
	id := rawSession(t, url)
	defer startCall(t, url, id, b)()

	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	done := make(chan int, 1)
	go func() { done <- rawDo(t, req, id).StatusCode }()
	b.wait(t, b.ended, "cancelled by DELETE")
	select {
	case code := <-done:
		if code != http.StatusNoContent {
			t.Errorf("DELETE: got %d, want 204", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DELETE did not answer within 10s")
	}
	waitSessions(t, s, 0, "after DELETE")
}

func TestHTTPFront_IdleEndsADroppedCall(t *testing.T) {
	t.Parallel()
	s, b := newBlockingServer(t)
	_, url := attachFront(t, s, HTTPOptions{SessionIdle: 200 * time.Millisecond})
	id := rawSession(t, url)
	drop := startCall(t, url, id, b)
	select {
	case <-b.ended:
		t.Fatal("the call ended while its request was still open")
	case <-time.After(400 * time.Millisecond): // twice the idle time
	}
	drop()
	b.wait(t, b.ended, "cancelled when its session went idle")
	waitSessions(t, s, 0, "after the idle time")
}

func TestHTTPFront_CallsInFlightCappedPerSession(t *testing.T) {
	t.Parallel()
	s, b := newBlockingServerWith(t, &Options{MaxCallsInFlight: 2})
	_, url := attachFront(t, s, HTTPOptions{SessionIdle: -1})
	a, other := connectHTTP(t, url), connectHTTP(t, url)
	defer a.Close()
	defer other.Close()

	call := func(cs *mcp.ClientSession, ctx context.Context) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { _, _ = call(a, ctx1) }()
	b.wait(t, b.started, "started (1 of 2)")
	go func() { _, _ = call(a, ctx2) }()
	b.wait(t, b.started, "started (2 of 2)")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := call(a, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := r.StructuredContent.(map[string]any); !r.IsError || m["code"] != CodeTooManyCalls {
		t.Fatalf("a third call in flight: isError=%v structured=%v; want %s", r.IsError, r.StructuredContent, CodeTooManyCalls)
	}

	// The cap is the session's: another session still runs a call.
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	go func() { _, _ = call(other, ctx3) }()
	b.wait(t, b.started, "started in the other session")

	// A call that returns frees its place.
	cancel1() // notifications/cancelled
	b.wait(t, b.ended, "ended by its cancellation")
	ctx4, cancel4 := context.WithCancel(context.Background())
	defer cancel4()
	go func() { _, _ = call(a, ctx4) }()
	b.wait(t, b.started, "started once a place was free")
}

// TestHTTPFront_SessionEndToldOnceCallsReturned: a DELETE runs
// OnSessionEnd once, with the session's id, after its call in flight has
// returned.
func TestHTTPFront_SessionEndToldOnceCallsReturned(t *testing.T) {
	t.Parallel()
	ended := make(chan string, 2)
	var s *Server
	var b *blocker
	s, b = newBlockingServerWith(t, &Options{OnSessionEnd: func(_ context.Context, id string) {
		if b.returns.Load() == 0 {
			t.Errorf("OnSessionEnd(%q) ran before the session's call returned", id)
		}
		ended <- id
	}})
	_, url := attachFront(t, s, HTTPOptions{SessionIdle: -1})
	id := rawSession(t, url)
	defer startCall(t, url, id, b)()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	if code := rawDo(t, req, id).StatusCode; code != http.StatusNoContent {
		t.Fatalf("DELETE: got %d, want 204", code)
	}
	select {
	case got := <-ended:
		if got != id {
			t.Errorf("OnSessionEnd(%q), want the session's id %q", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnSessionEnd did not run within 10s of DELETE")
	}
	s.WaitEnded()
	if len(ended) != 0 {
		t.Errorf("OnSessionEnd ran %d more times", len(ended))
	}
}

// TestHTTPFront_InFlightToldOfEachPOST: InFlight is told of each POST to
// /mcp as it begins and once it is answered, on the call lane and the SDK's
// path alike, and of nothing else.
func TestHTTPFront_InFlightToldOfEachPOST(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var begun, ended, now int
	f, err := NewHTTPFront(HTTPOptions{Token: testToken, SessionIdle: -1, InFlight: func(d int) {
		mu.Lock()
		defer mu.Unlock()
		now += d
		if d > 0 {
			begun++
		} else {
			ended++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, sdkCalls := laneServer(t)
	f.Attach(s)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	url := srv.URL + MCPPath
	id := laneSession(t, url) // initialize, initialized, tools/list
	for _, body := range []string{
		call(`2`, `{"name":"echo","arguments":{}}`),                     // the lane
		call(`3`, `{"name":"echo","_meta":{"other":1},"arguments":{}}`), // the SDK's path
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		laneDo(t, req, id)
	}
	resp, err := freshClient.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if begun != 5 || ended != 5 || now != 0 {
		t.Errorf("told of %d POSTs begun and %d answered (%d in flight after), want 5, 5 and 0", begun, ended, now)
	}
	if n := sdkCalls.Load(); n != 1 {
		t.Errorf("%d calls took the SDK's path, want 1", n)
	}
}
