package clock

import (
	"sync"
	"time"
)

// Clock tells the time and ticks.
type Clock interface {
	Now() time.Time
	// Ticker returns a channel ticking every d, with the time of each
	// tick, and a function that stops it.
	Ticker(d time.Duration) (<-chan time.Time, func())
}

// Real is the system's clock.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// Ticker is a time.Ticker.
func (Real) Ticker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Every calls fn with the time of each tick of c every d, in a goroutine of
// its own, until stop is called. stop returns once fn has returned for the
// last time, so nothing fn does happens after it; calling it again does
// nothing.
func Every(c Clock, d time.Duration, fn func(now time.Time)) (stop func()) {
	tick, stopTicker := c.Ticker(d)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stopTicker()
		for {
			select {
			case <-quit:
				return
			case now := <-tick:
				fn(now)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}
