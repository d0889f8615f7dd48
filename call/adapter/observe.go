package adapter

import (
	"context"
	"time"

	"github.com/yagent/yagent/sdk"
)

// Observer watches the calls of the surface: the audit trail and the
// telemetry. Its methods run in the call's goroutine, in this order: Start,
// then Decide once the call is decided (if it gets that far: input that
// does not validate is never decided), then Finish. They must be safe for
// concurrent calls.
type Observer interface {
	// Start is called as a call begins; the context it returns is the
	// call's from then on (one carrying a span, say).
	Start(ctx context.Context, rec *CallRecord) context.Context
	// Decide is called once the guard and, for an ask, the approver have
	// decided, before a plugin runs the call. An error fails a call that
	// was allowed with audit_unavailable, its text saying why, and the
	// plugin never runs it; a refused call stays refused.
	Decide(ctx context.Context, rec *CallRecord) error
	// Finish is called with the call's result, as it returns.
	Finish(ctx context.Context, rec *CallRecord, res *Result)
}

// CallRecord is what the host knows of one call. The adapter fills it as
// the call goes; observers read it and must not keep Args past Finish.
type CallRecord struct {
	ID        string
	SessionID string
	// Client names the session's client (session.Client).
	Client  string
	Tool    string
	Family  string
	Effect  string
	Trusted bool
	// Roles are the spec's parameter roles (path, url, command...).
	Roles map[string]sdk.Role
	// Args are the arguments as the plugin receives them (the guard's
	// resolution of the role arguments); nil before they validate.
	Args    map[string]any
	Started time.Time

	// Decided says the call was judged; the fields below are set then.
	Decided bool
	// Action is the guard's verdict; Basis, Rule and Reason its grounds.
	Action Action
	Basis  string
	Rule   string
	Reason string
	// Paths are the paths outside the workspace the decision is about.
	Paths []string
	// Approval is the approver's answer when Action is Ask.
	Approval *Approval
	// Allowed says the call goes on to the plugin.
	Allowed bool
}

// Observers returns an Observer that calls each of obs in turn (Finish in
// reverse order, as deferred calls run); nil when obs holds none.
func Observers(obs ...Observer) Observer {
	var live multiObserver
	for _, o := range obs {
		if o != nil {
			live = append(live, o)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return live
}

type multiObserver []Observer

func (m multiObserver) Start(ctx context.Context, rec *CallRecord) context.Context {
	for _, o := range m {
		ctx = o.Start(ctx, rec)
	}
	return ctx
}

func (m multiObserver) Decide(ctx context.Context, rec *CallRecord) error {
	for _, o := range m {
		if err := o.Decide(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

func (m multiObserver) Finish(ctx context.Context, rec *CallRecord, res *Result) {
	for i := len(m) - 1; i >= 0; i-- {
		m[i].Finish(ctx, rec, res)
	}
}
