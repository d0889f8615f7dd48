package telemetry

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/yagent/yagent/call/adapter"
)

// BenchmarkObserver is the host's own share of a traced call: the span
// (into an in-memory exporter) and the metrics, no plugin.
func BenchmarkObserver(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := New(Options{Spans: sdktrace.NewSimpleSpanProcessor(exp), Metrics: sdkmetric.NewManualReader()})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		rec := &adapter.CallRecord{Tool: "read_file", Family: "fs", Effect: "read", Started: time.Now(), Decided: true, Allowed: true}
		ctx := tel.Start(context.Background(), rec)
		_ = tel.Decide(ctx, rec)
		tel.Finish(ctx, rec, &adapter.Result{})
		if i%1000 == 999 {
			exp.Reset()
		}
	}
}
