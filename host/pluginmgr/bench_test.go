package pluginmgr

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/host/telemetry"
	"github.com/yagent/yagent/sdk"
)

func benchManager(b *testing.B, cache string) *Manager {
	m := New(Options{Dirs: []string{testPluginDir}, CacheDir: cache})
	m.now = agedClock // the test plugin was built a moment ago
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	})
	return m
}

// BenchmarkExecute_Echo is one call's round trip to a running plugin
// process over gRPC with mTLS.
func BenchmarkExecute_Echo(b *testing.B) {
	m := benchManager(b, b.TempDir())
	if _, _, err := m.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	p := m.Plugin("test")
	input := json.RawMessage(`{"text":"hello"}`)
	info := sdk.CallInfo{Tool: "test_echo"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Execute(context.Background(), info, input, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad_Cold launches and describes the plugin (empty cache).
func BenchmarkLoad_Cold(b *testing.B) {
	for b.Loop() {
		m := New(Options{Dirs: []string{testPluginDir}, CacheDir: b.TempDir()})
		if _, _, err := m.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
		_ = m.Close(context.Background())
	}
}

// BenchmarkLoad_Warm reads the plugin's specs from the cache: no hash, no
// process.
func BenchmarkLoad_Warm(b *testing.B) {
	cache := b.TempDir()
	if _, _, err := benchManager(b, cache).Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m := New(Options{Dirs: []string{testPluginDir}, CacheDir: cache})
		m.now = agedClock
		if _, _, err := m.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecute_EchoTelemetry is BenchmarkExecute_Echo traced: the
// host's span (Start, Decide, Finish of the telemetry observer), the
// traceparent in the call's metadata, the plugin's span handed back, all
// into an in-memory exporter, and the call metrics.
func BenchmarkExecute_EchoTelemetry(b *testing.B) { benchTraced(b, true) }

// BenchmarkExecute_EchoTelemetryHostOnly traces in the host only: the
// plugin was launched without telemetry, so it records nothing; the
// difference to BenchmarkExecute_EchoTelemetry is the plugin's share.
func BenchmarkExecute_EchoTelemetryHostOnly(b *testing.B) { benchTraced(b, false) }

func benchTraced(b *testing.B, plugin bool) {
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Options{Spans: sdktrace.NewSimpleSpanProcessor(exp), Metrics: sdkmetric.NewManualReader()})
	if err != nil {
		b.Fatal(err)
	}
	m := benchManager(b, b.TempDir())
	if plugin {
		m.SetTelemetry(tel)
	}
	if _, _, err := m.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	p := m.Plugin("test")
	input := json.RawMessage(`{"text":"hello"}`)
	info := sdk.CallInfo{Tool: "test_echo"}
	perCall := 1
	if plugin {
		perCall = 2 // the host's span and the plugin's
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rec := &adapter.CallRecord{Tool: "test_echo", Family: "test", Effect: "none", Started: time.Now(), Decided: true, Allowed: true}
		ctx := tel.Start(context.Background(), rec)
		_ = tel.Decide(ctx, rec)
		if _, err := p.Execute(ctx, info, input, nil); err != nil {
			b.Fatal(err)
		}
		tel.Finish(ctx, rec, &adapter.Result{})
		if i%1000 == 999 {
			if n := len(exp.GetSpans()); n != 1000*perCall {
				b.Fatalf("%d spans for 1000 calls, want %d", n, 1000*perCall)
			}
			exp.Reset() // bounded memory
		}
	}
}
