package cgroup

import (
	"runtime"
	"testing"
)

// BenchmarkBound_PerCommand is what the bounds add to a command's cgroup
// as the shell plugin uses it, on a group kept for reuse: "none" takes
// and lets go the group; "bounds" also sets the built-in profiles'
// bounds (nothing to write once a reused group has them), has the
// starting thread join and leave its cgroup v1 groups (where the bounds
// go through them) and reads the hits as the command ends.
func BenchmarkBound_PerCommand(b *testing.B) {
	if _, err := Root(); err != nil {
		b.Skipf("no cgroup here: %v", err)
	}
	defer Cleanup()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, bc := range []struct {
		name  string
		limit Limits
	}{{"none", Limits{}}, {"bounds", Limits{Pids: 4096, MemoryMB: 8192}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				g, err := New(false)
				if err != nil {
					b.Fatal(err)
				}
				if bc.limit != (Limits{}) {
					if err := g.Bound(bc.limit); err != nil {
						b.Fatal(err)
					}
					leave, err := g.JoinThread()
					if err != nil {
						b.Fatal(err)
					}
					leave()
					g.Hits()
				}
				g.Release()
			}
		})
	}
}
