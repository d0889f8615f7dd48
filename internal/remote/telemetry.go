package remote

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	"github.com/yagent/yagent/internal/wire"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

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
	wire.TraceProp.Inject(ctx, h)
	return h
}

type spanSinkKey struct{}

// WithSpanSink returns ctx carrying sink: Client.Call hands it the spans
// the plugin finished during a call made with that ctx (the host passes
// them on to its exporter). Without a sink they are dropped.
func WithSpanSink(ctx context.Context, sink func([]sdktrace.ReadOnlySpan)) context.Context {
	return context.WithValue(ctx, spanSinkKey{}, sink)
}

func spanSink(ctx context.Context) func([]sdktrace.ReadOnlySpan) {
	sink, _ := ctx.Value(spanSinkKey{}).(func([]sdktrace.ReadOnlySpan))
	return sink
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
