// Command yagent serves yagent's tool surface over MCP and drives it from
// the command line.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// gcPercent is the host's GOGC unless the environment sets one. The MCP
// SDK's JSON decoder takes a fresh 32 KiB buffer for every message it
// reads, so a call allocates far more than the host keeps: at the
// default of 100 the collector ran every few hundred calls and its mark
// phase took a core from the calls on a small machine. The host's live
// heap is a few MiB, so four times that between collections stays small.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yagent:", err)
		os.Exit(exitCode(err))
	}
}
