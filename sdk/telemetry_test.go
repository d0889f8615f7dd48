package sdk_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// Concurrent traced calls each get back their own spans, the plugin's
// span under the host's span of that call and the tool's under the
// plugin's, with a failing call's code on its span.
func TestTelemetry_ConcurrentCallsKeepTheirSpans(t *testing.T) {
	t.Setenv(sdk.TelemetryEnv, "1")
	const n = 8
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	c := plugintest.Start(t, sdk.Plugin{Name: "traced", Version: "1", Tools: []sdk.Tool{
		sdk.NewTool(sdk.Spec{Name: "work"}, func(ctx context.Context, in struct {
			I int `json:"i"`
		}) (string, error) {
			_, span := otel.Tracer("work").Start(ctx, fmt.Sprintf("inner %d", in.I))
			// Every call is in flight before any ends, so their spans overlap.
			arrived.Done()
			select {
			case <-all:
			case <-time.After(10 * time.Second):
			}
			span.End()
			if in.I%2 == 1 {
				return "", sdk.Errorf(sdk.CodeNotFound, "odd %d", in.I)
			}
			return "ok", nil
		}),
	}}, nil)

	got := make([][]sdktrace.ReadOnlySpan, n)
	host := make([]trace.SpanContext, n)
	var wg sync.WaitGroup
	for i := range n {
		host[i] = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i + 1)}, SpanID: trace.SpanID{byte(i + 1)}, TraceFlags: trace.FlagsSampled})
		ctx := trace.ContextWithSpanContext(context.Background(), host[i])
		ctx = remote.WithSpanSink(ctx, func(s []sdktrace.ReadOnlySpan) { got[i] = append(got[i], s...) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Call(ctx, "work", sdk.CallInfo{}, map[string]int{"i": i})
		}()
	}
	wg.Wait()
	for i := range n {
		spans := map[string]sdktrace.ReadOnlySpan{}
		for _, s := range got[i] {
			spans[s.Name()] = s
		}
		plug, inner := spans["plugin work"], spans[fmt.Sprintf("inner %d", i)]
		if len(got[i]) != 2 || plug == nil || inner == nil {
			t.Errorf("call %d got spans %v, want its plugin span and its inner span", i, spans)
			continue
		}
		if plug.Parent().SpanID() != host[i].SpanID() || plug.SpanContext().TraceID() != host[i].TraceID() {
			t.Errorf("call %d: plugin span parent %s trace %s, want the host's %s %s", i, plug.Parent().SpanID(), plug.SpanContext().TraceID(), host[i].SpanID(), host[i].TraceID())
		}
		if inner.Parent().SpanID() != plug.SpanContext().SpanID() {
			t.Errorf("call %d: inner span's parent %s, want the plugin span %s", i, inner.Parent().SpanID(), plug.SpanContext().SpanID())
		}
		var code string
		for _, kv := range plug.Attributes() {
			if kv.Key == "yagent.code" {
				code = kv.Value.AsString()
			}
		}
		if want := map[bool]string{true: sdk.CodeNotFound, false: ""}[i%2 == 1]; code != want {
			t.Errorf("call %d: plugin span yagent.code = %q, want %q", i, code, want)
		}
	}
}
