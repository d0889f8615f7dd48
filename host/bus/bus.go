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
)

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
	// envelope for tool_finished, the prompt or the answer for user help.
	Payload any
	Time    time.Time
}

// Dispatcher fans events out to its subscribers. A nil *Dispatcher is valid
// and drops everything. Safe for concurrent use.
type Dispatcher struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

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

// Publish sends ev to every subscriber without blocking. A zero Time is set
// to now.
func (d *Dispatcher) Publish(ev Event) {
	if d == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
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
