package bus

import (
	"sync"
	"sync/atomic"
	"time"
)

// Event types.
const (
	ToolStarted      = "tool_started"
	ToolProgress     = "tool_progress"
	ToolFinished     = "tool_finished"
	UserHelpNeeded   = "user_help_needed"
	UserHelpResponse = "user_help_response"
	// Log is a warning (or other record) of a plugin or of the host, for
	// the fronts that pass them on to their clients; Payload is a
	// LogRecord.
	Log = "log"
)

// LogRecord is the payload of a Log event.
type LogRecord struct {
	// Level is one of MCP's: debug, info, notice, warning, error.
	Level string
	// Logger names who wrote it: "yagent" for the host, or the plugin.
	Logger string
	// Message is the record's text, Fields its key–value pairs.
	Message string
	Fields  map[string]any
}

// Critical reports whether events of type typ ride the critical side queue.
func Critical(typ string) bool {
	return typ == UserHelpNeeded || typ == UserHelpResponse
}

// Event is one thing that happened in the host.
type Event struct {
	Type      string
	SessionID string
	CallID    string
	// RequestID pairs a user_help_needed with its user_help_response.
	RequestID string
	Tool      string
	// Payload depends on Type: sdk.Progress for tool_progress, the result
	// envelope for tool_finished, the prompt or the answer for user help,
	// a LogRecord for log.
	Payload any
	Time    time.Time
}

// Dispatcher fans events out to its subscribers. A nil *Dispatcher is valid
// and drops everything. Safe for concurrent use.
type Dispatcher struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// taps is copied on write, so that Publish reads it without the lock.
	taps atomic.Pointer[[]*tap]
}

type tap struct{ fn func(Event) }

// New returns a dispatcher with no subscribers.
func New() *Dispatcher {
	return &Dispatcher{subs: map[*Subscription]struct{}{}}
}

// DefaultBuffer is the queue length Subscribe uses for a buffer <= 0.
const DefaultBuffer = 64

// Subscribe returns a subscription whose two queues hold buffer events each
// (DefaultBuffer when buffer <= 0). Close it when done.
func (d *Dispatcher) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &Subscription{
		d:        d,
		events:   make(chan Event, buffer),
		critical: make(chan Event, buffer),
	}
	d.mu.Lock()
	d.subs[s] = struct{}{}
	d.mu.Unlock()
	return s
}

// Tap calls fn with every event published from now on, in the publisher's
// goroutine and before Publish returns: a tool's progress reaches fn before
// the tool's result reaches its caller, and in order. It is for a front
// that must pass a call's events on while the call runs (MCP progress
// notifications); fn must return soon, since the publisher waits for it,
// and must not publish. untap removes it from later Publish calls (one
// already under way may still call it).
func (d *Dispatcher) Tap(fn func(Event)) (untap func()) {
	t := &tap{fn: fn}
	d.mu.Lock()
	defer d.mu.Unlock()
	var taps []*tap
	if old := d.taps.Load(); old != nil {
		taps = append(taps, *old...)
	}
	taps = append(taps, t)
	d.taps.Store(&taps)
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		old := d.taps.Load()
		if old == nil {
			return
		}
		var rest []*tap
		for _, x := range *old {
			if x != t {
				rest = append(rest, x)
			}
		}
		d.taps.Store(&rest)
	}
}

// Publish hands ev to every tap, then queues it for every subscriber
// without blocking. A zero Time is set to now.
func (d *Dispatcher) Publish(ev Event) {
	if d == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if taps := d.taps.Load(); taps != nil {
		for _, t := range *taps {
			t.fn(ev)
		}
	}
	crit := Critical(ev.Type)
	d.mu.Lock()
	defer d.mu.Unlock()
	for s := range d.subs {
		if crit {
			s.pushCritical(ev)
		} else {
			s.push(ev)
		}
	}
}

// Subscription receives the events of a Dispatcher.
type Subscription struct {
	d        *Dispatcher
	events   chan Event
	critical chan Event
	// critMu makes "drop the oldest, then push" atomic against other pushes.
	critMu          sync.Mutex
	dropped         atomic.Uint64
	droppedCritical atomic.Uint64
	closed          bool // guarded by d.mu
}

// Events is the queue of ordinary events.
func (s *Subscription) Events() <-chan Event { return s.events }

// Critical is the queue of user_help_needed and user_help_response events.
func (s *Subscription) Critical() <-chan Event { return s.critical }

// Dropped counts ordinary events dropped because the queue was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// DroppedCritical counts critical events pushed out, oldest first, by newer
// ones when the critical queue was full.
func (s *Subscription) DroppedCritical() uint64 { return s.droppedCritical.Load() }

// Close unsubscribes and closes both queues. Safe to call twice.
func (s *Subscription) Close() {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	delete(s.d.subs, s)
	close(s.events)
	close(s.critical)
}

func (s *Subscription) push(ev Event) {
	select {
	case s.events <- ev:
	default:
		s.dropped.Add(1)
	}
}

func (s *Subscription) pushCritical(ev Event) {
	s.critMu.Lock()
	defer s.critMu.Unlock()
	for {
		select {
		case s.critical <- ev:
			return
		default:
		}
		// Full: drop the oldest. The reader may have taken it first, in
		// which case the next send finds room.
		select {
		case <-s.critical:
			s.droppedCritical.Add(1)
		default:
		}
	}
}
