package mcpserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
)

// A client that traces its own work sends the W3C trace context of the
// span a request belongs to in the request's _meta (SEP-414): traceparent
// and tracestate, as in HTTP headers. The host's span of a call becomes
// that span's child, so the call, and the plugin's spans below it, join the
// client's trace. Over Streamable HTTP the traceparent and tracestate
// headers of the POST that carried the call count too, as an HTTP client's
// instrumentation sends them; a trace context in _meta, the call's own,
// comes before them. A value that is missing, not a string, too long or
// malformed is ignored: the call's span is a new root, as without one.

const (
	traceparentKey = "traceparent"
	tracestateKey  = "tracestate"
	// traceparentLen is the length of a version 00 traceparent:
	// 00-<32 hex>-<16 hex>-<2 hex>. A later version may append fields
	// after a '-'; only these first characters are read of it.
	traceparentLen = 55
	// maxTracestate is the most of a tracestate W3C has a vendor keep;
	// a longer one is dropped (the traceparent still counts).
	maxTracestate = 512
)

// traceProp reads the client's trace context.
var traceProp propagation.TraceContext

// withClientTrace returns ctx carrying the client's span context from meta,
// the _meta of a tools/call, as the remote parent of the spans started
// with it; ctx itself when meta holds none that is valid.
func withClientTrace(ctx context.Context, meta mcp.Meta) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	tp, ok := meta[traceparentKey].(string)
	if !ok {
		return ctx
	}
	ts, _ := meta[tracestateKey].(string)
	return withTraceContext(ctx, tp, ts)
}

// withHeaderTrace returns ctx carrying the span context of the
// traceparent and tracestate headers h holds; ctx itself when h has no
// single valid traceparent (W3C: several are none). A tracestate sent in
// several headers is one list.
func withHeaderTrace(ctx context.Context, h http.Header) context.Context {
	tp := h.Values(traceparentKey)
	if len(tp) != 1 {
		return ctx
	}
	ts := h.Values(tracestateKey)
	n := 0
	for _, s := range ts {
		n += len(s) + 1
	}
	if n > maxTracestate+1 {
		ts = nil // too long: dropped, the traceparent still counts
	}
	return withTraceContext(ctx, tp[0], strings.Join(ts, ","))
}

// withTraceContext returns ctx carrying the span context of the
// traceparent tp and tracestate ts, as remote parent; ctx itself when tp
// is not valid. A tracestate too long or malformed is dropped.
func withTraceContext(ctx context.Context, tp, ts string) context.Context {
	switch {
	case len(tp) == traceparentLen:
	case len(tp) > traceparentLen && tp[:2] != "00" && tp[traceparentLen] == '-':
		tp = tp[:traceparentLen]
	default:
		return ctx
	}
	c := &metaCarrier{traceparent: tp}
	if len(ts) <= maxTracestate {
		c.tracestate = ts
	}
	return traceProp.Extract(ctx, c)
}

// metaCarrier holds the two strings of a trace context read from _meta,
// for the propagator.
type metaCarrier struct{ traceparent, tracestate string }

func (c *metaCarrier) Get(key string) string {
	switch key {
	case traceparentKey:
		return c.traceparent
	case tracestateKey:
		return c.tracestate
	}
	return ""
}

func (c *metaCarrier) Set(string, string) {}

func (c *metaCarrier) Keys() []string { return []string{traceparentKey, tracestateKey} }
