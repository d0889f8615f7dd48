package bus

import (
	"fmt"
	"testing"
)

func TestDispatcher_OrdinaryEventsDropNewestWhenFull(t *testing.T) {
	t.Parallel()
	d := New()
	sub := d.Subscribe(2)
	defer sub.Close()
	for i := range 5 {
		d.Publish(Event{Type: ToolProgress, CallID: fmt.Sprint(i)})
	}
	if got := sub.Dropped(); got != 3 {
		t.Fatalf("Dropped() = %d, want 3", got)
	}
	for _, want := range []string{"0", "1"} {
		if ev := <-sub.Events(); ev.CallID != want || ev.Time.IsZero() {
			t.Fatalf("event = %+v, want call %s with a time", ev, want)
		}
	}
}

func TestDispatcher_CriticalQueueDropsOldest(t *testing.T) {
	t.Parallel()
	d := New()
	sub := d.Subscribe(3)
	defer sub.Close()
	for i := range 5 {
		typ := UserHelpNeeded
		if i%2 == 1 {
			typ = UserHelpResponse
		}
		d.Publish(Event{Type: typ, RequestID: fmt.Sprint(i)})
	}
	if got := len(sub.Events()); got != 0 {
		t.Fatalf("critical events leaked into the ordinary queue: %d", got)
	}
	if got := sub.DroppedCritical(); got != 2 {
		t.Fatalf("DroppedCritical() = %d, want 2", got)
	}
	for _, want := range []string{"2", "3", "4"} {
		if ev := <-sub.Critical(); ev.RequestID != want {
			t.Fatalf("critical event %q, want %q (FIFO after dropping the oldest)", ev.RequestID, want)
		}
	}
}

func TestDispatcher_EverySubscriberGetsEvents(t *testing.T) {
	t.Parallel()
	d := New()
	a, b := d.Subscribe(1), d.Subscribe(1)
	d.Publish(Event{Type: ToolStarted, Tool: "x"})
	for _, s := range []*Subscription{a, b} {
		if ev := <-s.Events(); ev.Tool != "x" {
			t.Fatalf("event %+v, want tool x", ev)
		}
	}
	a.Close()
	a.Close()
	d.Publish(Event{Type: ToolStarted, Tool: "y"}) // must not panic on a closed subscriber
	if _, ok := <-a.Events(); ok {
		t.Fatal("a closed subscription's queue must be closed")
	}
	if ev := <-b.Events(); ev.Tool != "y" {
		t.Fatalf("b got %+v, want tool y", ev)
	}
	b.Close()
}

func TestDispatcher_NilIsANoOp(t *testing.T) {
	t.Parallel()
	var d *Dispatcher
	d.Publish(Event{Type: ToolStarted})
}

// TestDispatcher_TapSeesEveryEventBeforePublishReturns: a tap gets each
// event in the publisher's goroutine, in order, even when a subscriber's
// queue is full; after untap it gets no more.
func TestDispatcher_TapSeesEveryEventBeforePublishReturns(t *testing.T) {
	d := New()
	full := d.Subscribe(1)
	defer full.Close()
	var seen []string
	untap := d.Tap(func(ev Event) { seen = append(seen, ev.CallID) })
	for _, id := range []string{"a", "b", "c"} {
		d.Publish(Event{Type: ToolProgress, CallID: id})
		if got := seen[len(seen)-1]; got != id {
			t.Fatalf("after Publish(%s) the tap's last event is %s", id, got)
		}
	}
	if full.Dropped() == 0 {
		t.Fatal("the subscriber's queue of 1 dropped nothing; the test needs it full")
	}
	untap()
	d.Publish(Event{Type: ToolProgress, CallID: "after"})
	if len(seen) != 3 {
		t.Errorf("the tap saw %v; want a, b, c and nothing after untap", seen)
	}
}
