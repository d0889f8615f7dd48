package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// egress runs each session's proxy under sandbox.network: proxy: made on
// the session's first command, in a network namespace of the session's own
// where the machine lets the host make one (the commands enter it and find
// the proxy on their loopback, and nothing else), else on the machine's
// loopback (the proxy variables alone). With namespaces one session's
// commands never reach another's proxy, each namespace holding its own;
// on the machine's loopback any local process can reach any session's.
type egress struct {
	rules *policy.NetworkRules
	// ask puts a question the table leaves open to the session (nil:
	// every such host is refused).
	ask func(ctx context.Context, sess *session.Session, t netproxy.Target, d policy.NetDecision) error
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
	// warned notes that the first session without a namespace was logged.
	warned bool
}

type egressSession struct {
	proxy  *netproxy.Proxy
	ns     *sandbox.EgressNamespace // nil: on the machine's loopback
	out    *sdk.Egress
	served chan struct{}
}

// newEgress returns the sessions' proxies judged by rules; netns says the
// machine has network namespaces for the plugins to enter (the host makes
// none where they could not enter it).
func newEgress(rules policy.NetworkRules, resolver netproxy.Resolver, log hclog.Logger, netns bool) *egress {
	e := &egress{rules: &rules, resolver: resolver, log: log, makeNS: sandbox.NewEgressNamespace, sessions: map[string]*egressSession{}}
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
	if sess == nil {
		return nil
	}
	id := sess.ID()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	if s := e.sessions[id]; s != nil {
		return s.out
	}
	s, err := e.start(sess)
	if err != nil {
		e.log.Warn("the session's proxy did not start: its commands get no network", "session", id, "error", err)
		return nil
	}
	e.sessions[id] = s
	return s.out
}

// start makes the session's listener and serves its proxy there.
func (e *egress) start(sess *session.Session) (*egressSession, error) {
	id := sess.ID()
	s := &egressSession{served: make(chan struct{})}
	var l net.Listener
	ns, err := e.makeNS()
	if err == nil {
		s.ns, l = ns, ns.Listener
		s.out = &sdk.Egress{NetNS: ns.Path, Proxy: l.Addr().String()}
	} else {
		if !e.warned {
			e.warned = true
			e.log.Warn("no network namespace for the sessions' proxies: commands find them by the proxy variables, and one that ignores them connects directly", "error", err)
		}
		if l, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("the proxy's listener: %w", err)
		}
		s.out = &sdk.Egress{Proxy: l.Addr().String()}
	}
	s.proxy = netproxy.New(netproxy.Options{
		Decider: e.decider(sess),
		Record: func(ev netproxy.Event) {
			if e.record != nil {
				e.record(sess, ev)
			}
		},
		Resolver: e.resolver,
		Logger:   e.log.Named("proxy").With("session", id),
	})
	go func() {
		defer close(s.served)
		if err := s.proxy.Serve(l); err != nil && !errors.Is(err, netproxy.ErrClosed) {
			e.log.Warn("the session's proxy stopped", "session", id, "error", err)
		}
	}()
	return s, nil
}

// decider judges the session's connections by the table, asking the
// session what the table leaves open.
func (e *egress) decider(sess *session.Session) netproxy.Decider {
	r := &netproxy.Rules{Network: e.rules}
	if e.ask != nil {
		r.Ask = func(ctx context.Context, t netproxy.Target, d policy.NetDecision) error {
			return e.ask(ctx, sess, t, d)
		}
	}
	return r
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
	_ = s.proxy.Close()
	<-s.served
	if s.ns != nil {
		_ = s.ns.Close()
	}
}

// askNetwork asks the session about a host its proxy's table leaves open.
func (a *App) askNetwork(ctx context.Context, sess *session.Session, t netproxy.Target, d policy.NetDecision) error {
	r := a.Approver.Network(ctx, sess, t.Host, fmt.Sprintf("a command of this session connects to %s: %s", t.HostPort(), d.Reason))
	netproxy.NoteAnswer(ctx, r.Allowed, r.By, r.Reason)
	if r.Allowed {
		return nil
	}
	return &netproxy.Refusal{Message: fmt.Sprintf("yagent refused %s: %s, and it was not approved (%s); do not try to reach it another way. %s",
		t.HostPort(), d.Reason, r.Reason, d.Hint)}
}
