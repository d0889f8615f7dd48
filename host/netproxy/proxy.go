package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/policy"
)

// The values of Target.Proto.
const (
	ProtoConnect = "connect" // an HTTP CONNECT tunnel
	ProtoHTTP    = "http"    // a plain HTTP request, forwarded
	ProtoSOCKS5  = "socks5"  // a SOCKS5 CONNECT
)

// Bounds on what a client may send before it is answered.
const (
	// handshakeTimeout is how long a client has, from its first byte, to
	// finish its request line and headers or its SOCKS handshake.
	handshakeTimeout = 30 * time.Second
	// maxHeaderBytes bounds an HTTP request line and headers.
	maxHeaderBytes = 64 << 10
	// idleTimeout is how long a kept-alive client connection may wait
	// for its next request.
	idleTimeout = 2 * time.Minute
	// defaultDialTimeout bounds one dial when Options.Dial is nil.
	defaultDialTimeout = 10 * time.Second
)

// ErrClosed is what Serve returns once Close was called.
var ErrClosed = errors.New("netproxy: proxy closed")

// Target is what a client asked to reach.
type Target struct {
	// Host is a name in lower-case ASCII without a trailing dot, or an IP
	// address in its usual form (an IPv4-mapped IPv6 address as IPv4; no
	// brackets, no zone).
	Host string
	Port int
	// Proto is how the client asked: ProtoConnect, ProtoHTTP or
	// ProtoSOCKS5.
	Proto string
	// Method and URL of a plain HTTP request (empty for connect and
	// socks5), for the question and the audit. A password in the URL is
	// redacted.
	Method, URL string
}

// HostPort is the target as host:port, an IPv6 address in brackets.
func (t Target) HostPort() string {
	return net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
}

// Decider decides for the proxy. Both methods may block (a question to a
// user); they get the connection's context, which ends when the client
// goes away or the proxy closes, and they must return when it does: Close
// waits for them. They are called concurrently for different connections.
type Decider interface {
	// Name judges the host before it is resolved: an error refuses, and
	// the name is then never looked up. It is called for IP-literal hosts
	// too.
	Name(ctx context.Context, t Target) error
	// Addrs judges the addresses the name resolved to (for an IP literal:
	// that one address) and returns those the proxy may connect to, in
	// order; an error refuses. The proxy dials nothing else.
	Addrs(ctx context.Context, t Target, addrs []netip.Addr) ([]netip.Addr, error)
}

// Refusal is a refusal with the text the client is shown: the body of a
// 403, or the log line of a refused SOCKS5 request. A Decider returns a
// *Refusal; any other error refuses too, with a generic message naming the
// host, since its text was not written for the client.
type Refusal struct {
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Resolver looks names up; net.DefaultResolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Event is one decision and connection (or one plain HTTP request), for
// the audit trail.
type Event struct {
	Target Target
	// Addr is the address connected to; zero if none was.
	Addr netip.AddrPort
	// Allowed is whether the Decider allowed the target: it passed Name
	// and Addrs returned addresses. A target allowed whose dial failed is
	// Allowed with the dial error as Reason.
	Allowed bool
	// Reason is the refusal's message, or why the target could not be
	// reached or the exchange broke off; empty for one that ended well.
	Reason string
	// Up and Down are the bytes client→upstream and upstream→client: the
	// tunnel's payload, or a plain HTTP request's body and its response's
	// body.
	Up, Down int64
	Start    time.Time
	Duration time.Duration
	// Verdict is what the Decider noted of its judgment (NoteVerdict,
	// NoteAnswer); zero when it noted nothing.
	Verdict Verdict
}

// Verdict is what a Decider says of its judgment of one connection, for
// the audit trail: the strictest of its judgments (the name's, each
// address's) and the answer to a question it put.
type Verdict struct {
	// Decision is the policy's answer: "allow", "ask" or "deny".
	Decision string
	// Rule is the policy's entry that decided; Reason why it asked or
	// refused.
	Rule, Reason string
	// Answer is the answer to the question, nil when none was put.
	Answer *Answer
}

// Answer is who answered a question and how.
type Answer struct {
	Approved   bool
	By, Reason string
}

// NoteVerdict records, from a Decider, one judgment of the connection ctx
// belongs to: a stricter one (deny over ask over allow) replaces an
// earlier one.
func NoteVerdict(ctx context.Context, decision, rule, reason string) {
	if n, _ := ctx.Value(verdictKey{}).(*verdictNote); n != nil {
		n.mu.Lock()
		if strictness(decision) > strictness(n.v.Decision) {
			n.v.Decision, n.v.Rule, n.v.Reason = decision, rule, reason
		}
		n.mu.Unlock()
	}
}

// NoteAnswer records, from a Decider, the answer to the question it put
// about the connection ctx belongs to.
func NoteAnswer(ctx context.Context, approved bool, by, reason string) {
	if n, _ := ctx.Value(verdictKey{}).(*verdictNote); n != nil {
		n.mu.Lock()
		n.v.Answer = &Answer{Approved: approved, By: by, Reason: reason}
		n.mu.Unlock()
	}
}

func strictness(decision string) int {
	switch decision {
	case policy.NetworkAllow:
		return 1
	case policy.NetworkAsk:
		return 2
	case policy.NetworkDeny:
		return 3
	}
	return 0
}

type verdictKey struct{}

// verdictNote is where a connection's Decider notes its Verdict.
type verdictNote struct {
	mu sync.Mutex
	v  Verdict
}

// Options configures a Proxy.
type Options struct {
	// Decider decides every target; nil refuses them all, so a proxy
	// wired without a policy fails closed.
	Decider Decider
	// Resolver looks names up; nil = net.DefaultResolver.
	Resolver Resolver
	// Dial connects to a decided address; nil = a net.Dialer with a
	// 10 s timeout.
	Dial func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
	// Record receives one Event per CONNECT or SOCKS5 connection and per
	// plain HTTP request that reached the Decider, when it ends; nil =
	// none. It is called from the connections' goroutines, concurrently.
	// A request the proxy could not parse has no target and no Event; the
	// Logger has it.
	Record func(Event)
	// Logger logs what the client is not told; nil = a null logger.
	Logger hclog.Logger
}

// Proxy is a session's egress proxy. Its methods are safe for concurrent
// use.
type Proxy struct {
	decider  Decider
	resolver Resolver
	dialer   func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
	record   func(Event)
	log      hclog.Logger

	// ctx ends when Close is called; every connection's context derives
	// from it, so a Decider still asking is released.
	ctx    context.Context
	cancel context.CancelFunc
	// srv serves the connections that speak HTTP, which httpl hands it.
	srv   *http.Server
	httpl *connListener

	mu         sync.Mutex
	closed     bool
	srvStarted bool
	listeners  map[net.Listener]struct{}
	// conns are the open client and upstream connections, which Close
	// closes.
	conns map[net.Conn]struct{}
	// wg counts srv.Serve, each client connection until it is done and
	// each CONNECT handler (a hijacked connection outlives its state in
	// srv); Close waits for it.
	wg sync.WaitGroup
}

// New returns a proxy that serves nothing until Serve is called.
func New(o Options) *Proxy {
	p := &Proxy{
		decider:   o.Decider,
		resolver:  o.Resolver,
		dialer:    o.Dial,
		record:    o.Record,
		log:       o.Logger,
		httpl:     newConnListener(),
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	if p.decider == nil {
		p.decider = refuseAll{}
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.dialer == nil {
		d := &net.Dialer{Timeout: defaultDialTimeout}
		p.dialer = func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error) {
			return d.DialContext(ctx, network, addr.String())
		}
	}
	if p.log == nil {
		p.log = hclog.NewNullLogger()
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout: handshakeTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
		ConnState:         p.connState,
		// OPTIONS * is a question to the proxy itself, which has no
		// options to offer: the handler answers it as it does any
		// request without a target.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     p.log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	}
	return p
}

// Serve accepts connections on l until l is closed or Close is called,
// and closes l when it returns. It tells per connection whether the client
// speaks SOCKS5 (first byte 0x05) or HTTP. Several listeners may be served
// at once. It returns ErrClosed once Close was called, or the error that
// stopped it accepting.
func (p *Proxy) Serve(l net.Listener) error {
	defer l.Close()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	if !p.srvStarted {
		p.srvStarted = true
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// It returns when Close closes srv or httpl; either way
			// nothing is left for it to do.
			_ = p.srv.Serve(p.httpl)
		}()
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		raw, err := l.Accept()
		if err != nil {
			if p.ctx.Err() != nil {
				return ErrClosed
			}
			if !isTemporary(err) {
				return fmt.Errorf("netproxy: accept on %s: %w", l.Addr(), err)
			}
			// Out of descriptors, say: wait for some to be freed
			// rather than spin, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.log.Warn("accept failed; retrying", "listener", l.Addr(), "error", err, "in", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-p.ctx.Done():
				t.Stop()
				return ErrClosed
			}
			continue
		}
		backoff = 0
		c := p.newClient(raw)
		if c == nil {
			return ErrClosed
		}
		go p.serveConn(c)
	}
}

// Close stops every listener, closes every open connection (client and
// upstream) and waits for the connections' goroutines, a Decider's
// included. It is safe to call twice; it must not be called from a
// Decider or from Record, which it would wait for.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	ls := make([]net.Listener, 0, len(p.listeners))
	for l := range p.listeners {
		ls = append(ls, l)
	}
	p.mu.Unlock()

	p.cancel()
	for _, l := range ls {
		_ = l.Close()
	}
	_ = p.httpl.Close()
	// srv closes the HTTP connections it is reading; the snapshot below
	// holds them too, and the hijacked and SOCKS5 ones and the upstreams.
	_ = p.srv.Close()
	p.mu.Lock()
	cs := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
	p.wg.Wait()
	return nil
}

// newClient tracks a connection just accepted and counts its goroutine;
// nil when the proxy is closed, raw then closed.
func (p *Proxy) newClient(raw net.Conn) *clientConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = raw.Close()
		return nil
	}
	c := &clientConn{Conn: raw, p: p}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return c
}

// track adds an upstream connection to those Close closes; false when the
// proxy is closed, the caller then closing c.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// closeUpstream closes an upstream connection the proxy dialed.
func (p *Proxy) closeUpstream(c net.Conn) {
	_ = c.Close()
	p.untrack(c)
}

// serveConn reads a client's first byte and hands the connection to the
// SOCKS5 handshake or to srv.
func (p *Proxy) serveConn(c *clientConn) {
	defer p.wg.Done()
	_ = c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	var first [1]byte
	if _, err := io.ReadFull(c.Conn, first[:]); err != nil {
		_ = c.Close()
		return
	}
	if first[0] == socksVersion {
		p.serveSOCKS(c)
		return
	}
	c.pending = first[:]
	// srv's goroutine for c is counted until connState sees it closed or
	// hijacked. The count is taken here, while this goroutine's own
	// still holds wg above zero, so Close cannot be past its Wait.
	p.wg.Add(1)
	if !p.httpl.push(c) {
		p.wg.Done()
		_ = c.Close()
	}
}

// connState releases the count serveConn took for a connection srv is
// done with.
func (p *Proxy) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateClosed || s == http.StateHijacked {
		p.wg.Done()
	}
}

// finish completes ev and hands it to Record.
func (p *Proxy) finish(ev *Event) {
	ev.Duration = time.Since(ev.Start)
	p.log.Debug("connection", "proto", ev.Target.Proto, "target", ev.Target.HostPort(),
		"addr", ev.Addr, "allowed", ev.Allowed, "reason", ev.Reason, "up", ev.Up, "down", ev.Down)
	if p.record != nil {
		p.record(*ev)
	}
}

// isTemporary reports whether an Accept error may pass (descriptors
// exhausted, say). It asks through an interface of its own because
// net.Error's Temporary is deprecated for the ambiguity of other errors;
// for Accept it is still the signal net/http uses.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// refuseAll is the Decider of a proxy given none.
type refuseAll struct{}

func (refuseAll) Name(_ context.Context, t Target) error {
	return &Refusal{Message: "no network policy is set for this session: " + t.Host + " is refused"}
}

func (refuseAll) Addrs(_ context.Context, t Target, _ []netip.Addr) ([]netip.Addr, error) {
	return nil, &Refusal{Message: "no network policy is set for this session: " + t.Host + " is refused"}
}

// connListener hands srv the client connections that speak HTTP.
type connListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// push hands c to srv; false once the listener is closed.
func (l *connListener) push(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return proxyAddr{} }

// proxyAddr is connListener's address: it listens on no socket of its own.
type proxyAddr struct{}

func (proxyAddr) Network() string { return "netproxy" }
func (proxyAddr) String() string  { return "netproxy" }
