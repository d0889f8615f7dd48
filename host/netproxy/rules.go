package netproxy

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/yagent/yagent/policy"
)

// Rules is the Decider over a profile's network table: what the table
// allows is connected, what it denies is refused with its reason, and what
// it would ask about goes to Ask.
type Rules struct {
	// Network is the table; nil is the empty one (every host asks).
	Network *policy.NetworkRules
	// Ask puts a question the table leaves open: nil (approved) or an
	// error (refused; a *Refusal's text is shown), noting who answered
	// (NoteAnswer). It may block while a user answers. A nil Ask refuses every question, for a client that
	// cannot answer one; the refusal names the entry that would allow it.
	Ask func(ctx context.Context, t Target, d policy.NetDecision) error
}

// Name judges the host as the client wrote it, before it is resolved.
func (r *Rules) Name(ctx context.Context, t Target) error {
	h, err := targetHost(t)
	if err != nil {
		return err
	}
	return r.settle(ctx, t, r.Network.Judge(h))
}

// Addrs keeps the addresses the table (or an answer) lets t reach: an
// address of this machine or its networks is judged as that address, so a
// public name that resolves to 127.0.0.1 asks as 127.0.0.1 does. The first
// refusal is returned when no address is left.
func (r *Rules) Addrs(ctx context.Context, t Target, addrs []netip.Addr) ([]netip.Addr, error) {
	return addrsBy(t, addrs, func(h policy.Host, a netip.Addr) error {
		return r.settle(ctx, t, r.Network.JudgeAddr(h, a))
	})
}

// targetHost is t's host as the policy reads it, or the refusal of one it
// cannot read.
func targetHost(t Target) (policy.Host, error) {
	h, err := policy.ParseHost(t.Host)
	if err != nil {
		return policy.Host{}, &Refusal{Message: fmt.Sprintf("%s is no host name yagent reads: %v", t.Host, err)}
	}
	return h, nil
}

// addrsBy keeps the addresses of t that judge lets it reach, in order: an
// address written as the host was judged by Name already. The first
// refusal is returned when no address is left.
func addrsBy(t Target, addrs []netip.Addr, judge func(h policy.Host, a netip.Addr) error) ([]netip.Addr, error) {
	if lit, err := netip.ParseAddr(t.Host); err == nil && len(addrs) == 1 && addrs[0] == lit {
		return addrs, nil
	}
	h, err := targetHost(t)
	if err != nil {
		return nil, err
	}
	var kept []netip.Addr
	var first error
	for _, a := range addrs {
		if err := judge(h, a); err == nil {
			kept = append(kept, a)
		} else if first == nil {
			first = err
		}
	}
	if len(kept) == 0 && first != nil {
		return nil, first
	}
	return kept, nil
}

// settle turns a decision into nil (connect) or the refusal, noting it
// for the audit trail.
func (r *Rules) settle(ctx context.Context, t Target, d policy.NetDecision) error {
	NoteVerdict(ctx, d.Action, d.Entry, d.Reason)
	switch d.Action {
	case policy.NetworkAllow:
		return nil
	case policy.NetworkAsk:
		if r.Ask != nil {
			return r.Ask(ctx, t, d)
		}
		NoteAnswer(ctx, false, "nobody", "no one can be asked")
		return &Refusal{Message: fmt.Sprintf("yagent refused %s: %s, and no one can be asked; %s", t.HostPort(), d.Reason, d.Hint)}
	}
	return &Refusal{Message: fmt.Sprintf("yagent refused %s: %s; %s", t.HostPort(), d.Reason, d.Hint)}
}
