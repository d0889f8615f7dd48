package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP receiver: what yagent serve exports lands here.
type collector struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				c.spans = append(c.spans, ss.GetSpans()...)
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	case "/v1/metrics":
		var req colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					c.metrics[m.GetName()] = true
				}
			}
		}
		out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	default:
		http.NotFound(w, r)
	}
}

func (c *collector) span(name string) *tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}

func (c *collector) metric(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metrics[name]
}

// TestTelemetry_OTLPFromServe: yagent serve under the standard OTEL_*
// variables exports, over OTLP/HTTP, a span per call with the real
// plugin's span as its child, and the call metrics.
func TestTelemetry_OTLPFromServe(t *testing.T) {
	col := &collector{metrics: map[string]bool{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := newEnv(t)
	c := e.serve([]string{
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL,
		"OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_METRIC_EXPORT_INTERVAL=50",
	})
	if r := c.call(t, "think", map[string]any{"thought": "trace me"}); r.IsError {
		t.Fatalf("think failed: %s", text(r))
	}
	eventually(t, "the host's and the plugin's spans at the collector", func() bool {
		return col.span("tool think") != nil && col.span("plugin think") != nil
	})
	host, plug := col.span("tool think"), col.span("plugin think")
	if !bytes.Equal(plug.GetTraceId(), host.GetTraceId()) || !bytes.Equal(plug.GetParentSpanId(), host.GetSpanId()) {
		t.Errorf("plugin span trace %x parent %x; want the host span's trace %x and id %x",
			plug.GetTraceId(), plug.GetParentSpanId(), host.GetTraceId(), host.GetSpanId())
	}
	attrs := map[string]string{}
	for _, kv := range host.GetAttributes() {
		attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	for key, want := range map[string]string{"yagent.tool": "think", "yagent.family": "cognitive", "yagent.code": "ok", "yagent.decision": "allow"} {
		if attrs[key] != want {
			t.Errorf("host span %s = %q, want %q (attributes %v)", key, attrs[key], want, attrs)
		}
	}
	if _, ok := attrs["yagent.arguments"]; ok {
		t.Error("the host span carries the arguments without YAGENT_TELEMETRY_ARGUMENTS")
	}
	eventually(t, "the call metrics at the collector", func() bool {
		return col.metric("yagent.calls") && col.metric("yagent.call.duration")
	})
}

// TestTelemetry_FlushedAtExit: with export intervals far longer than the
// test, what a call recorded still reaches the collector, because yagent
// serve flushes the exporters as it exits.
func TestTelemetry_FlushedAtExit(t *testing.T) {
	col := &collector{metrics: map[string]bool{}}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := newEnv(t)
	c := e.serve([]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL,
		"OTEL_BSP_SCHEDULE_DELAY=600000", "OTEL_METRIC_EXPORT_INTERVAL=600000",
	})
	if r := c.call(t, "think", map[string]any{"thought": "flush me"}); r.IsError {
		t.Fatalf("think failed: %s", text(r))
	}
	if col.span("tool think") != nil {
		t.Fatal("the span was exported before exit; the test cannot tell a flush at exit")
	}
	if err := c.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if err := c.cmd.Wait(); err != nil && c.cmd.ProcessState == nil {
		t.Fatalf("wait for yagent serve: %v", err)
	}
	if col.span("tool think") == nil || col.span("plugin think") == nil {
		t.Errorf("after exit the collector holds no host or plugin span of the call\nstderr:\n%s", c.stderr.String())
	}
	if !col.metric("yagent.calls") {
		t.Errorf("after exit the collector holds no yagent.calls\nstderr:\n%s", c.stderr.String())
	}
}
