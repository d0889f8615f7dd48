package main

import (
	"context"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestCapProcs: serving stdio lowers GOMAXPROCS to stdioProcs, never
// raises it, and yields to GOMAXPROCS in the environment.
func TestCapProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	capProcs(stdioProcs)
	if got := runtime.GOMAXPROCS(0); got != stdioProcs {
		t.Errorf("GOMAXPROCS %d, want %d", got, stdioProcs)
	}
	capProcs(5)
	if got := runtime.GOMAXPROCS(0); got != stdioProcs {
		t.Errorf("capProcs(5) raised GOMAXPROCS to %d", got)
	}
	runtime.GOMAXPROCS(3)
	t.Setenv("GOMAXPROCS", "3")
	capProcs(stdioProcs)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("with GOMAXPROCS=3 in the environment: %d, want 3", got)
	}
}

// TestCapProcsWhenReady: serving stdio keeps a processor per core while
// the start's background work runs (it would hold the one processor the
// calls need), and caps once it is done.
func TestCapProcsWhenReady(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	whenReady(ctx, make(chan struct{}), func() { capProcs(stdioProcs) })
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("capped to %d with the background work still running", got)
	}
	ready := make(chan struct{})
	close(ready)
	whenReady(context.Background(), ready, func() { capProcs(stdioProcs) })
	if got := runtime.GOMAXPROCS(0); got != stdioProcs {
		t.Errorf("GOMAXPROCS %d once the background work is done, want %d", got, stdioProcs)
	}
}

// TestProcScaler: serving HTTP, the host runs on one processor once its
// start is done and while at most one POST is in flight, on every core as
// soon as a second one begins, and back on one only when a POST begins or
// ends a quiet spell after the last time two were in flight.
func TestProcScaler(t *testing.T) {
	clock := time.Unix(0, 0)
	var sets []int
	p := &procScaler{max: 4, cur: 4, quiet: time.Second,
		set: func(n int) { sets = append(sets, n) }, now: func() time.Time { return clock }}
	step := func(what string, f func(), want ...int) {
		t.Helper()
		sets = nil
		f()
		if !slices.Equal(sets, want) {
			t.Errorf("%s: processors set to %v, want %v", what, sets, want)
		}
	}
	step("a POST during the start", func() { p.add(1); p.add(-1) })
	step("the start done", p.start, 1)
	step("one POST after another", func() {
		for range 3 {
			p.add(1)
			p.add(-1)
		}
	})
	step("a second POST in flight", func() { p.add(1); p.add(1) }, 4)
	step("a third", func() { p.add(1) })
	step("two end at once", func() { p.add(-1); p.add(-1) })
	clock = clock.Add(999 * time.Millisecond)
	step("the last ends before the quiet spell", func() { p.add(-1) })
	clock = clock.Add(time.Millisecond)
	step("a POST after the quiet spell", func() { p.add(1) }, 1)
	step("its end", func() { p.add(-1) })
	step("two again", func() { p.add(1); p.add(1) }, 4)
	step("the start told again", p.start)
}

// TestProcScaler_StartWhileBusy: a start that ends while two POSTs are in
// flight leaves every core to them.
func TestProcScaler_StartWhileBusy(t *testing.T) {
	var sets []int
	p := &procScaler{max: 2, cur: 2, quiet: time.Second,
		set: func(n int) { sets = append(sets, n) }, now: time.Now}
	p.add(1)
	p.add(1)
	p.start()
	if len(sets) != 0 {
		t.Errorf("processors set to %v while two POSTs were in flight", sets)
	}
}
