package sdk

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// TelemetryEnv is set to "1" by the host in a plugin's environment when it
// traces calls. The sdk then installs a recording TracerProvider as the
// global one (otel.Tracer works in tools) and hands the spans each traced
// call finished back to the host on the call's final event, so plugins
// need no exporter. Unset, the sdk installs nothing: the trace API stays
// the global no-op.
const TelemetryEnv = "YAGENT_TELEMETRY"

// tracerName is the instrumentation scope of the sdk's own spans.
const tracerName = "github.com/yagent/yagent/sdk"

// traceProp carries the host's span context to the plugin: a W3C
// traceparent in the Call stream's metadata.
var traceProp = propagation.TraceContext{}

// metadataCarrier adapts gRPC metadata to a propagation.TextMapCarrier.
type metadataCarrier metadata.MD

func (c metadataCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c metadataCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c metadataCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// injectTrace adds the span context of ctx to the outgoing metadata when
// the host traces the call (a span and a span sink in ctx). Otherwise no
// header: a host without telemetry sends nothing, even when the caller of
// the Go API put a span of its own in ctx.
func injectTrace(ctx context.Context) context.Context {
	md := traceHeaders(ctx)
	if md == nil {
		return ctx
	}
	kv := make([]string, 0, 2*len(md))
	for k, v := range md {
		kv = append(kv, k, v)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// traceHeaders returns the headers injectTrace adds, nil when it adds none.
func traceHeaders(ctx context.Context) map[string]string {
	if spanSink(ctx) == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	h := propagation.MapCarrier{}
	traceProp.Inject(ctx, h)
	return h
}

type spanSinkKey struct{}

// WithSpanSink returns ctx carrying sink: Remote.Call hands it the spans
// the plugin finished during a call made with that ctx (the host passes
// them on to its exporter). Without a sink they are dropped.
func WithSpanSink(ctx context.Context, sink func([]sdktrace.ReadOnlySpan)) context.Context {
	return context.WithValue(ctx, spanSinkKey{}, sink)
}

func spanSink(ctx context.Context) func([]sdktrace.ReadOnlySpan) {
	sink, _ := ctx.Value(spanSinkKey{}).(func([]sdktrace.ReadOnlySpan))
	return sink
}

// pluginTracing records, in a plugin process, the spans of the calls the
// host traces. It is the TracerProvider's span processor: a span started
// under a call's span (directly or further down) joins that call's batch,
// and the batch goes back with the call's final event. A span that ends
// after its call has returned is lost.
type pluginTracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer

	mu    sync.Mutex
	spans map[trace.SpanID]*spanBatch
}

type spanBatch struct {
	ids   []trace.SpanID
	ended []sdktrace.ReadOnlySpan
}

func newPluginTracing() *pluginTracing {
	t := &pluginTracing{spans: make(map[trace.SpanID]*spanBatch)}
	// Only what the host sampled is recorded: a span with no traced call
	// above it has nowhere to go.
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())),
		sdktrace.WithSpanProcessor(t),
	)
	t.tracer = t.tp.Tracer(tracerName)
	otel.SetTracerProvider(t.tp)
	otel.SetTextMapPropagator(traceProp)
	return t
}

// startCall extracts the host's span context from the call's metadata and
// starts the call's span under it; ok is false when the host did not trace
// the call.
func (t *pluginTracing) startCall(ctx context.Context, plugin, tool string) (context.Context, trace.Span, *spanBatch, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	ctx = traceProp.Extract(ctx, metadataCarrier(md))
	if !trace.SpanContextFromContext(ctx).IsSampled() {
		return ctx, nil, nil, false
	}
	ctx, span := t.tracer.Start(ctx, "plugin "+tool, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("yagent.tool", tool), attribute.String("yagent.plugin", plugin)))
	b := &spanBatch{}
	t.mu.Lock()
	t.track(span.SpanContext().SpanID(), b)
	t.mu.Unlock()
	return ctx, span, b, true
}

// endCall ends the call's span and returns the batch's finished spans.
func (t *pluginTracing) endCall(span trace.Span, b *spanBatch, ev *pluginpb.CallEvent) []*pluginpb.Span {
	if e := ev.GetError(); e != nil {
		span.SetAttributes(attribute.String("yagent.code", e.GetCode()))
		span.SetStatus(codes.Error, e.GetMessage())
	}
	span.End()
	t.mu.Lock()
	for _, id := range b.ids {
		delete(t.spans, id)
	}
	ended := b.ended
	b.ended = nil
	t.mu.Unlock()
	return spansToWire(ended)
}

// track must be called with t.mu held.
func (t *pluginTracing) track(id trace.SpanID, b *spanBatch) {
	t.spans[id] = b
	b.ids = append(b.ids, id)
}

func (t *pluginTracing) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.spans[s.Parent().SpanID()]; b != nil {
		t.track(s.SpanContext().SpanID(), b)
	}
}

func (t *pluginTracing) OnEnd(s sdktrace.ReadOnlySpan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.spans[s.SpanContext().SpanID()]; b != nil {
		b.ended = append(b.ended, s)
	}
}

func (t *pluginTracing) Shutdown(context.Context) error   { return nil }
func (t *pluginTracing) ForceFlush(context.Context) error { return nil }

func spansToWire(spans []sdktrace.ReadOnlySpan) []*pluginpb.Span {
	if len(spans) == 0 {
		return nil
	}
	out := make([]*pluginpb.Span, 0, len(spans))
	for _, s := range spans {
		sc, parent := s.SpanContext(), s.Parent()
		tid, sid, pid := sc.TraceID(), sc.SpanID(), parent.SpanID()
		w := &pluginpb.Span{
			TraceId:       tid[:],
			SpanId:        sid[:],
			Name:          s.Name(),
			Kind:          int32(s.SpanKind()),
			StartUnixNano: s.StartTime().UnixNano(),
			EndUnixNano:   s.EndTime().UnixNano(),
			Attributes:    attrsToWire(s.Attributes()),
			StatusCode:    int32(s.Status().Code),
			StatusMessage: s.Status().Description,
			ScopeName:     s.InstrumentationScope().Name,
			ScopeVersion:  s.InstrumentationScope().Version,
			TraceFlags:    uint32(sc.TraceFlags()),
		}
		if parent.IsValid() {
			w.ParentSpanId = pid[:]
		}
		for _, e := range s.Events() {
			w.Events = append(w.Events, &pluginpb.SpanEvent{Name: e.Name, TimeUnixNano: e.Time.UnixNano(), Attributes: attrsToWire(e.Attributes)})
		}
		out = append(out, w)
	}
	return out
}

func attrsToWire(kvs []attribute.KeyValue) []*pluginpb.SpanAttribute {
	out := make([]*pluginpb.SpanAttribute, 0, len(kvs))
	for _, kv := range kvs {
		a := &pluginpb.SpanAttribute{Key: string(kv.Key)}
		switch kv.Value.Type() {
		case attribute.BOOL:
			a.Value = &pluginpb.SpanAttribute_BoolValue{BoolValue: kv.Value.AsBool()}
		case attribute.INT64:
			a.Value = &pluginpb.SpanAttribute_IntValue{IntValue: kv.Value.AsInt64()}
		case attribute.FLOAT64:
			a.Value = &pluginpb.SpanAttribute_DoubleValue{DoubleValue: kv.Value.AsFloat64()}
		default: // strings, and slices in their printed form
			a.Value = &pluginpb.SpanAttribute_StringValue{StringValue: kv.Value.Emit()}
		}
		out = append(out, a)
	}
	return out
}

func attrsFromWire(ws []*pluginpb.SpanAttribute) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(ws))
	for _, a := range ws {
		switch v := a.GetValue().(type) {
		case *pluginpb.SpanAttribute_BoolValue:
			out = append(out, attribute.Bool(a.GetKey(), v.BoolValue))
		case *pluginpb.SpanAttribute_IntValue:
			out = append(out, attribute.Int64(a.GetKey(), v.IntValue))
		case *pluginpb.SpanAttribute_DoubleValue:
			out = append(out, attribute.Float64(a.GetKey(), v.DoubleValue))
		default:
			out = append(out, attribute.String(a.GetKey(), a.GetStringValue()))
		}
	}
	return out
}

// spansFromWire rebuilds the plugin's spans as read-only spans the host's
// span processors take. A span with a malformed id is dropped.
func spansFromWire(ws []*pluginpb.Span) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, 0, len(ws))
	for _, w := range ws {
		var tid trace.TraceID
		var sid, pid trace.SpanID
		if len(w.GetTraceId()) != len(tid) || len(w.GetSpanId()) != len(sid) {
			continue
		}
		copy(tid[:], w.GetTraceId())
		copy(sid[:], w.GetSpanId())
		flags := trace.TraceFlags(w.GetTraceFlags())
		stub := tracetest.SpanStub{
			Name:                 w.GetName(),
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags}),
			SpanKind:             trace.SpanKind(w.GetKind()),
			StartTime:            time.Unix(0, w.GetStartUnixNano()),
			EndTime:              time.Unix(0, w.GetEndUnixNano()),
			Attributes:           attrsFromWire(w.GetAttributes()),
			Status:               sdktrace.Status{Code: codes.Code(w.GetStatusCode()), Description: w.GetStatusMessage()},
			InstrumentationScope: instrumentation.Scope{Name: w.GetScopeName(), Version: w.GetScopeVersion()},
		}
		if len(w.GetParentSpanId()) == len(pid) {
			copy(pid[:], w.GetParentSpanId())
			stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid, TraceFlags: flags})
		}
		for _, e := range w.GetEvents() {
			stub.Events = append(stub.Events, sdktrace.Event{Name: e.GetName(), Time: time.Unix(0, e.GetTimeUnixNano()), Attributes: attrsFromWire(e.GetAttributes())})
		}
		out = append(out, stub.Snapshot())
	}
	return out
}
