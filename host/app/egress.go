package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// egress runs each session's proxies under sandbox.network: proxy, each
// made on first use. The commands' is in a network namespace of the
// session's own where the machine lets the host make one (the commands
// enter it and find the proxy on their loopback, and nothing else), else on
// the machine's loopback (the proxy variables alone); with namespaces one
// session's commands never reach another's proxy, each namespace holding
// its own. The browser's (Pages) is on the machine's loopback, which
// Chromium, in no namespace, reaches; it judges by netproxy.Pages.
type egress struct {
	rules *policy.NetworkRules
	// ask puts a question the table leaves open to the session (nil:
	// every such host is refused); who names the commands that may have
	// asked (see commands).
	ask func(ctx context.Context, sess *session.Session, t netproxy.Target, d policy.NetDecision, who string) error
	// record writes each connection's line in the audit trail; nil =
	// none.
	record   func(sess *session.Session, ev netproxy.Event)
	resolver netproxy.Resolver
	log      hclog.Logger
	// makeNS makes a session's namespace: sandbox.NewEgressNamespace
	// where the plugins have namespaces to enter, else a refusal.
	makeNS func() (*sandbox.EgressNamespace, error)

	mu       sync.Mutex
	closed   bool
	sessions map[string]*egressSession
	// running are the commands of each session's calls in flight, by
	// session and call ID (egress is an adapter.Observer for them).
	running map[string]map[string]string
	// warned notes that the first session without a namespace was logged.
	warned bool
}

type egressSession struct {
	sess *session.Session
	// cmds is the commands' proxy, pages the browser's: each started on
	// its first use, nil before.
	cmds, pages *lane
	// origins are the origins (host:port, as originKey spells them) of
	// the navigations the session approved, which its pages may reach.
	origins map[string]bool
}

// lane is one proxy of a session and where it listens.
type lane struct {
	proxy  *netproxy.Proxy
	ns     *sandbox.EgressNamespace // nil: on the machine's loopback
	out    *sdk.Egress
	served chan struct{}
}

// newEgress returns the sessions' proxies judged by rules; netns says the
// machine has network namespaces for the plugins to enter (the host makes
// none where they could not enter it).
func newEgress(rules policy.NetworkRules, resolver netproxy.Resolver, log hclog.Logger, netns bool) *egress {
	e := &egress{rules: &rules, resolver: resolver, log: log, makeNS: sandbox.NewEgressNamespace, sessions: map[string]*egressSession{}, running: map[string]map[string]string{}}
	if !netns {
		e.makeNS = func() (*sandbox.EgressNamespace, error) {
			return nil, errors.New("the sandbox has no network namespaces here")
		}
	}
	return e
}

// For returns where the session's commands reach its proxy, starting it
// on first use; nil when it cannot be started (the commands then get no
// network: the empty namespace).
func (e *egress) For(sess *session.Session) *sdk.Egress {
	return e.lane(sess, nil, false)
}

// Pages returns where the session's browser reaches its proxy for pages,
// on the machine's loopback (the browser enters no namespace; --proxy-server
// sends it every request), starting it on first use; nil when it cannot be
// started. approved are the URLs of the navigations the call was approved
// to make (by the user, a pass or -y): their origins stay open to the
// session's pages (see netproxy.Pages).
func (e *egress) Pages(sess *session.Session, approved []string) *sdk.Egress {
	return e.lane(sess, approved, true)
}

func (e *egress) lane(sess *session.Session, approved []string, pages bool) *sdk.Egress {
	if sess == nil {
		return nil
	}
	id := sess.ID()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	s := e.sessions[id]
	if s == nil {
		s = &egressSession{sess: sess, origins: map[string]bool{}}
		e.sessions[id] = s
	}
	for _, u := range approved {
		if k, ok := originKey(u); ok {
			s.origins[k] = true
		}
	}
	l := &s.cmds
	if pages {
		l = &s.pages
	}
	if *l == nil {
		var err error
		if *l, err = e.start(s, pages); err != nil {
			e.log.Warn("the session's proxy did not start: its commands or its browser get no network", "session", id, "pages", pages, "error", err)
			return nil
		}
	}
	return (*l).out
}

// start makes the listener of one of the session's proxies and serves it
// there: the commands' in the session's namespace where the machine has
// one, the pages' on the machine's loopback.
func (e *egress) start(s *egressSession, pages bool) (*lane, error) {
	id := s.sess.ID()
	ln := &lane{served: make(chan struct{})}
	var l net.Listener
	var err error
	var ns *sandbox.EgressNamespace
	if !pages {
		ns, err = e.makeNS()
	}
	switch {
	case !pages && err == nil:
		ln.ns, l = ns, ns.Listener
		ln.out = &sdk.Egress{NetNS: ns.Path, Proxy: l.Addr().String()}
	default:
		if !pages && !e.warned {
			e.warned = true
			e.log.Warn("no network namespace for the sessions' proxies: commands find them by the proxy variables, and one that ignores them connects directly", "error", err)
		}
		if l, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("the proxy's listener: %w", err)
		}
		ln.out = &sdk.Egress{Proxy: l.Addr().String()}
	}
	var decider netproxy.Decider = e.decider(s.sess)
	if pages {
		decider = &netproxy.Pages{Network: e.rules, Approved: func(t netproxy.Target) bool {
			h, err := policy.ParseHost(t.Host)
			if err != nil {
				return false
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			return s.origins[net.JoinHostPort(h.Name, strconv.Itoa(t.Port))]
		}}
	}
	ln.proxy = netproxy.New(netproxy.Options{
		Decider: decider,
		Record: func(ev netproxy.Event) {
			if e.record != nil {
				e.record(s.sess, ev)
			}
		},
		Resolver: e.resolver,
		Logger:   e.log.Named("proxy").With("session", id, "pages", pages),
	})
	go func() {
		defer close(ln.served)
		if err := ln.proxy.Serve(l); err != nil && !errors.Is(err, netproxy.ErrClosed) {
			e.log.Warn("the session's proxy stopped", "session", id, "error", err)
		}
	}()
	return ln, nil
}

// originKey is the origin of an http(s) URL as the proxy's target names
// it (host:port, the host as policy.ParseHost spells it, the scheme's port
// when none is written); false for any other URL.
func originKey(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	port := u.Port()
	switch {
	case port != "":
	case strings.EqualFold(u.Scheme, "http"):
		port = "80"
	case strings.EqualFold(u.Scheme, "https"):
		port = "443"
	default:
		return "", false
	}
	h, err := policy.ParseHost(u.Hostname())
	if err != nil {
		return "", false
	}
	return net.JoinHostPort(h.Name, port), true
}

// decider judges the session's connections by the table, asking the
// session what the table leaves open.
func (e *egress) decider(sess *session.Session) netproxy.Decider {
	r := &netproxy.Rules{Network: e.rules}
	if e.ask != nil {
		r.Ask = func(ctx context.Context, t netproxy.Target, d policy.NetDecision) error {
			return e.ask(ctx, sess, t, d, e.commands(sess.ID()))
		}
	}
	return r
}

// The proxy cannot tell which of a session's processes opened a
// connection, so the question names the commands of the session's calls in
// flight: the one running, in the usual case of one at a time.
var _ adapter.Observer = (*egress)(nil)

// Start implements adapter.Observer.
func (e *egress) Start(ctx context.Context, _ *adapter.CallRecord) context.Context { return ctx }

// Decide notes the command of a call that goes on to run.
func (e *egress) Decide(_ context.Context, rec *adapter.CallRecord) error {
	if !rec.Allowed {
		return nil
	}
	for p, role := range rec.Roles {
		if cmd, ok := rec.Args[p].(string); ok && role == sdk.RoleCommand {
			e.mu.Lock()
			m := e.running[rec.SessionID]
			if m == nil {
				m = map[string]string{}
				e.running[rec.SessionID] = m
			}
			m[rec.ID] = cmd
			e.mu.Unlock()
		}
	}
	return nil
}

// Finish forgets the call's command.
func (e *egress) Finish(_ context.Context, rec *adapter.CallRecord, _ *adapter.Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.running[rec.SessionID]; m != nil {
		delete(m, rec.ID)
		if len(m) == 0 {
			delete(e.running, rec.SessionID)
		}
	}
}

// commands names, for a question, what of the session may have opened a
// connection: the commands of its calls in flight (at most three, each cut
// to 200 bytes), or a command of the session run in the background.
func (e *egress) commands(id string) string {
	e.mu.Lock()
	cmds := slices.Sorted(maps.Values(e.running[id]))
	e.mu.Unlock()
	if len(cmds) == 0 {
		return "a command of this session (none is running now: one started in the background)"
	}
	more := ""
	if len(cmds) > 3 {
		more = fmt.Sprintf(" and %d more", len(cmds)-3)
		cmds = cmds[:3]
	}
	for i, c := range cmds {
		if len(c) > 200 {
			c = strings.ToValidUTF8(c[:200], "") + "…"
		}
		cmds[i] = "`" + c + "`"
	}
	if len(cmds) == 1 {
		return "the command " + cmds[0] + more
	}
	return "one of the commands " + strings.Join(cmds, ", ") + more
}

// End stops the session's proxy and lets its namespace go: the connections
// its commands still hold are closed.
func (e *egress) End(id string) {
	e.mu.Lock()
	s := e.sessions[id]
	delete(e.sessions, id)
	e.mu.Unlock()
	if s != nil {
		s.stop()
	}
}

// Close stops every session's proxy.
func (e *egress) Close() {
	e.mu.Lock()
	e.closed = true
	ss := e.sessions
	e.sessions = nil
	e.mu.Unlock()
	for _, s := range ss {
		s.stop()
	}
}

func (s *egressSession) stop() {
	for _, l := range []*lane{s.cmds, s.pages} {
		if l == nil {
			continue
		}
		_ = l.proxy.Close()
		<-l.served
		if l.ns != nil {
			_ = l.ns.Close()
		}
	}
}

// askNetwork asks the session about a host its proxy's table leaves open.
func (a *App) askNetwork(ctx context.Context, sess *session.Session, t netproxy.Target, d policy.NetDecision, who string) error {
	r := a.Approver.Network(ctx, sess, t.Host, fmt.Sprintf("%s connects to %s: %s", who, t.HostPort(), d.Reason))
	netproxy.NoteAnswer(ctx, r.Allowed, r.By, r.Reason)
	if r.Allowed {
		return nil
	}
	return &netproxy.Refusal{Message: fmt.Sprintf("yagent refused %s: %s, and it was not approved (%s); do not try to reach it another way. %s",
		t.HostPort(), d.Reason, r.Reason, d.Hint)}
}
