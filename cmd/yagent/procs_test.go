package main

import (
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
