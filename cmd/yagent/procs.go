package main

import (
	"runtime"
	"sync"
	"time"
)

// procScaler sets the processors of `yagent serve --http` by the POSTs it
// serves at once: one while at most one is in flight, every core as soon as
// more are, and one again at the first POST to begin or end procsQuiet
// after the last time two were in flight.
//
// A call is a few hundred microseconds of work around waits: on the
// client, on a plugin, on the network. Each hand-off between goroutines
// (net/http's read of the next request, the plugin's answer, the reply)
// makes the runtime start an idle processor's thread spinning for work
// that is not there. With one client's calls one after another, on 2
// cores, one processor took the host from 11 voluntary switches and about
// 430 µs of CPU a read to 6 and 340 µs, and the read's median from 1.31×
// stdio's to 1.15× (bench/manual.md, "The HTTP lane for every client"). A
// fleet's calls side by side need the cores, and get them on their second
// POST in flight; changing the count stops the world for a moment, so the
// host goes back to one only after a quiet spell, at most once per
// procsQuiet.
type procScaler struct {
	max   int // the processors while busy
	quiet time.Duration
	set   func(int) // runtime.GOMAXPROCS, a fake in tests
	now   func() time.Time

	mu       sync.Mutex
	on       bool // scaling, once the start's background work is done
	inFlight int
	cur      int
	busy     time.Time // the last time more than one POST was in flight
}

// procsQuiet is how long at most one POST must have been in flight before
// the host goes back to one processor.
const procsQuiet = time.Second

func newProcScaler() *procScaler {
	n := runtime.GOMAXPROCS(0)
	return &procScaler{max: n, cur: n, quiet: procsQuiet,
		set: func(n int) { runtime.GOMAXPROCS(n) }, now: time.Now}
}

// start begins the scaling: one processor unless more than one POST is in
// flight already.
func (p *procScaler) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.on = true
	if p.inFlight <= 1 {
		p.setLocked(1)
	}
}

// add counts a POST that begins (+1) or is answered (-1).
func (p *procScaler) add(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight += delta
	if !p.on {
		return
	}
	if p.inFlight > 1 {
		p.busy = p.now()
		p.setLocked(p.max)
		return
	}
	if p.cur > 1 && p.now().Sub(p.busy) >= p.quiet {
		p.setLocked(1)
	}
}

func (p *procScaler) setLocked(n int) {
	if n != p.cur {
		p.cur = n
		p.set(n)
	}
}
