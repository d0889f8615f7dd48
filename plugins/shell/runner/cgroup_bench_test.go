//go:build linux

package runner

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// BenchmarkRunBash_TrueCgroup runs `true` through foreground calls side by
// side, alternating the sandbox off (process group only) and on (the
// command born in a cgroup of its own, released as the call returns), and
// reports the median of each: what a cgroup per command costs. Alternating
// keeps the load of a shared machine out of the ratio.
func BenchmarkRunBash_TrueCgroup(b *testing.B) {
	if _, err := cgroup.Root(); err != nil {
		b.Skipf("cgroup v2 layer missing: %v", err)
	}
	m := New(Options{StateDir: b.TempDir()})
	defer m.Shutdown(context.Background())
	ws := b.TempDir()
	off := sdk.WithCall(context.Background(), sdk.CallInfo{SessionID: "bench", Workspace: ws})
	on := sdk.WithCall(context.Background(), sdk.CallInfo{SessionID: "bench", Workspace: ws,
		Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn}})
	var offT, onT []time.Duration
	run := func(ctx context.Context) time.Duration {
		start := time.Now()
		if _, err := m.Run(ctx, RunRequest{Command: "true"}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for b.Loop() {
		offT = append(offT, run(off))
		onT = append(onT, run(on))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(median(offT), "off-µs")
	b.ReportMetric(median(onT), "cgroup-µs")
	b.ReportMetric(median(onT)/median(offT), "ratio")
}
