package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
)

// DefaultTimeout is how long a request waits for its answer when
// LoopOptions sets none: the back-stop for a signal lost on the bus.
const DefaultTimeout = 10 * time.Minute

// ErrTimeout is returned when no answer came within the loop's timeout.
var ErrTimeout = errors.New("no answer came in time")

// LoopOptions configures a Loop.
type LoopOptions struct {
	// Bus carries user_help_needed and user_help_response on its critical
	// queue; nil = a private dispatcher.
	Bus *bus.Dispatcher
	// Logger receives the warnings (a response nobody waits for); nil =
	// slog.Default().
	Logger *slog.Logger
	// Timeout bounds the wait for one answer; 0 = DefaultTimeout.
	Timeout time.Duration
	// After replaces time.After (a test seam for the timeout).
	After func(time.Duration) <-chan time.Time
}

// Loop pairs the host's questions to the user with their answers by
// request_id, over the dispatcher's critical queue: a request is announced
// as user_help_needed and waits on its own channel until a
// user_help_response with its id arrives, its context ends or the timeout
// passes. Whoever answers publishes the response: the loop itself, calling
// the session's Answerer (TTY, MCP elicitation) one question at a time per
// session, or anyone else on the bus; the first response with the id is
// taken. Safe for concurrent use.
type Loop struct {
	bus     *bus.Dispatcher
	logger  *slog.Logger
	timeout time.Duration
	after   func(time.Duration) <-chan time.Time

	mu      sync.Mutex
	pending map[string]*request
	sub     *bus.Subscription // while requests are pending
	// foreign remembers ids announced by others (ask_user_for_help
	// publishes its own pair), whose responses are no mismatch.
	foreign     map[string]struct{}
	foreignList []string
	queues      map[string][]*request // per session, waiting for its answerer
}

// maxForeign bounds the remembered foreign ids.
const maxForeign = 256

// request is one question waiting for its answer.
type request struct {
	id    string
	sess  *session.Session
	ctx   context.Context // ends when the request does
	tool  string
	help  bool
	ask   session.ApprovalPrompt
	q     string
	skip  func() bool // the answer is no longer needed (a pass came)
	reply chan bus.Event
	// finished is closed when the asker has taken the answer in.
	finished chan struct{}
}

// NewLoop returns a Loop.
func NewLoop(opts LoopOptions) *Loop {
	l := &Loop{
		bus:     opts.Bus,
		logger:  opts.Logger,
		timeout: opts.Timeout,
		after:   opts.After,
		pending: map[string]*request{},
		foreign: map[string]struct{}{},
		queues:  map[string][]*request{},
	}
	if l.bus == nil {
		l.bus = bus.New()
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	if l.timeout <= 0 {
		l.timeout = DefaultTimeout
	}
	if l.after == nil {
		l.after = time.After
	}
	return l
}

// Bus returns the dispatcher the loop speaks on.
func (l *Loop) Bus() *bus.Dispatcher { return l.bus }

// Question is one approval the loop asks for.
type Question struct {
	// Prompt is what the user sees; RequestID "" gets a uuid.
	Prompt session.ApprovalPrompt
	// Covered, when set, is asked before the user is: true answers
	// "approved" without asking (a pass granted while the question waited
	// behind another of its session).
	Covered func() bool
	// Settle, when set, runs with the answer before the session's next
	// question is asked, so a pass the answer gives covers it.
	Settle func(session.ApprovalAnswer)
}

// Approve asks the user of sess to approve a call and waits for the answer.
func (l *Loop) Approve(ctx context.Context, sess *session.Session, q Question) (session.ApprovalAnswer, error) {
	r := &request{id: q.Prompt.RequestID, sess: sess, tool: q.Prompt.Tool, ask: q.Prompt, skip: q.Covered, finished: make(chan struct{})}
	defer close(r.finished)
	ev, err := l.do(ctx, r, q.Prompt)
	if err != nil {
		return session.ApprovalAnswer{}, err
	}
	var ans session.ApprovalAnswer
	switch p := ev.Payload.(type) {
	case session.ApprovalAnswer:
		ans = p
	case *session.ApprovalAnswer:
		if p == nil {
			return ans, fmt.Errorf("the answer to request %s is empty", r.id)
		}
		ans = *p
	case error:
		return ans, p
	default:
		return ans, fmt.Errorf("the answer to request %s is a %T, not an approval", r.id, ev.Payload)
	}
	if q.Settle != nil {
		q.Settle(ans)
	}
	return ans, nil
}

// Help asks the user of sess a free-form question and waits for the answer.
func (l *Loop) Help(ctx context.Context, sess *session.Session, tool, question string) (string, error) {
	r := &request{sess: sess, tool: tool, help: true, q: question, finished: make(chan struct{})}
	defer close(r.finished)
	ev, err := l.do(ctx, r, question)
	if err != nil {
		return "", err
	}
	switch p := ev.Payload.(type) {
	case string:
		return p, nil
	case error:
		return "", p
	}
	return "", fmt.Errorf("the answer to request %s is a %T, not text", r.id, ev.Payload)
}

// do announces r and waits for its answer.
func (l *Loop) do(ctx context.Context, r *request, payload any) (bus.Event, error) {
	if r.sess == nil {
		return bus.Event{}, errors.New("no session to ask")
	}
	if r.id == "" {
		r.id = uuid.NewString()
	}
	if !r.help {
		r.ask.RequestID = r.id
		payload = r.ask
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.ctx = ctx
	r.reply = make(chan bus.Event, 1)
	if err := l.register(r); err != nil {
		return bus.Event{}, err
	}
	defer l.unregister(r)

	l.bus.Publish(bus.Event{Type: bus.UserHelpNeeded, SessionID: r.sess.ID(), RequestID: r.id, Tool: r.tool, Payload: payload})
	select {
	case ev := <-r.reply:
		return ev, nil
	case <-ctx.Done():
		return bus.Event{}, ctx.Err()
	case <-l.after(l.timeout):
		l.logger.Warn("no answer to a user request", "request_id", r.id, "session", r.sess.ID(), "tool", r.tool, "timeout", l.timeout)
		return bus.Event{}, fmt.Errorf("%w: nobody answered within %s", ErrTimeout, l.timeout)
	}
}

func (l *Loop) register(r *request) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.pending[r.id]; dup {
		return fmt.Errorf("request %s is already pending", r.id)
	}
	l.pending[r.id] = r
	if l.sub == nil {
		l.sub = l.bus.Subscribe(0)
		go l.run(l.sub)
	}
	return nil
}

func (l *Loop) unregister(r *request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pending, r.id)
	if len(l.pending) == 0 && l.sub != nil {
		l.sub.Close()
		l.sub = nil
	}
}

// run reads the critical queue while requests are pending.
func (l *Loop) run(sub *bus.Subscription) {
	for ev := range sub.Critical() {
		switch ev.Type {
		case bus.UserHelpNeeded:
			l.dispatch(ev)
		case bus.UserHelpResponse:
			l.Consume(ev)
		}
	}
}

// Pending reports how many requests wait for an answer.
func (l *Loop) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// Consume delivers a user_help_response to the request its id names and
// reports whether one took it. It accepts only user_help_response events;
// one whose id matches no pending request (or whose session is not the
// request's) is warned about and ignored.
func (l *Loop) Consume(ev bus.Event) bool {
	if ev.Type != bus.UserHelpResponse {
		return false
	}
	l.mu.Lock()
	r := l.pending[ev.RequestID]
	_, foreign := l.foreign[ev.RequestID]
	l.mu.Unlock()
	switch {
	case r == nil && foreign:
		return false // answered by whoever asked it
	case r == nil:
		l.logger.Warn("user_help_response matches no pending request; ignored", "request_id", ev.RequestID, "session", ev.SessionID)
		return false
	case ev.SessionID != "" && ev.SessionID != r.sess.ID():
		l.logger.Warn("user_help_response from another session; ignored", "request_id", ev.RequestID, "session", ev.SessionID, "want_session", r.sess.ID())
		return false
	}
	select {
	case r.reply <- ev:
		return true
	default:
		l.logger.Warn("user_help_response for a request already answered; ignored", "request_id", ev.RequestID, "session", ev.SessionID)
		return false
	}
}

// dispatch hands an announced request of this loop to its session's
// answerer, in order, one at a time per session.
func (l *Loop) dispatch(ev bus.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.pending[ev.RequestID]
	if r == nil {
		l.rememberForeign(ev.RequestID)
		return
	}
	ans := r.sess.Answerer()
	if ans == nil {
		return // somebody else answers on the bus, or the timeout will
	}
	sid := r.sess.ID()
	l.queues[sid] = append(l.queues[sid], r)
	if len(l.queues[sid]) == 1 {
		go l.answer(sid)
	}
}

func (l *Loop) rememberForeign(id string) {
	if _, ok := l.foreign[id]; ok || id == "" {
		return
	}
	l.foreign[id] = struct{}{}
	l.foreignList = append(l.foreignList, id)
	if len(l.foreignList) > maxForeign {
		delete(l.foreign, l.foreignList[0])
		l.foreignList = l.foreignList[1:]
	}
}

// answer works through the queue of session sid.
func (l *Loop) answer(sid string) {
	for {
		l.mu.Lock()
		q := l.queues[sid]
		if len(q) == 0 {
			delete(l.queues, sid)
			l.mu.Unlock()
			return
		}
		r := q[0]
		l.mu.Unlock()

		l.answerOne(r)

		l.mu.Lock()
		l.queues[sid] = l.queues[sid][1:]
		l.mu.Unlock()
	}
}

func (l *Loop) answerOne(r *request) {
	if r.ctx.Err() != nil {
		return
	}
	ev := bus.Event{Type: bus.UserHelpResponse, SessionID: r.sess.ID(), RequestID: r.id, Tool: r.tool}
	ans := r.sess.Answerer()
	switch {
	case ans == nil:
		return
	case r.help:
		text, err := ans.Help(r.ctx, r.q)
		ev.Payload = text
		if err != nil {
			ev.Payload = err
		}
	case r.skip != nil && r.skip():
		ev.Payload = session.ApprovalAnswer{Approved: true, Scope: session.ScopeOnce}
	default:
		a, err := ans.Approve(r.ctx, r.ask)
		ev.Payload = a
		if err != nil {
			ev.Payload = err
		}
	}
	if r.ctx.Err() != nil {
		return // the request is gone; its answer would match nothing
	}
	l.bus.Publish(ev)
	// The next question of the session waits until this answer is taken
	// in (a session pass it gives then covers the next), or until the
	// request ends without it.
	<-r.finished
}
