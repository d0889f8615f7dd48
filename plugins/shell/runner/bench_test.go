package runner

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// BenchmarkRunBash_HugeOutput runs `yes | head -c 2G` through a foreground
// call with the real 10 MB cap and reports the bytes drained per second and
// this process's peak RSS. Set YAGENT_BENCH_HUGE=1 to run it (it moves 2 GiB
// through a pipe); see ../bench/README.md for results.
func BenchmarkRunBash_HugeOutput(b *testing.B) {
	if os.Getenv("YAGENT_BENCH_HUGE") == "" {
		b.Skip("set YAGENT_BENCH_HUGE=1 to drain 2 GiB")
	}
	const n = 2 << 30
	m := New(Options{StateDir: b.TempDir()})
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{SessionID: "bench", Workspace: b.TempDir()})
	b.SetBytes(n)
	for b.Loop() {
		res, err := m.Run(ctx, RunRequest{Command: "yes | head -c 2G", Timeout: 10 * time.Minute, Yield: 10 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if d := res.Data.(*Data); d.OutputBytes != n || len(res.Text) > maxShellOutputBytes+100 {
			b.Fatalf("output_bytes %d, text %d bytes", d.OutputBytes, len(res.Text))
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	}
}
