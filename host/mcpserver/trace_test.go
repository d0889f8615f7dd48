package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/host/telemetry"
	"github.com/yagent/yagent/sdk"
)

const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
	clientParent  = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// TestWithClientTrace: the span context read from a call's _meta, and the
// values that leave the call without one (a new root).
func TestWithClientTrace(t *testing.T) {
	t.Parallel()
	// Three members of 200 characters: a tracestate OTel would take, but
	// over the 512 characters W3C has a vendor keep.
	long := "a=" + strings.Repeat("x", 198) + ",b=" + strings.Repeat("y", 198) + ",c=" + strings.Repeat("z", 198)
	if _, err := trace.ParseTraceState(long); err != nil || len(long) <= maxTracestate {
		t.Fatalf("the long tracestate (%d characters) is not one OTel takes: %v", len(long), err)
	}
	for _, tc := range []struct {
		name      string
		meta      mcp.Meta
		valid     bool
		sampled   bool
		state     string
		wantTrace string // the trace id, when not clientTraceID
	}{
		{"parent and state", mcp.Meta{"traceparent": clientParent, "tracestate": "k=v,a=b"}, true, true, "k=v,a=b", ""},
		{"parent alone", mcp.Meta{"traceparent": clientParent}, true, true, "", ""},
		{"beside a progress token", mcp.Meta{"progressToken": 3, "traceparent": clientParent}, true, true, "", ""},
		{"not sampled", mcp.Meta{"traceparent": "00-" + clientTraceID + "-" + clientSpanID + "-00"}, true, false, "", ""},
		{"a later version with a field more", mcp.Meta{"traceparent": "01-" + clientTraceID + "-" + clientSpanID + "-01-what-ever"}, true, true, "", ""},
		{"state too long", mcp.Meta{"traceparent": clientParent, "tracestate": long}, true, true, "", ""},
		{"state malformed", mcp.Meta{"traceparent": clientParent, "tracestate": "no equals sign"}, true, true, "", ""},
		{"state not a string", mcp.Meta{"traceparent": clientParent, "tracestate": []any{"k=v"}}, true, true, "", ""},
		{"no meta", nil, false, false, "", ""},
		{"state alone", mcp.Meta{"tracestate": "k=v"}, false, false, "", ""},
		{"parent not a string", mcp.Meta{"traceparent": 42}, false, false, "", ""},
		{"parent an object", mcp.Meta{"traceparent": map[string]any{"traceId": clientTraceID}}, false, false, "", ""},
		{"parent empty", mcp.Meta{"traceparent": ""}, false, false, "", ""},
		{"parent garbage", mcp.Meta{"traceparent": "not a trace parent"}, false, false, "", ""},
		{"upper-case hex", mcp.Meta{"traceparent": strings.ToUpper(clientParent)}, false, false, "", ""},
		{"zero trace id", mcp.Meta{"traceparent": "00-" + strings.Repeat("0", 32) + "-" + clientSpanID + "-01"}, false, false, "", ""},
		{"zero span id", mcp.Meta{"traceparent": "00-" + clientTraceID + "-" + strings.Repeat("0", 16) + "-01"}, false, false, "", ""},
		{"version 00 with a field more", mcp.Meta{"traceparent": clientParent + "-what"}, false, false, "", ""},
		{"version 00, one character more", mcp.Meta{"traceparent": clientParent + "0"}, false, false, "", ""},
		{"version ff", mcp.Meta{"traceparent": "ff" + clientParent[2:]}, false, false, "", ""},
		{"a later version, no '-' after the flags", mcp.Meta{"traceparent": "01" + clientParent[2:] + "x"}, false, false, "", ""},
		{"huge", mcp.Meta{"traceparent": clientParent + strings.Repeat("-0", 1<<20)}, false, false, "", ""},
		{"one character short", mcp.Meta{"traceparent": clientParent[:54]}, false, false, "", ""},
	} {
		sc := trace.SpanContextFromContext(withClientTrace(context.Background(), tc.meta))
		if sc.IsValid() != tc.valid {
			t.Errorf("%s: valid %v, want %v", tc.name, sc.IsValid(), tc.valid)
			continue
		}
		if !tc.valid {
			continue
		}
		if sc.TraceID().String() != clientTraceID || sc.SpanID().String() != clientSpanID || !sc.IsRemote() {
			t.Errorf("%s: span context %s/%s (remote %v), want %s/%s, remote", tc.name, sc.TraceID(), sc.SpanID(), sc.IsRemote(), clientTraceID, clientSpanID)
		}
		if sc.IsSampled() != tc.sampled {
			t.Errorf("%s: sampled %v, want %v", tc.name, sc.IsSampled(), tc.sampled)
		}
		if got := sc.TraceState().String(); got != tc.state {
			t.Errorf("%s: tracestate %q, want %q", tc.name, got, tc.state)
		}
	}
}

// tracedServer is a Server over "echo" whose calls are traced into an
// in-memory exporter. seen returns the span context each call's executor
// ran under (where the plugin's trace headers come from); sdkCalls counts
// the tools/call requests that took the SDK's request path.
func tracedServer(t *testing.T) (_ *Server, exp *tracetest.InMemoryExporter, seen func() []trace.SpanContext, sdkCalls *atomic.Int64) {
	t.Helper()
	var mu sync.Mutex
	var ran []trace.SpanContext
	echo := adapter.ExecutorFunc(func(ctx context.Context, _ sdk.CallInfo, args json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		mu.Lock()
		ran = append(ran, trace.SpanContextFromContext(ctx))
		mu.Unlock()
		return &sdk.Result{Text: "echo " + string(args)}, nil
	})
	exp = tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Options{Spans: sdktrace.NewSimpleSpanProcessor(exp), Metrics: sdkmetric.NewManualReader()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	logger := slog.New(slog.DiscardHandler)
	spec := sdk.Spec{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: sdk.EffectRead}
	a := adapter.New(spec, "test", toolspec.Hot, echo, adapter.Options{Trusted: true, Logger: logger, Observer: tel})
	srv := New(surface.NewSurfaceFromAdapters([]*adapter.Adapter{a}, surface.Options{Guard: allowAll{}, Logger: logger}), nil)
	sdkCalls = new(atomic.Int64)
	srv.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				sdkCalls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return srv, exp, func() []trace.SpanContext {
		mu.Lock()
		defer mu.Unlock()
		return append([]trace.SpanContext(nil), ran...)
	}, sdkCalls
}

// The calls of the trace tests, in this order: one in the client's trace,
// one with no trace context, and one whose traceparent is malformed.
var traceCalls = []struct {
	name string
	meta mcp.Meta
}{
	{"traced", mcp.Meta{"progressToken": "p", "traceparent": clientParent, "tracestate": "k=v"}},
	{"untraced", nil},
	{"malformed", mcp.Meta{"traceparent": "00-" + clientTraceID + "-zz" + clientSpanID[2:] + "-01", "tracestate": "k=v"}},
}

// checkTraceSpans checks the spans of traceCalls, and the span contexts
// their executor ran under: the traced call's span is a child of the
// client's span, in its trace, with its tracestate; the others are roots.
func checkTraceSpans(t *testing.T, path string, spans tracetest.SpanStubs, seen []trace.SpanContext) {
	t.Helper()
	if len(spans) != len(traceCalls) || len(seen) != len(traceCalls) {
		t.Fatalf("%s: %d spans and %d calls run, want %d of each", path, len(spans), len(seen), len(traceCalls))
	}
	for i, c := range traceCalls {
		s := spans[i]
		if s.Name != "tool echo" {
			t.Errorf("%s, %s call: span %q, want \"tool echo\"", path, c.name, s.Name)
		}
		if seen[i].SpanID() != s.SpanContext.SpanID() || seen[i].TraceID() != s.SpanContext.TraceID() {
			t.Errorf("%s, %s call: the tool ran under %s/%s, not the host's span %s/%s", path, c.name,
				seen[i].TraceID(), seen[i].SpanID(), s.SpanContext.TraceID(), s.SpanContext.SpanID())
		}
		if c.name != "traced" {
			if s.Parent.IsValid() {
				t.Errorf("%s, %s call: span has parent %s/%s, want a root", path, c.name, s.Parent.TraceID(), s.Parent.SpanID())
			}
			if s.SpanContext.TraceID().String() == clientTraceID {
				t.Errorf("%s, %s call: span in the client's trace", path, c.name)
			}
			continue
		}
		if got := s.SpanContext.TraceID().String(); got != clientTraceID {
			t.Errorf("%s, traced call: trace id %s, want the client's %s", path, got, clientTraceID)
		}
		if got := s.Parent.SpanID().String(); got != clientSpanID || !s.Parent.IsRemote() {
			t.Errorf("%s, traced call: parent span %s (remote %v), want the client's %s", path, got, s.Parent.IsRemote(), clientSpanID)
		}
		if got := s.SpanContext.TraceState().String(); got != "k=v" {
			t.Errorf("%s, traced call: tracestate %q, want \"k=v\"", path, got)
		}
	}
}

// TestClientTrace_Stdio: over stdio, through the call lane and through the
// SDK's request path, a call's span joins the trace its _meta names; the
// lane takes such calls itself.
func TestClientTrace_Stdio(t *testing.T) {
	t.Parallel()
	var calls []string
	for i, c := range traceCalls {
		p := map[string]any{"name": "echo", "arguments": map[string]any{"i": i}}
		if c.meta != nil {
			p["_meta"] = c.meta
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, call(fmt.Sprint(i+1), string(b)))
	}
	for _, tc := range []struct {
		path         string
		lane         bool
		wantSDKCalls int64
	}{
		{"the lane", true, 0},
		{"the SDK's path", false, int64(len(calls))},
	} {
		srv, exp, seen, sdkCalls := tracedServer(t)
		out := converse(t, srv, tc.lane, "2025-11-25", false, calls)
		if n := sdkCalls.Load(); n != tc.wantSDKCalls {
			t.Errorf("%s: %d calls took the SDK's path, want %d", tc.path, n, tc.wantSDKCalls)
		}
		for _, line := range out {
			if !strings.Contains(line, `"result":{`) || strings.Contains(line, `"isError":true`) {
				t.Errorf("%s: answer %s, want a result", tc.path, line)
			}
		}
		checkTraceSpans(t, tc.path, exp.GetSpans(), seen())
	}
}

// TestClientTrace_HTTP: over Streamable HTTP, a call's span joins the
// trace its _meta names.
func TestClientTrace_HTTP(t *testing.T) {
	t.Parallel()
	srv, exp, seen, _ := tracedServer(t)
	_, url := attachFront(t, srv, HTTPOptions{})
	cs := connectHTTP(t, url)
	defer cs.Close()
	for i, c := range traceCalls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: c.meta, Name: "echo", Arguments: map[string]any{"i": i}})
		if err != nil || res.IsError {
			t.Fatalf("%s call: %v %v", c.name, err, res)
		}
	}
	checkTraceSpans(t, "HTTP", exp.GetSpans(), seen())
}

// TestClientTrace_HTTPHeaders: over Streamable HTTP, the traceparent and
// tracestate headers of the POST that carries a call are the parent of its
// span, on the lane and on the SDK's path (a call with a _meta key the
// lane leaves to it); a trace context in the call's _meta comes before
// them.
func TestClientTrace_HTTPHeaders(t *testing.T) {
	t.Parallel()
	const headerSpanID = "b7ad6b7169203331"
	srv, exp, seen, sdkCalls := tracedServer(t)
	_, url := attachFront(t, srv, HTTPOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url,
		HTTPClient: &http.Client{Transport: traceHeaders{bearer{testToken}, http.Header{
			"Traceparent": {"00-" + clientTraceID + "-" + headerSpanID + "-01"},
			"Tracestate":  {"h=1", "i=2"},
		}}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The session's host state, which the lane needs, is made on the
	// SDK's path.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name       string
		meta       mcp.Meta
		wantParent string
		wantState  string
	}{
		{"the lane", nil, headerSpanID, "h=1,i=2"},
		{"the SDK's path", mcp.Meta{"other": "p"}, headerSpanID, "h=1,i=2"},
		{"_meta first", mcp.Meta{"traceparent": clientParent, "tracestate": "k=v"}, clientSpanID, "k=v"},
	}
	for i, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: c.meta, Name: "echo", Arguments: map[string]any{"i": i}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.name, err, res)
		}
	}
	if n := sdkCalls.Load(); n != 1 {
		t.Errorf("%d calls took the SDK's path, want 1 (the one with a _meta key the lane does not take)", n)
	}
	spans := exp.GetSpans()
	if len(spans) != len(calls) || len(seen()) != len(calls) {
		t.Fatalf("%d spans, %d calls run, want %d of each", len(spans), len(seen()), len(calls))
	}
	for i, c := range calls {
		s := spans[i]
		if got := s.SpanContext.TraceID().String(); got != clientTraceID {
			t.Errorf("%s: trace id %s, want the client's %s", c.name, got, clientTraceID)
		}
		if got := s.Parent.SpanID().String(); got != c.wantParent || !s.Parent.IsRemote() {
			t.Errorf("%s: parent span %s (remote %v), want %s", c.name, got, s.Parent.IsRemote(), c.wantParent)
		}
		if got := s.SpanContext.TraceState().String(); got != c.wantState {
			t.Errorf("%s: tracestate %q, want %q", c.name, got, c.wantState)
		}
	}
}

// traceHeaders adds its headers to every request, as an HTTP client's
// trace instrumentation does.
type traceHeaders struct {
	next http.RoundTripper
	h    http.Header
}

func (t traceHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// TestWithHeaderTrace: the span context read from a request's headers, and
// the headers that give none.
func TestWithHeaderTrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		h     http.Header
		valid bool
		state string
	}{
		{"parent and state", http.Header{"Traceparent": {clientParent}, "Tracestate": {"k=v"}}, true, "k=v"},
		{"state in two headers", http.Header{"Traceparent": {clientParent}, "Tracestate": {"k=v", "a=b"}}, true, "k=v,a=b"},
		{"state too long", http.Header{"Traceparent": {clientParent}, "Tracestate": {"a=" + strings.Repeat("x", 300), "b=" + strings.Repeat("y", 300)}}, true, ""},
		{"no headers", http.Header{}, false, ""},
		{"two parents", http.Header{"Traceparent": {clientParent, clientParent}}, false, ""},
		{"parent garbage", http.Header{"Traceparent": {"junk"}, "Tracestate": {"k=v"}}, false, ""},
	} {
		sc := trace.SpanContextFromContext(withHeaderTrace(context.Background(), tc.h))
		if sc.IsValid() != tc.valid {
			t.Errorf("%s: valid %v, want %v", tc.name, sc.IsValid(), tc.valid)
			continue
		}
		if tc.valid && (sc.SpanID().String() != clientSpanID || sc.TraceState().String() != tc.state) {
			t.Errorf("%s: span %s, tracestate %q; want %s, %q", tc.name, sc.SpanID(), sc.TraceState().String(), clientSpanID, tc.state)
		}
	}
}

// TestClientTrace_UnsampledNotRecorded: a call in a client's trace the
// client does not sample (flags 00) is not recorded, with the default
// parent-based sampler, and still answered.
func TestClientTrace_UnsampledNotRecorded(t *testing.T) {
	t.Parallel()
	srv, exp, seen, _ := tracedServer(t)
	unsampled := call(`1`, `{"name":"echo","_meta":{"traceparent":"00-`+clientTraceID+`-`+clientSpanID+`-00"},"arguments":{}}`)
	out := converse(t, srv, true, "2025-11-25", false, []string{unsampled})
	if len(out) != 1 || !strings.Contains(out[0], `"result":{`) || strings.Contains(out[0], `"isError":true`) {
		t.Errorf("answers %q, want one result", out)
	}
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Errorf("%d spans recorded of an unsampled call, want none", len(spans))
	}
	if ran := seen(); len(ran) != 1 || ran[0].TraceID().String() != clientTraceID || ran[0].IsSampled() {
		t.Errorf("the tool ran under %v, want an unsampled span of the client's trace", ran)
	}
}
