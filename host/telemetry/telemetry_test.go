package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/yagent/yagent/call/adapter"
)

func TestEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_METRICS_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://localhost:4318/v1/metrics"}, true},
	} {
		if got := Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("Enabled(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// run passes one call through tel as the adapter does.
func run(t *testing.T, tel *Telemetry, rec *adapter.CallRecord, res *adapter.Result) {
	t.Helper()
	ctx := tel.Start(context.Background(), rec)
	rec.Decided = true
	if err := tel.Decide(ctx, rec); err != nil {
		t.Fatal(err)
	}
	tel.Finish(ctx, rec, res)
}

func newRec(tool string) *adapter.CallRecord {
	return &adapter.CallRecord{ID: "c", SessionID: "s", Tool: tool, Family: "fs", Effect: "write", Started: time.Now(),
		Args: map[string]any{"path": "/ws/secret.txt", "content": "planted-secret-7f3a"}}
}

// Arguments reach the span only when the admin opts in.
func TestArgumentsOnlyWithOptIn(t *testing.T) {
	t.Parallel()
	for _, optIn := range []bool{false, true} {
		exp := tracetest.NewInMemoryExporter()
		tel, err := New(Options{Spans: sdktrace.NewSimpleSpanProcessor(exp), Arguments: optIn})
		if err != nil {
			t.Fatal(err)
		}
		rec := newRec("write")
		rec.Action, rec.Allowed = adapter.Allow, true
		run(t, tel, rec, &adapter.Result{})
		spans := exp.GetSpans()
		if len(spans) != 1 {
			t.Fatalf("%d spans, want 1", len(spans))
		}
		var args string
		for _, kv := range spans[0].Attributes {
			if kv.Key == "yagent.arguments" {
				args = kv.Value.AsString()
			}
			if kv.Value.Type() == attribute.STRING && !optIn && kv.Key != "yagent.arguments" && strings.Contains(kv.Value.AsString(), "planted-secret") {
				t.Errorf("attribute %s leaks the content: %q", kv.Key, kv.Value.AsString())
			}
		}
		if optIn != (args != "") {
			t.Errorf("opt-in %v: yagent.arguments = %q", optIn, args)
		}
		if optIn && !strings.Contains(args, "/ws/secret.txt") {
			t.Errorf("opt-in: yagent.arguments = %q, want the path", args)
		}
	}
}

// Calls, latency, asks and denies are counted by tool and outcome.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	exp := tracetest.NewInMemoryExporter()
	tel, err := New(Options{Spans: sdktrace.NewSimpleSpanProcessor(exp), Metrics: reader})
	if err != nil {
		t.Fatal(err)
	}
	allowed := newRec("read")
	allowed.Action, allowed.Basis, allowed.Allowed = adapter.Allow, "workspace", true
	run(t, tel, allowed, &adapter.Result{})
	asked := newRec("write")
	asked.Action, asked.Basis, asked.Allowed = adapter.Ask, "outside", true
	asked.Approval = &adapter.Approval{Allowed: true, By: "user"}
	run(t, tel, asked, &adapter.Result{})
	refused := newRec("write")
	refused.Action, refused.Basis, refused.Allowed = adapter.Deny, "rule", false
	run(t, tel, refused, &adapter.Result{Code: "denied"})

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		attrs []attribute.KeyValue
		want  int64
	}{
		{"yagent.calls", []attribute.KeyValue{attribute.String("yagent.tool", "read"), attribute.String("yagent.code", "ok")}, 1},
		{"yagent.calls", []attribute.KeyValue{attribute.String("yagent.tool", "write"), attribute.String("yagent.code", "ok")}, 1},
		{"yagent.calls", []attribute.KeyValue{attribute.String("yagent.tool", "write"), attribute.String("yagent.code", "denied"), attribute.String("yagent.family", "fs")}, 1},
		{"yagent.asks", []attribute.KeyValue{attribute.String("yagent.tool", "write"), attribute.String("yagent.answer", "allowed")}, 1},
		{"yagent.denies", []attribute.KeyValue{attribute.String("yagent.tool", "write"), attribute.String("yagent.basis", "rule")}, 1},
		{"yagent.denies", []attribute.KeyValue{attribute.String("yagent.tool", "read")}, 0},
	} {
		if got := sum(rm, tc.name, tc.attrs); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.attrs, got, tc.want)
		}
	}
	if n := histCount(rm, "yagent.call.duration"); n != 3 {
		t.Errorf("yagent.call.duration has %d observations, want 3", n)
	}
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	last := spans[2]
	if last.Status.Code != codes.Error {
		t.Errorf("the refused call's span status = %v, want error", last.Status)
	}
}

func matches(set attribute.Set, attrs []attribute.KeyValue) bool {
	for _, kv := range attrs {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

func sum(rm metricdata.ResourceMetrics, name string, attrs []attribute.KeyValue) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range s.DataPoints {
					if matches(dp.Attributes, attrs) {
						n += dp.Value
					}
				}
			}
		}
	}
	return n
}

func histCount(rm metricdata.ResourceMetrics, name string) uint64 {
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					n += dp.Count
				}
			}
		}
	}
	return n
}
