package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/sdk"
)

// listingServer is a Server over one tool of each Effect given, named
// after it, with no input schema for "none".
func listingServer(effects ...sdk.Effect) *Server {
	noop := adapter.ExecutorFunc(func(context.Context, sdk.CallInfo, json.RawMessage, func(sdk.Progress)) (*sdk.Result, error) {
		return &sdk.Result{}, nil
	})
	logger := slog.New(slog.DiscardHandler)
	var adapters []*adapter.Adapter
	for _, e := range effects {
		spec := sdk.Spec{Name: "t_" + string(e), Description: "does " + string(e), Effect: e}
		if e != sdk.EffectNone {
			spec.InputSchema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}`)
		}
		adapters = append(adapters, adapter.New(spec, "test", toolspec.Hot, noop, adapter.Options{Trusted: true, Logger: logger}))
	}
	return New(surface.NewSurfaceFromAdapters(adapters, surface.Options{Guard: allowAll{}, Logger: logger}), nil)
}

// TestListing_HintsOnlyWhenTrue: the tools/list result gives a tool that
// changes nothing readOnlyHint true and no other hint, and a tool that
// changes something no annotations at all (MCP's defaults: not read-only,
// may be destructive, not idempotent), never a hint that is false; a
// client decodes it as it decodes the SDK's own Tool of the same meaning
// (with the listed schema, no additionalProperties false), and the SDK
// still stamps the result (its type, the server's info).
func TestListing_HintsOnlyWhenTrue(t *testing.T) {
	t.Parallel()
	effects := []sdk.Effect{sdk.EffectNone, sdk.EffectFlow, sdk.EffectRead, sdk.EffectWrite, sdk.EffectExec, sdk.EffectNetwork, sdk.EffectBrowser}
	srv := listingServer(effects...)
	raw := listRaw(t, srv)
	var resp struct {
		Result struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
			CacheScope *string                    `json:"cacheScope"`
			Tools      []json.RawMessage          `json:"tools"`
		}
	}
	if err := json.Unmarshal(raw, &resp.Result); err != nil {
		t.Fatalf("tools/list result %s: %v", raw, err)
	}
	line := string(raw)
	if resp.Result.ResultType != "complete" || resp.Result.Meta[mcp.MetaKeyServerInfo] == nil {
		t.Errorf("the SDK no longer stamps the result: %s", line)
	}
	// Required on the wire where the protocol has it; "" is no scope.
	if cs := resp.Result.CacheScope; cs == nil || *cs != "private" {
		t.Errorf("cacheScope is not private (a session's own listing): %s", line)
	}
	if len(resp.Result.Tools) != len(effects) {
		t.Fatalf("%d tools listed, want %d: %s", len(resp.Result.Tools), len(effects), line)
	}
	for _, raw := range resp.Result.Tools {
		var got mcp.Tool
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("tool %s: %v", raw, err)
		}
		e := sdk.Effect(strings.TrimPrefix(got.Name, "t_"))
		readOnly := e == sdk.EffectNone || e == sdk.EffectFlow || e == sdk.EffectRead
		switch {
		case strings.Contains(string(raw), "Hint\":false") || strings.Contains(string(raw), "idempotentHint"):
			t.Errorf("%s lists a false hint: %s", got.Name, raw)
		case readOnly && !strings.Contains(string(raw), `"annotations":{"readOnlyHint":true}`):
			t.Errorf("%s changes nothing but is not listed with readOnlyHint true alone: %s", got.Name, raw)
		case strings.Contains(string(raw), "additionalProperties"):
			t.Errorf("%s lists additionalProperties false: %s", got.Name, raw)
		case !readOnly && strings.Contains(string(raw), `"annotations"`):
			t.Errorf("%s changes something but is listed with annotations: %s", got.Name, raw)
		}
		d, _ := srv.surf.Lookup(got.Name)
		sdkTool := toMCPTool(surface.ToolDef{Name: d.Name(), Description: d.Spec().Description, InputSchema: d.Spec().InputSchema, Effect: d.Spec().Effect})
		sdkTool.InputSchema = listedSchema(schemaOf(surface.ToolDef{InputSchema: d.Spec().InputSchema}))
		sdkForm, err := json.Marshal(sdkTool)
		if err != nil {
			t.Fatal(err)
		}
		var want mcp.Tool
		if err := json.Unmarshal(sdkForm, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s decodes as %+v, the SDK's Tool as %+v\nlisted: %s\nSDK:    %s", got.Name, got, want, raw, sdkForm)
		}
	}
}

// listRaw lists srv's tools from an SDK client of the latest protocol over
// an in-memory transport, and returns the result as the client read it.
func listRaw(t *testing.T, srv *Server) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	rec := &rawTransport{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); cancel(); <-done }()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.last
}

// rawTransport keeps the result of the last response its client read.
type rawTransport struct {
	mcp.Transport
	mu   sync.Mutex
	last json.RawMessage
}

func (r *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rawConn{c, r}, nil
}

type rawConn struct {
	mcp.Connection
	r *rawTransport
}

func (c rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.r.mu.Lock()
		c.r.last = append(json.RawMessage(nil), resp.Result...)
		c.r.mu.Unlock()
	}
	return msg, err
}

// TestListedSchema: a listed schema leaves out "additionalProperties":
// false wherever a schema stands (the root, properties, items, lists of
// schemas) and writes a nullable type as its other type, and keeps all
// else: a property of that name, additionalProperties true or a schema,
// data (enum, default, const), other types; a schema it cannot read goes
// out as it came.
func TestListedSchema(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{`{"type":"object","properties":{"edits":{"type":["null","array"],"items":{"type":"object","properties":{"x":{"type":"boolean"}},"additionalProperties":false}}},"additionalProperties":false}`,
			`{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"x":{"type":"boolean"}}}}}}`},
		{`{"type": "object", "properties": {"additionalProperties": false, "b": {"anyOf": [{"type": "object", "additionalProperties": false}, {"type": ["string", "null"]}]}}}`,
			`{"type":"object","properties":{"additionalProperties":false,"b":{"anyOf":[{"type":"object"},{"type":"string"}]}}}`},
		{`{"type":"object","additionalProperties":true,"properties":{"m":{"type":"object","additionalProperties":{"type":"object","additionalProperties":false}}}}`,
			`{"type":"object","additionalProperties":true,"properties":{"m":{"type":"object","additionalProperties":{"type":"object"}}}}`},
		{`{"type":"object","properties":{"k":{"enum":[{"additionalProperties":false}],"default":{"type":["null","x"]}},"t":{"type":["string","object"]},"n":{"type":["null"]}}}`,
			`{"type":"object","properties":{"k":{"enum":[{"additionalProperties":false}],"default":{"type":["null","x"]}},"t":{"type":["string","object"]},"n":{"type":["null"]}}}`},
		{`{"type":"object","properties":{"s":{"type":"string","description":"a <b> & c"}}}`,
			`{"type":"object","properties":{"s":{"type":"string","description":"a <b> & c"}}}`},
		{`true`, `true`},
		{`{"type":"object",`, `{"type":"object",`},
	} {
		if got := string(listedSchema(json.RawMessage(c.in))); got != c.want {
			t.Errorf("listedSchema(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
