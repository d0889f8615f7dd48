package audit

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/netproxy"
)

// Modes of audit.mode.
const (
	ModeOn       = "on"
	ModeOff      = "off"
	ModeRequired = "required"
)

// Line kinds.
const (
	KindDecision = "decision"
	KindCall     = "call"
	KindApproval = "approval"
	// KindNetwork is one connection (or plain HTTP request) a session's
	// commands made through its egress proxy.
	KindNetwork = "network"
)

// Options configures an Observer.
type Options struct {
	// Mode is ModeOn or ModeRequired ("" = on): under required a decision
	// line that cannot be written fails the call closed.
	Mode   string
	Writer *Writer
	// Logger gets the warnings of a failed write under ModeOn.
	Logger *slog.Logger
	// Now is the clock of the lines; nil = time.Now.
	Now func() time.Time
}

// Observer is the adapter.Observer of the audit trail: a "decision" line
// once a call is decided, before its plugin runs it, a "call" line as it
// returns, and an "approval" line for each request a running call's
// plugin makes (authz.ApprovalRecorder). Safe for concurrent use.
type Observer struct {
	opts Options

	keyMu sync.Mutex
	red   *Redactor

	bufs sync.Pool
}

var (
	_ adapter.Observer       = (*Observer)(nil)
	_ authz.ApprovalRecorder = (*Observer)(nil)
)

// New returns the Observer writing to opts.Writer.
func New(opts Options) *Observer {
	if opts.Mode == "" {
		opts.Mode = ModeOn
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	o := &Observer{opts: opts}
	o.bufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	return o
}

// Close flushes and closes the log.
func (o *Observer) Close() error { return o.opts.Writer.Close() }

// redactor returns the Redactor of the install's key, made on first use;
// a key that cannot be read or made is retried on the next line.
func (o *Observer) redactor() (*Redactor, error) {
	o.keyMu.Lock()
	defer o.keyMu.Unlock()
	if o.red != nil {
		return o.red, nil
	}
	k, err := o.opts.Writer.Key()
	if err != nil {
		return nil, err
	}
	o.red = NewRedactor(k)
	return o.red, nil
}

// Start implements adapter.Observer.
func (o *Observer) Start(ctx context.Context, _ *adapter.CallRecord) context.Context { return ctx }

// Decide writes the decision line. Under ModeRequired its error fails an
// allowed call with audit_unavailable; under ModeOn it is logged.
func (o *Observer) Decide(_ context.Context, rec *adapter.CallRecord) error {
	err := o.decide(rec)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("the audit log in %s cannot be written: %w", o.opts.Writer.Dir(), err)
	if o.opts.Mode == ModeRequired {
		return err
	}
	o.opts.Logger.Warn("a decision was not audited", "tool", rec.Tool, "call", rec.ID, "error", err)
	return nil
}

func (o *Observer) decide(rec *adapter.CallRecord) error {
	red, err := o.redactor()
	if err != nil {
		return err
	}
	bp := o.bufs.Get().(*[]byte)
	defer o.bufs.Put(bp)
	l := newLine(*bp, o.opts.Now(), KindDecision)
	header(l, rec.ID, rec.SessionID, rec.Client, rec.Tool, rec.Family, rec.Effect)
	l.bool("trusted", rec.Trusted)
	if rec.Args != nil {
		l.key("args")
		l.b = red.appendArgs(l.b, rec.Args, rec.Roles)
	}
	l.str("decision", rec.Action.String())
	l.str("basis", rec.Basis)
	l.str("rule", rec.Rule)
	l.str("reason", rec.Reason)
	l.strs("paths", rec.Paths)
	if rec.Action == adapter.Ask {
		ap := rec.Approval
		if ap == nil {
			ap = &adapter.Approval{By: adapter.ByNobody}
		}
		l.answer(ap.Allowed, ap.By, ap.Reason)
	}
	l.bool("allowed", rec.Allowed)
	*bp = l.end()
	if o.opts.Mode == ModeRequired {
		// In the kernel before the plugin runs: a call is never ahead of
		// its record.
		return o.opts.Writer.WriteLine(*bp)
	}
	return o.opts.Writer.AppendLine(*bp)
}

// Finish writes the call line; a failed write is logged (the call is over).
func (o *Observer) Finish(_ context.Context, rec *adapter.CallRecord, res *adapter.Result) {
	now := o.opts.Now()
	bp := o.bufs.Get().(*[]byte)
	defer o.bufs.Put(bp)
	l := newLine(*bp, now, KindCall)
	header(l, rec.ID, rec.SessionID, rec.Client, rec.Tool, rec.Family, rec.Effect)
	var n int64
	if res != nil {
		l.str("code", res.Code)
		n = int64(len(res.Text) + len(res.Data))
	}
	l.float("duration_ms", float64(now.Sub(rec.Started).Microseconds())/1000)
	l.int("bytes", n)
	if rec.Decided {
		l.bool("allowed", rec.Allowed)
	}
	*bp = l.end()
	if err := o.opts.Writer.AppendLine(*bp); err != nil {
		o.opts.Logger.Warn("a call was not audited", "tool", rec.Tool, "call", rec.ID, "error", err)
	}
}

// RecordApproval writes the approval line of a request a running call's
// plugin made (authz.ApprovalRecorder).
func (o *Observer) RecordApproval(ctx context.Context, r authz.ApprovalRecord) {
	bp := o.bufs.Get().(*[]byte)
	defer o.bufs.Put(bp)
	client := ""
	if sess := session.FromContext(ctx); sess != nil {
		client = sess.Client()
	}
	l := newLine(*bp, o.opts.Now(), KindApproval)
	header(l, r.CallID, r.SessionID, client, r.Tool, "", "")
	l.str("ask", r.Ask)
	l.str("program", r.Program)
	l.strs("argv", RedactArgv(r.Argv))
	l.str("command", RedactCommand(r.Command))
	l.strs("paths", r.Paths)
	l.answer(r.Approved, r.By, r.Reason)
	*bp = l.end()
	if err := o.opts.Writer.AppendLine(*bp); err != nil {
		o.opts.Logger.Warn("a plugin's approval request was not audited", "tool", r.Tool, "call", r.CallID, "error", err)
	}
}

// RecordNetwork writes the line of one connection a session's commands
// made through its egress proxy: the target, the address connected to,
// the policy's answer and the entry that gave it, who answered a question,
// and the bytes each way. A plain HTTP request's URL is left out (its
// query may hold a secret); its method is kept.
func (o *Observer) RecordNetwork(sess *session.Session, ev netproxy.Event) {
	bp := o.bufs.Get().(*[]byte)
	defer o.bufs.Put(bp)
	id, client := "", ""
	if sess != nil {
		id, client = sess.ID(), sess.Client()
	}
	l := newLine(*bp, ev.Start, KindNetwork)
	header(l, "", id, client, "", "", "network")
	l.str("host", ev.Target.Host)
	l.int("port", int64(ev.Target.Port))
	l.str("proto", ev.Target.Proto)
	l.str("method", ev.Target.Method)
	if ev.Addr.IsValid() {
		l.str("addr", ev.Addr.String())
	}
	v := ev.Verdict
	l.str("decision", v.Decision)
	l.str("rule", v.Rule)
	l.str("reason", cmp.Or(ev.Reason, v.Reason))
	if a := v.Answer; a != nil {
		l.answer(a.Approved, a.By, a.Reason)
	}
	l.bool("allowed", ev.Allowed)
	l.int("up", ev.Up)
	l.int("down", ev.Down)
	l.float("duration_ms", float64(ev.Duration.Microseconds())/1000)
	*bp = l.end()
	if err := o.opts.Writer.AppendLine(*bp); err != nil {
		o.opts.Logger.Warn("a network connection was not audited", "host", ev.Target.Host, "session", id, "error", err)
	}
}

func header(l *line, call, sess, client, tool, family, effect string) {
	l.str("call", call)
	l.str("session", sess)
	l.str("client", client)
	l.str("tool", tool)
	l.str("family", family)
	l.str("effect", effect)
}
