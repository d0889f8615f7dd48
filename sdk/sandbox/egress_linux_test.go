package sandbox

import (
	"os"
	"testing"
)

// TestNewEgressNamespace_EndsNoThread: making a session's namespace puts
// the thread back and ends none: a thread of the host may have forked a
// plugin with a death signal, which its end would deliver (a plugin killed
// on its first proxied command).
func TestNewEgressNamespace_EndsNoThread(t *testing.T) {
	requireLayers(t, false, false, true)
	// Once first, and the layers probed (requireLayers): the probe's own
	// throwaway thread has ended by the time this one is made and gone.
	if e, err := NewEgressNamespace(); err == nil {
		e.Close()
	}
	// A thread an earlier test locked may still be ending on a loaded
	// machine: a round that saw one end is run again, and only a thread
	// ended in every round fails (the bug ends one in each).
	var ended []string
	for range 3 {
		ended = ended[:0]
		before := tids(t)
		for range 20 {
			e, err := NewEgressNamespace()
			if err != nil {
				t.Fatalf("NewEgressNamespace: %v", err)
			}
			e.Close()
		}
		after := tids(t)
		for tid := range before {
			if !after[tid] {
				ended = append(ended, tid)
			}
		}
		if len(ended) == 0 {
			return
		}
	}
	t.Errorf("threads %v ended", ended)
}

// tids are the process's threads now.
func tids(t *testing.T) map[string]bool {
	t.Helper()
	es, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, e := range es {
		m[e.Name()] = true
	}
	return m
}

// BenchmarkNewEgressNamespace: what a session's first command under
// sandbox.network: proxy costs the host once (the namespace, loopback up,
// the listener), closed again.
func BenchmarkNewEgressNamespace(b *testing.B) {
	if !Probe().NetNS {
		b.Skip("no network namespaces here")
	}
	for b.Loop() {
		e, err := NewEgressNamespace()
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
