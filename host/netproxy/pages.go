package netproxy

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/yagent/yagent/policy"
)

// Pages is the Decider of the requests of a tool that sends them itself:
// the browser's navigations, its pages' subresources and their scripts'
// requests alike (which the proxy cannot tell apart inside a tunnel), and
// web_fetch's. The table decides what it allows and what it denies. What
// it would ask about is not asked here: a URL the model names
// (browser_navigate's, web_fetch's) was asked about by the guard before
// the request went, and a page's own request cannot wait for a person.
// So a host, or an address a name resolved to, that the table leaves open
// is connected when it is the origin of a navigation the session approved
// (a local dev server's own /app.js keeps working), refused when it is of
// this machine or its networks (a page reaching 127.0.0.1, a router or a
// metadata service is the attack), and otherwise connected: a page's
// public subresources, under network.unlisted: ask (under unlisted: deny
// the table refuses them itself).
type Pages struct {
	// Network is the table; nil is the empty one.
	Network *policy.NetworkRules
	// Approved reports whether t is the origin (host and port) of a URL
	// the session approved (a navigation, a fetch); nil approves none.
	Approved func(t Target) bool
}

// Who answers for the browser's requests in the audit trail, the table
// having left them open.
const (
	// ByNavigation: the target is the origin of a URL the session
	// approved to open (browser_navigate, a new tab, web_fetch).
	ByNavigation = "navigation"
	// ByPage: a page's request, connected to a public host or refused a
	// host of this machine or its networks, by the rule above.
	ByPage = "page"
)

// Name judges the host as the request wrote it.
func (p *Pages) Name(ctx context.Context, t Target) error {
	h, err := targetHost(t)
	if err != nil {
		return err
	}
	return p.settle(ctx, t, h, p.Network.Judge(h))
}

// Addrs keeps the addresses the request may reach: an address of this
// machine or its networks is judged as that address (a public name that
// resolves to 127.0.0.1 is refused as 127.0.0.1 is).
func (p *Pages) Addrs(ctx context.Context, t Target, addrs []netip.Addr) ([]netip.Addr, error) {
	return addrsBy(t, addrs, func(h policy.Host, a netip.Addr) error {
		return p.settle(ctx, t, policy.AddrHost(a.WithZone("")), p.Network.JudgeAddr(h, a))
	})
}

// settle turns the table's decision on h (the name, or an address it
// resolved to) into nil or the refusal, by the rule of Pages.
func (p *Pages) settle(ctx context.Context, t Target, h policy.Host, d policy.NetDecision) error {
	NoteVerdict(ctx, d.Action, d.Entry, d.Reason)
	switch d.Action {
	case policy.NetworkAllow:
		return nil
	case policy.NetworkAsk:
		switch {
		case p.Approved != nil && p.Approved(t):
			NoteAnswer(ctx, true, ByNavigation, "the origin of a URL the session approved")
			return nil
		case h.Internal == "":
			NoteAnswer(ctx, true, ByPage, "a page's request to a public host")
			return nil
		}
		NoteAnswer(ctx, false, ByPage, "a page's request to "+h.Internal)
		return &Refusal{Message: fmt.Sprintf("yagent refused the request to %s: %s; a page or web_fetch reaches such a host only when the profile names it or the session approved a URL of its origin (browser_navigate and web_fetch ask). Do not try to reach it another way; %s",
			t.HostPort(), d.Reason, d.Hint)}
	}
	return &Refusal{Message: fmt.Sprintf("yagent refused %s: %s; %s", t.HostPort(), d.Reason, d.Hint)}
}
