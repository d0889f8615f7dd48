package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPPath is where the HTTP front serves MCP Streamable HTTP.
const MCPPath = "/mcp"

// DefaultSessionIdle is how long an HTTP session may go without a request
// before it is ended.
const DefaultSessionIdle = 30 * time.Minute

// HTTPOptions configures an HTTPFront.
type HTTPOptions struct {
	// Token is the bearer token every /mcp request must carry. Required: a
	// tool's own command is a local process too, so loopback is no
	// credential.
	Token string
	// AllowOrigins are the Origin values accepted besides same-port
	// loopback ones, e.g. "https://ide.example.com".
	AllowOrigins []string
	// MaxBody caps one request body; 0 means DefaultMaxFrame.
	MaxBody int64
	// SessionIdle ends a session that sent no request for this long; 0
	// means DefaultSessionIdle, a negative value never.
	SessionIdle time.Duration
	// ReadyWait is how long a request to /mcp that comes before the
	// plugins are described waits for them; 0 means DefaultReadyWait.
	ReadyWait time.Duration
	// InFlight, when set, is told of each POST to /mcp as it begins (+1)
	// and once it is answered (-1), on the call lane and the SDK's path
	// alike: `yagent serve --http` scales its processors with it.
	InFlight func(delta int)
}

// DefaultReadyWait bounds the wait of an early request to /mcp: a client
// that connects as serve starts gets its initialize answered (most do not
// retry a 503), and one that comes while the host cannot start is told.
const DefaultReadyWait = 30 * time.Second

// HTTPFront is the HTTP side of `yagent serve --http`. The health
// endpoints answer from the start, before the plugins are described; a
// request to /mcp before Attach gives it a server waits for it, at most
// ReadyWait, then gets 503.
type HTTPFront struct {
	opts      HTTPOptions
	tokenHash [sha256.Size]byte
	mcp       atomic.Pointer[attached]
	// ready is closed by Attach.
	ready     chan struct{}
	readyOnce sync.Once
}

type attached struct {
	server  *Server
	handler http.Handler
	idle    *idleSessions
	// lane answers plain tools/call POSTs beside handler (httplane.go).
	lane *httpLane
}

// NewHTTPFront returns a front that guards /mcp with opts.
func NewHTTPFront(opts HTTPOptions) (*HTTPFront, error) {
	if opts.Token == "" {
		return nil, errors.New("http front: no bearer token; give --token-file or YAGENT_TOKEN, or let serve generate one")
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxFrame
	}
	if opts.SessionIdle == 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.ReadyWait <= 0 {
		opts.ReadyWait = DefaultReadyWait
	}
	for _, o := range opts.AllowOrigins {
		if _, err := parseOrigin(o); err != nil {
			return nil, fmt.Errorf("http front: --allow-origin %q: %w", o, err)
		}
	}
	return &HTTPFront{opts: opts, tokenHash: sha256.Sum256([]byte(opts.Token)), ready: make(chan struct{})}, nil
}

// Attach serves s on /mcp and makes the front ready.
//
// The front, not the SDK, times idle sessions out and handles the end of a
// session first: the SDK's Close waits for the session's calls in flight
// to return, so a session ended with a command running would otherwise
// stay until the command ends by itself.
func (f *HTTPFront) Attach(s *Server) {
	// A client whose stream dropped resumes it with Last-Event-ID and gets
	// what it missed; the store keeps the latest 10 MiB across sessions
	// and forgets a session when it ends.
	store := mcp.NewMemoryEventStore(nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server },
		&mcp.StreamableHTTPOptions{
			Logger:              s.logger,
			MaxRequestBodyBytes: f.opts.MaxBody,
			EventStore:          store,
		})
	a := &attached{server: s, handler: h, lane: newHTTPLane(s, store)}
	if f.opts.SessionIdle > 0 {
		a.idle = &idleSessions{after: f.opts.SessionIdle, expire: func(id string) { s.EndSession(id) }, live: func(id string) bool { return s.lookup(id) != nil }}
	}
	f.mcp.Store(a)
	f.readyOnce.Do(func() { close(f.ready) })
}

// Ready reports whether a server is attached.
func (f *HTTPFront) Ready() bool { return f.mcp.Load() != nil }

// ServeHTTP routes /healthz and /readyz (no token: orchestrators probe
// them) and /mcp behind the guard.
func (f *HTTPFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		_, _ = io.WriteString(w, "ok\n")
	case "/readyz":
		if !f.Ready() {
			http.Error(w, "plugins not described yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	case MCPPath:
		f.guard(http.HandlerFunc(f.serveMCP)).ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// waitReady waits for Attach, at most ReadyWait or until the request
// ends; nil when the server is still not there.
func (f *HTTPFront) waitReady(ctx context.Context) *attached {
	timer := time.NewTimer(f.opts.ReadyWait)
	defer timer.Stop()
	select {
	case <-f.ready:
	case <-timer.C:
	case <-ctx.Done():
	}
	return f.mcp.Load()
}

// sessionHeader names the session of a Streamable HTTP request.
const sessionHeader = "Mcp-Session-Id"

func (f *HTTPFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	a := f.mcp.Load()
	if a == nil {
		a = f.waitReady(r.Context())
	}
	if a == nil {
		http.Error(w, fmt.Sprintf("plugins not described after %v; retry when /readyz answers 200", f.opts.ReadyWait), http.StatusServiceUnavailable)
		return
	}
	id := r.Header.Get(sessionHeader)
	switch r.Method {
	case http.MethodDelete:
		// Cancel first: the SDK's Close below waits for the calls.
		a.server.cancelCalls(id)
		a.idle.forget(id)
	case http.MethodPost:
		// Only POSTs count as activity, as in the SDK: a GET stream may
		// stay open for ever.
		if f.opts.InFlight != nil {
			f.opts.InFlight(1)
			defer f.opts.InFlight(-1)
		}
		a.idle.begin(id)
		defer func() {
			if id == "" { // an initialize: the session is named in the answer
				id = w.Header().Get(sessionHeader)
			}
			a.idle.end(id)
		}()
		if id != "" && a.lane != nil {
			taken, release := a.lane.serve(w, r, id)
			if taken {
				return
			}
			if release != nil {
				defer release()
			}
		}
	case http.MethodGet:
		if a.lane.resume(w, r, id) {
			return
		}
	}
	a.handler.ServeHTTP(w, r)
}

// idleSessions ends a session after a time without a POST in flight. A
// nil *idleSessions never does.
type idleSessions struct {
	after  time.Duration
	expire func(id string)
	live   func(id string) bool

	mu       sync.Mutex
	sessions map[string]*idleSession
}

type idleSession struct {
	inFlight int
	timer    *time.Timer
}

func (t *idleSessions) begin(id string) {
	if t == nil || id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.sessions[id]; e != nil {
		e.inFlight++
		e.timer.Stop()
	}
}

func (t *idleSessions) end(id string) {
	if t == nil || id == "" || !t.live(id) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.sessions[id]
	if e == nil {
		if t.sessions == nil {
			t.sessions = map[string]*idleSession{}
		}
		e = &idleSession{timer: time.AfterFunc(t.after, func() { t.fire(id) })}
		t.sessions[id] = e
		return
	}
	if e.inFlight > 0 {
		e.inFlight--
	}
	if e.inFlight == 0 {
		e.timer.Reset(t.after)
	}
}

func (t *idleSessions) fire(id string) {
	t.mu.Lock()
	e := t.sessions[id]
	busy := e != nil && e.inFlight > 0
	if !busy {
		delete(t.sessions, id)
	}
	t.mu.Unlock()
	if !busy {
		t.expire(id)
	}
}

func (t *idleSessions) forget(id string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.sessions[id]; e != nil {
		e.timer.Stop()
		delete(t.sessions, id)
	}
}

// guard applies, in order: the Origin check (403), the bearer token (401)
// and the body cap (413).
func (f *HTTPFront) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !f.originAllowed(r, origin) {
			http.Error(w, fmt.Sprintf("origin %q not allowed; start serve with --allow-origin %s to accept it", origin, origin), http.StatusForbidden)
			return
		}
		if !f.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="yagent"`)
			http.Error(w, "missing or wrong bearer token; send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		if r.ContentLength > f.opts.MaxBody {
			http.Error(w, fmt.Sprintf("request body over %d bytes", f.opts.MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, f.opts.MaxBody)
		}
		next.ServeHTTP(w, r)
	})
}

// authorized compares the request's bearer token with the front's in
// constant time; hashing first keeps the token's length out of the timing.
func (f *HTTPFront) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], f.tokenHash[:]) == 1
}

// originAllowed accepts an Origin listed in AllowOrigins, or a loopback one
// (127.0.0.1, [::1], localhost) on the port the request came in on. A
// loopback host name alone is not enough: a rebound DNS name resolves to
// 127.0.0.1 too, but its Origin names that host, not a loopback one.
func (f *HTTPFront) originAllowed(r *http.Request, origin string) bool {
	u, err := parseOrigin(origin)
	if err != nil {
		return false
	}
	for _, a := range f.opts.AllowOrigins {
		if au, _ := parseOrigin(a); au != nil && au.Scheme == u.Scheme && strings.EqualFold(au.Host, u.Host) {
			return true
		}
	}
	if !IsLoopbackHost(u.Hostname()) {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return port == localPort(r)
}

func parseOrigin(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, errors.New("want scheme://host[:port]")
	}
	return u, nil
}

// localPort is the port of the listener the request arrived on.
func localPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		if _, port, err := net.SplitHostPort(a.String()); err == nil {
			return port
		}
	}
	return ""
}

// IsLoopbackHost reports whether host (no port) names the loopback
// interface: localhost or a loopback IP.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewToken returns a fresh bearer token: 32 random bytes, base64url.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return base64.RawURLEncoding.EncodeToString(b)
}
