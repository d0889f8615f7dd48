package sdk

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/yagent/yagent/internal/wire"
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
	otel.SetTextMapPropagator(wire.TraceProp)
	return t
}

// startCall extracts the host's span context from the call's metadata and
// starts the call's span under it; ok is false when the host did not trace
// the call.
func (t *pluginTracing) startCall(ctx context.Context, plugin, tool string) (context.Context, trace.Span, *spanBatch, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	ctx = wire.TraceProp.Extract(ctx, metadataCarrier(md))
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
