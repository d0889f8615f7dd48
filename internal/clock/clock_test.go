package clock_test

import (
	"testing"
	"time"

	"github.com/yagent/yagent/internal/clock"
	"github.com/yagent/yagent/internal/clock/clocktest"
)

// TestEvery_RunsOnEachTickUntilStopped: fn gets each tick's time; once
// stop returns the ticker is stopped and fn is not running.
func TestEvery_RunsOnEachTickUntilStopped(t *testing.T) {
	c := clocktest.New()
	got := make(chan time.Time)
	stop := clock.Every(c, time.Second, func(now time.Time) { got <- now })
	for range 2 {
		at := c.Now()
		c.Tick <- at
		if seen := <-got; !seen.Equal(at) {
			t.Fatalf("fn got %v, want the tick's %v", seen, at)
		}
		c.Advance(time.Second)
	}
	stop()
	stop() // again: nothing
	if c.Tickers() != 1 || c.Stops() != 1 {
		t.Fatalf("tickers %d, stops %d; want one ticker, stopped once", c.Tickers(), c.Stops())
	}
	select {
	case c.Tick <- c.Now():
		t.Fatal("a tick was taken after stop returned")
	default:
	}
}
