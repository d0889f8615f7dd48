package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/host/telemetry"
	"github.com/yagent/yagent/sdk"
)

// BenchmarkLaneCall: one tools/call after another through a stdio session
// of Server.Run, the tool in the host's process (no plugin), so that the
// figures are the front's own: the line read and judged, the lane or the
// SDK's path, the adapter, the answer written and read back. Allocations
// are the client's and the host's together. The params hold no _meta, a
// progress token, or a W3C trace context (traceparent and tracestate);
// with telemetry on, each call's span goes to an in-memory exporter. The
// client of "v2026-07-28" opens with server/discover and sends in each
// call's _meta its protocol version, identity and capabilities, as the Go
// SDK's client does. "read-4k" answers with 4 KiB of text, as a read_file
// of a 4 KiB file does.
func BenchmarkLaneCall(b *testing.B) {
	const traced = `"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"},`
	perRequestMeta := `"_meta":` + perRequest(multiRoundTripVersion, "") + `,`
	for _, bc := range []struct {
		name, meta string
		telemetry  bool
		text       int // bytes of text in the answer; 0: the arguments
	}{
		{"plain", ``, false, 0},
		{"progress", `"_meta":{"progressToken":%d},`, false, 0},
		{"traced", traced, false, 0},
		{"plain-telemetry", ``, true, 0},
		{"traced-telemetry", traced, true, 0},
		{"v2026-07-28", perRequestMeta, false, 0},
		{"read-4k", ``, false, 4 << 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			echo := adapter.ExecutorFunc(func(_ context.Context, _ sdk.CallInfo, args json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
				if bc.text > 0 {
					return &sdk.Result{Text: strings.Repeat("0123456789abcde\n", bc.text/16)}, nil
				}
				return &sdk.Result{Text: string(args)}, nil
			})
			logger := slog.New(slog.DiscardHandler)
			var obs adapter.Observer
			exp := tracetest.NewInMemoryExporter()
			if bc.telemetry {
				tel, err := telemetry.New(telemetry.Options{Spans: sdktrace.NewSimpleSpanProcessor(exp), Metrics: sdkmetric.NewManualReader()})
				if err != nil {
					b.Fatal(err)
				}
				obs = tel
			}
			spec := sdk.Spec{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: sdk.EffectRead}
			a := adapter.New(spec, "test", toolspec.Hot, echo, adapter.Options{Trusted: true, Logger: logger, Observer: obs})
			srv := New(surface.NewSurfaceFromAdapters([]*adapter.Adapter{a}, surface.Options{Guard: allowAll{}, Logger: logger}), nil)

			_, inW, outR := runOnPipes(b, srv)
			out := bufio.NewReader(outR)
			answer := func() {
				if _, err := out.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
			}
			if bc.meta == perRequestMeta {
				io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{`+strings.TrimSuffix(perRequestMeta, ",")+`}}`+"\n")
				answer()
			} else {
				io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`+"\n")
				answer()
				io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			}
			var line strings.Builder
			i := 0
			call := func() {
				i++
				line.Reset()
				meta := bc.meta
				if strings.Contains(meta, "%d") {
					meta = fmt.Sprintf(meta, i)
				}
				fmt.Fprintf(&line, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",%s"arguments":{"path":"src/main.go"}}}`+"\n", i, meta)
				io.WriteString(inW, line.String())
				answer()
				if i%1000 == 0 {
					exp.Reset()
				}
			}
			for range 50 {
				call()
			}
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

// BenchmarkDecodeLaneParams: the lane's reading of a tools/call's params,
// and of the trace context in its _meta, for the params of
// BenchmarkLaneCall.
func BenchmarkDecodeLaneParams(b *testing.B) {
	for _, bc := range []struct{ name, params string }{
		{"plain", `{"name":"echo","arguments":{"path":"src/main.go"}}`},
		{"progress", `{"name":"echo","_meta":{"progressToken":41},"arguments":{"path":"src/main.go"}}`},
		{"traced", `{"name":"echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"},"arguments":{"path":"src/main.go"}}`},
		{"v2026-07-28", `{"name":"echo","_meta":` + perRequest(multiRoundTripVersion, "") + `,"arguments":{"path":"src/main.go"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			raw := json.RawMessage(bc.params)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if p, ok := decodeLaneParams(raw); ok {
					_ = withClientTrace(ctx, p.Meta)
				}
			}
		})
	}
}
