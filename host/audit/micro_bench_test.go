package audit

import (
	"context"
	"testing"
	"time"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/sdk"
)

// BenchmarkObserver: one call's two lines, decision and call, as the
// audit trail writes them.
func BenchmarkObserver(b *testing.B) {
	o := New(Options{Writer: NewWriter(WriterOptions{Dir: b.TempDir()})})
	defer o.Close()
	rec := &adapter.CallRecord{ID: "c", SessionID: "s", Tool: "think", Family: "cognitive", Effect: "none", Trusted: true,
		Args: map[string]any{"thought": "weigh the two plans"}, Roles: map[string]sdk.Role{}, Started: time.Now(),
		Decided: true, Action: adapter.Allow, Basis: adapter.BasisNoEffect, Allowed: true}
	res := &adapter.Result{Text: "ok"}
	ctx := context.Background()
	for b.Loop() {
		if err := o.Decide(ctx, rec); err != nil {
			b.Fatal(err)
		}
		o.Finish(ctx, rec, res)
	}
}

func BenchmarkRedactCommand(b *testing.B) {
	for b.Loop() {
		RedactCommand("weigh the two plans")
	}
}
