package clock

import "time"

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
