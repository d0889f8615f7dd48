package main

import (
	"context"
	"os"
	"runtime"
	"testing"
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

// TestCapProcsWhen: serving stdio keeps a processor per core while the
// start's background work runs (it would hold the one processor the calls
// need), and caps once it is done.
func TestCapProcsWhen(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	capProcsWhen(ctx, make(chan struct{}), stdioProcs)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("capped to %d with the background work still running", got)
	}
	ready := make(chan struct{})
	close(ready)
	capProcsWhen(context.Background(), ready, stdioProcs)
	if got := runtime.GOMAXPROCS(0); got != stdioProcs {
		t.Errorf("GOMAXPROCS %d once the background work is done, want %d", got, stdioProcs)
	}
}
