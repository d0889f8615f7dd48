package pluginmgr

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/host/telemetry"
	"github.com/yagent/yagent/sdk"
)

type tracedOut struct {
	Traceparent string `json:"traceparent"`
	Telemetry   string `json:"telemetry"`
}

// tracedCall runs test_traced in p under ctx and obs (nil: no telemetry), as the
// adapter does, and returns what the tool saw.
func tracedCall(t *testing.T, ctx context.Context, p *Plugin, obs adapter.Observer) tracedOut {
	t.Helper()
	rec := &adapter.CallRecord{ID: "call-7", SessionID: "s-test", Tool: "test_traced", Family: "test", Effect: "none", Started: time.Now()}
	if obs != nil {
		ctx = obs.Start(ctx, rec)
		rec.Decided, rec.Action, rec.Basis, rec.Allowed = true, adapter.Allow, "workspace", true
		if err := obs.Decide(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	res, err := p.Execute(ctx, sdk.CallInfo{ID: rec.ID, Tool: rec.Tool, SessionID: rec.SessionID}, json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatalf("Execute(test_traced): %v", err)
	}
	if obs != nil {
		obs.Finish(ctx, rec, &adapter.Result{})
	}
	var out tracedOut
	if err := json.Unmarshal(res.Data.(json.RawMessage), &out); err != nil {
		t.Fatalf("test_traced data %s: %v", res.Data, err)
	}
	return out
}

func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return tracetest.SpanStub{}
}

func attr(s tracetest.SpanStub, key string) (string, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

// The plugin's span, and the span a tool starts with only the trace API,
// come back from the real plugin process as children of the host's span.
func TestTelemetry_PluginSpanIsChildOfHostSpan(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Options{Spans: sdktrace.NewSimpleSpanProcessor(exp)})
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Options{})
	m.SetTelemetry(tel)
	p := loadTest(t, m)
	out := tracedCall(t, context.Background(), p, tel)
	if out.Telemetry != "1" || out.Traceparent == "" {
		t.Errorf("the plugin saw telemetry %q, traceparent %q; want 1 and a traceparent", out.Telemetry, out.Traceparent)
	}

	spans := exp.GetSpans()
	host := spanNamed(t, spans, "tool test_traced")
	plug := spanNamed(t, spans, "plugin test_traced")
	inner := spanNamed(t, spans, "testplugin inner")
	hostID := host.SpanContext
	if plug.SpanContext.TraceID() != hostID.TraceID() || inner.SpanContext.TraceID() != hostID.TraceID() {
		t.Errorf("trace ids: host %s, plugin %s, inner %s; want one trace", hostID.TraceID(), plug.SpanContext.TraceID(), inner.SpanContext.TraceID())
	}
	if plug.Parent.SpanID() != hostID.SpanID() {
		t.Errorf("plugin span's parent = %s, want the host span %s", plug.Parent.SpanID(), hostID.SpanID())
	}
	if inner.Parent.SpanID() != plug.SpanContext.SpanID() {
		t.Errorf("inner span's parent = %s, want the plugin span %s", inner.Parent.SpanID(), plug.SpanContext.SpanID())
	}
	for key, want := range map[string]string{
		"yagent.tool": "test_traced", "yagent.family": "test", "yagent.effect": "none",
		"yagent.decision": "allow", "yagent.basis": "workspace", "yagent.code": "ok", "yagent.session": "s-test",
	} {
		if got, _ := attr(host, key); got != want {
			t.Errorf("host span %s = %q, want %q", key, got, want)
		}
	}
	if got, _ := attr(plug, "yagent.plugin"); got != "test" {
		t.Errorf("plugin span yagent.plugin = %q, want test", got)
	}
	if got, _ := attr(inner, "testplugin.note"); got != "inside" {
		t.Errorf("inner span testplugin.note = %q, want inside", got)
	}
	if _, ok := attr(host, "yagent.arguments"); ok {
		t.Error("host span carries the arguments without the opt-in")
	}
	if !plug.Resource.Equal(host.Resource) {
		t.Errorf("plugin span resource %v, want the host's %v", plug.Resource, host.Resource)
	}
}

// A call made under a client's span (an MCP client's traceparent in the
// call's _meta, which the front puts in ctx as a remote span context) has
// the host's span, the plugin's and the tool's own in the client's trace,
// the host's a child of the client's span with its tracestate, and the
// plugin gets the client's trace id in the traceparent it is sent.
func TestTelemetry_ClientTraceReachesPlugin(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Options{Spans: sdktrace.NewSimpleSpanProcessor(exp)})
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Options{})
	m.SetTelemetry(tel)
	p := loadTest(t, m)
	state, err := trace.ParseTraceState("k=v")
	if err != nil {
		t.Fatal(err)
	}
	client := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 1}, SpanID: trace.SpanID{0x0f, 2}, TraceFlags: trace.FlagsSampled, TraceState: state, Remote: true,
	})
	out := tracedCall(t, trace.ContextWithRemoteSpanContext(context.Background(), client), p, tel)
	if want := "00-" + client.TraceID().String() + "-"; len(out.Traceparent) < len(want) || out.Traceparent[:len(want)] != want {
		t.Errorf("the plugin saw traceparent %q, want one in the client's trace %s", out.Traceparent, client.TraceID())
	}
	spans := exp.GetSpans()
	host := spanNamed(t, spans, "tool test_traced")
	if host.Parent.SpanID() != client.SpanID() || host.SpanContext.TraceState().String() != "k=v" {
		t.Errorf("host span: parent %s, tracestate %q; want the client's span %s and k=v", host.Parent.SpanID(), host.SpanContext.TraceState(), client.SpanID())
	}
	for _, name := range []string{"tool test_traced", "plugin test_traced", "testplugin inner"} {
		if got := spanNamed(t, spans, name).SpanContext.TraceID(); got != client.TraceID() {
			t.Errorf("span %q in trace %s, want the client's %s", name, got, client.TraceID())
		}
	}
}

// Off: no telemetry set, the plugin gets no TelemetryEnv (not even one the
// host's own environment holds) and the call no traceparent, even when the
// Go API's caller traces with a span of its own.
func TestTelemetry_OffSendsNothing(t *testing.T) {
	t.Setenv(sdk.TelemetryEnv, "1")
	p := loadTest(t, newManager(t, Options{}))
	own := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	for _, ctx := range []context.Context{context.Background(), trace.ContextWithSpanContext(context.Background(), own)} {
		out := tracedCall(t, ctx, p, nil)
		if out.Telemetry != "" || out.Traceparent != "" {
			t.Errorf("telemetry off: the plugin saw telemetry %q, traceparent %q; want neither", out.Telemetry, out.Traceparent)
		}
	}
}

// A crash and the restart after it are counted.
func TestTelemetry_CrashAndRestartCounted(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	tel, err := telemetry.New(telemetry.Options{Metrics: reader})
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Options{})
	m.SetTelemetry(tel)
	p := loadTest(t, m)
	_, err = call(context.Background(), p, "test_panic", struct{}{}, nil)
	wantToolError(t, "Execute(test_panic)", err, sdk.CodePluginCrashed)
	echo(t, p, "back")

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"yagent.plugin.crashes": 1, "yagent.plugin.restarts": 1} {
		if got := counterValue(rm, name, attribute.String("yagent.plugin", "test")); got != want {
			t.Errorf("%s{plugin=test} = %d, want %d", name, got, want)
		}
	}
}

func counterValue(rm metricdata.ResourceMetrics, name string, kv attribute.KeyValue) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			sum, ok := md.Data.(metricdata.Sum[int64])
			if md.Name != name || !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				if v, ok := dp.Attributes.Value(kv.Key); ok && v == kv.Value {
					n += dp.Value
				}
			}
		}
	}
	return n
}
