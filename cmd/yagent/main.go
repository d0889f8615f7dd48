// Command yagent serves yagent's tool surface over MCP and drives it from
// the command line.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// stdioProcs is the host's GOMAXPROCS in `yagent serve` on stdio unless
// the environment sets one. It serves one agent, whose calls are a few
// hundred microseconds of work around waits on a plugin and on the
// client. With a processor per core, each of those wake-ups starts an idle
// processor's thread spinning for work that is not there, on the cores the
// plugin and the client need: on 2 cores the hop to a plugin took 145 µs
// that way and 58-82 µs with one processor in the host and in the plugin
// (BenchmarkCallOverhead). It applies once the start is done, which
// launches, hashes and describes the plugins side by side, and the work it
// leaves to the background (app.App.Warm). Serving HTTP, the host scales
// them with the POSTs in flight (procScaler).
const stdioProcs = 1

// capProcs lowers GOMAXPROCS to n unless the environment sets it.
func capProcs(n int) {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > n {
		runtime.GOMAXPROCS(n)
	}
}

// whenReady waits for ready to close, then calls f; it returns without
// calling f when ctx ends first. Both fronts set their processors so, once
// the start's background work (app.App.Warm) is done.
func whenReady(ctx context.Context, ready <-chan struct{}, f func()) {
	select {
	case <-ready:
		f()
	case <-ctx.Done():
	}
}

// The host keeps Go's default GOGC. The MCP SDK takes two fresh 32 KiB
// decoder buffers for every call it reads; a larger GOGC lets the heap grow
// into pages the process has never touched, and the page faults of the
// first few hundred calls after a start cost more than the collections it
// saves (BENCHMARKS.md, round 5).
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yagent:", err)
		os.Exit(exitCode(err))
	}
}
