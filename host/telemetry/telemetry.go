package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/internal/remote"
)

// ArgumentsEnv, set to "1", adds each call's arguments to its span
// (yagent.arguments, as JSON). Off by default: arguments hold paths,
// commands and file contents.
const ArgumentsEnv = "YAGENT_TELEMETRY_ARGUMENTS"

// scope is the instrumentation scope of the host's spans and metrics.
const scope = "github.com/yagent/yagent/host"

// Enabled says whether the environment configures telemetry: an OTLP
// endpoint, or a traces or metrics exporter other than "none".
func Enabled(getenv func(string) string) bool {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
		if v := getenv(k); v != "" && v != "none" {
			return true
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if getenv(k) != "" {
			return true
		}
	}
	return false
}

// Options configures a Telemetry.
type Options struct {
	// Spans receives the host's spans and the plugins' (an in-memory
	// exporter behind a simple processor in tests, OTLP behind a batch
	// processor otherwise); nil records no spans.
	Spans sdktrace.SpanProcessor
	// Metrics reads the metrics; nil records none.
	Metrics sdkmetric.Reader
	// Resource describes the process; nil means resource.Default().
	Resource *resource.Resource
	// Arguments adds the calls' arguments to their spans.
	Arguments bool
}

// Telemetry is the adapter.Observer that traces and measures calls. Its
// methods are safe for concurrent use.
type Telemetry struct {
	opts   Options
	res    *resource.Resource
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	tracer trace.Tracer

	calls    metric.Int64Counter
	latency  metric.Float64Histogram
	asks     metric.Int64Counter
	denies   metric.Int64Counter
	restarts metric.Int64Counter
	crashes  metric.Int64Counter
}

var _ adapter.Observer = (*Telemetry)(nil)

// New returns a Telemetry recording into opts' processor and reader.
func New(opts Options) (*Telemetry, error) {
	res := opts.Resource
	if res == nil {
		res = resource.Default()
	}
	t := &Telemetry{opts: opts, res: res}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if opts.Spans != nil {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(opts.Spans))
	}
	t.tp = sdktrace.NewTracerProvider(tpOpts...)
	t.tracer = t.tp.Tracer(scope)
	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if opts.Metrics != nil {
		mpOpts = append(mpOpts, sdkmetric.WithReader(opts.Metrics))
	}
	t.mp = sdkmetric.NewMeterProvider(mpOpts...)
	m := t.mp.Meter(scope)
	var errs [6]error
	t.calls, errs[0] = m.Int64Counter("yagent.calls", metric.WithDescription("Tool calls, by tool, family and result code."), metric.WithUnit("{call}"))
	t.latency, errs[1] = m.Float64Histogram("yagent.call.duration", metric.WithDescription("Tool call latency, from the call's arrival to its result."), metric.WithUnit("s"))
	t.asks, errs[2] = m.Int64Counter("yagent.asks", metric.WithDescription("Calls the guard asked the user about, by tool and answer."), metric.WithUnit("{call}"))
	t.denies, errs[3] = m.Int64Counter("yagent.denies", metric.WithDescription("Calls refused, by tool and basis."), metric.WithUnit("{call}"))
	t.restarts, errs[4] = m.Int64Counter("yagent.plugin.restarts", metric.WithDescription("Plugin processes started again after the first."), metric.WithUnit("{start}"))
	t.crashes, errs[5] = m.Int64Counter("yagent.plugin.crashes", metric.WithDescription("Plugin processes that died while in use."), metric.WithUnit("{crash}"))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("telemetry instruments: %w", err)
	}
	return t, nil
}

// FromEnv returns the Telemetry the OTEL_* variables configure (through
// autoexport: OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER,
// OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_ENDPOINT...), with the
// service named "yagent" unless OTEL_SERVICE_NAME says otherwise.
func FromEnv(ctx context.Context) (*Telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "yagent")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	spans, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry span exporter (check OTEL_TRACES_EXPORTER and OTEL_EXPORTER_OTLP_*): %w", err)
	}
	reader, err := autoexport.NewMetricReader(ctx)
	if err != nil {
		_ = spans.Shutdown(ctx)
		return nil, fmt.Errorf("telemetry metric reader (check OTEL_METRICS_EXPORTER and OTEL_EXPORTER_OTLP_*): %w", err)
	}
	return New(Options{
		Spans:     sdktrace.NewBatchSpanProcessor(spans),
		Metrics:   reader,
		Resource:  res,
		Arguments: os.Getenv(ArgumentsEnv) == "1",
	})
}

// Shutdown flushes what is recorded to the exporters and stops them.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}

// Start opens the call's span and lets the plugin's spans of the call
// reach the exporter.
func (t *Telemetry) Start(ctx context.Context, rec *adapter.CallRecord) context.Context {
	ctx, _ = t.tracer.Start(ctx, "tool "+rec.Tool,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("yagent.tool", rec.Tool),
			attribute.String("yagent.family", rec.Family),
			attribute.String("yagent.effect", rec.Effect),
			attribute.String("yagent.session", rec.SessionID),
			attribute.String("yagent.client", rec.Client),
			attribute.String("yagent.call", rec.ID),
		))
	return remote.WithSpanSink(ctx, t.pluginSpans)
}

// pluginSpans hands the spans a plugin finished to the span processor, as
// if they had ended here: under the host's resource, so they belong to the
// same service.
func (t *Telemetry) pluginSpans(spans []sdktrace.ReadOnlySpan) {
	if t.opts.Spans == nil {
		return
	}
	for _, s := range spans {
		stub := tracetest.SpanStubFromReadOnlySpan(s)
		stub.Resource = t.res
		t.opts.Spans.OnEnd(stub.Snapshot())
	}
}

// Decide records the decision on the span and counts asks and denies.
func (t *Telemetry) Decide(ctx context.Context, rec *adapter.CallRecord) error {
	span := trace.SpanFromContext(ctx)
	attrs := []attribute.KeyValue{
		attribute.String("yagent.decision", rec.Action.String()),
		attribute.String("yagent.basis", rec.Basis),
		attribute.Bool("yagent.allowed", rec.Allowed),
	}
	if rec.Rule != "" {
		attrs = append(attrs, attribute.String("yagent.rule", rec.Rule))
	}
	if rec.Approval != nil {
		attrs = append(attrs, attribute.String("yagent.approved_by", rec.Approval.By))
	}
	if t.opts.Arguments && rec.Args != nil {
		if b, err := json.Marshal(rec.Args); err == nil {
			attrs = append(attrs, attribute.String("yagent.arguments", string(b)))
		}
	}
	span.SetAttributes(attrs...)
	tool := metric.WithAttributes(attribute.String("yagent.tool", rec.Tool), attribute.String("yagent.family", rec.Family))
	if rec.Action == adapter.Ask {
		answer := "denied"
		switch {
		case rec.Approval == nil || rec.Approval.Unanswered:
			answer = "unanswered"
		case rec.Approval.Allowed:
			answer = "allowed"
		}
		t.asks.Add(ctx, 1, tool, metric.WithAttributes(attribute.String("yagent.answer", answer)))
	}
	if !rec.Allowed {
		t.denies.Add(ctx, 1, tool, metric.WithAttributes(attribute.String("yagent.basis", rec.Basis)))
	}
	return nil
}

// Finish closes the call's span with its result code and counts the call.
func (t *Telemetry) Finish(ctx context.Context, rec *adapter.CallRecord, res *adapter.Result) {
	code := "ok"
	if res != nil && res.Code != "" {
		code = res.Code
	}
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("yagent.code", code))
	if code != "ok" {
		span.SetStatus(codes.Error, code)
	}
	span.End()
	attrs := metric.WithAttributes(
		attribute.String("yagent.tool", rec.Tool),
		attribute.String("yagent.family", rec.Family),
		attribute.String("yagent.code", code),
	)
	t.calls.Add(ctx, 1, attrs)
	if !rec.Started.IsZero() {
		t.latency.Record(ctx, time.Since(rec.Started).Seconds(), attrs)
	}
}

// PluginRestarted counts a plugin process started again after its first.
func (t *Telemetry) PluginRestarted(plugin string) {
	t.restarts.Add(context.Background(), 1, metric.WithAttributes(attribute.String("yagent.plugin", plugin)))
}

// PluginCrashed counts a plugin process that died while in use.
func (t *Telemetry) PluginCrashed(plugin string) {
	t.crashes.Add(context.Background(), 1, metric.WithAttributes(attribute.String("yagent.plugin", plugin)))
}
