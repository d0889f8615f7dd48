package clocktest

import (
	"sync"
	"sync/atomic"
	"time"
)

// Fake is a clock the test moves: Now changes only by Advance, and every
// ticker is the one channel Tick, which ticks when the test sends on it.
// Safe for concurrent use.
type Fake struct {
	// Tick is every ticker's channel: send on it to tick.
	Tick chan time.Time

	mu      sync.Mutex
	now     time.Time
	tickers atomic.Int32
	stops   atomic.Int32
}

// New returns a Fake standing at the current time.
func New() *Fake {
	return &Fake{now: time.Now(), Tick: make(chan time.Time)}
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the fake time on by d.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Ticker returns Tick and a stop function that counts its calls.
func (c *Fake) Ticker(time.Duration) (<-chan time.Time, func()) {
	c.tickers.Add(1)
	return c.Tick, func() { c.stops.Add(1) }
}

// Tickers counts the tickers made; Stops the ones stopped.
func (c *Fake) Tickers() int { return int(c.tickers.Load()) }

// Stops counts the tickers stopped.
func (c *Fake) Stops() int { return int(c.stops.Load()) }
