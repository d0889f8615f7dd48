package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The call lane answers the tools/call requests of a stdio session without
// the SDK's request path, which for each one decodes its params twice with
// a fresh 32 KiB decoder buffer (the extraction of _meta, then the params),
// marshals the result once more into a response, and passes the request
// through three goroutines. Those buffers were two thirds of the host's
// allocations and most of its page faults per call; the host collected
// its heap every 30 calls.
//
// The lane takes a request only where the SDK would do nothing but run the
// tool: the session is initialized with a protocol before 2026-07-28 (whose
// sessionless requests and input-required results stay with the SDK), and
// the params hold a tool name, arguments, and in _meta at most a progress
// token and a W3C trace context (traceparent, tracestate; trace.go). It runs the call through the same handler the SDK calls, asks the
// client the questions a call stops on as the SDK's multi-round-trip
// middleware does for such clients (an elicitation, then the call once
// more), and writes the answer the SDK would. Anything else goes on to the
// SDK as before.

// laneFunc decides, on the read loop, whether the lane takes req; when it
// does, run answers it.
type laneFunc func(req *jsonrpc.Request) (run func(context.Context) *jsonrpc.Response, ok bool)

// decodeLaneParams decodes the params of a tools/call the lane can take:
// a name, arguments, and a _meta holding a progress token and a trace
// context at most; false for any other, which the SDK then decodes as it
// always has.
func decodeLaneParams(raw json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	fields, dup := topLevel(raw)
	if dup != "" {
		return nil, false
	}
	for k := range fields {
		if k != "_meta" && k != "name" && k != "arguments" {
			return nil, false
		}
	}
	var p struct {
		Meta      mcp.Meta        `json:"_meta"`
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Name == nil {
		return nil, false
	}
	for k := range p.Meta {
		switch k {
		case "progressToken", traceparentKey, tracestateKey:
		default:
			return nil, false
		}
	}
	return &mcp.CallToolParamsRaw{Meta: p.Meta, Name: *p.Name, Arguments: p.Arguments}, true
}

// laneFor is the call lane of the session ss.
func (s *Server) laneFor(ss *mcp.ServerSession) laneFunc {
	return func(req *jsonrpc.Request) (func(context.Context) *jsonrpc.Response, bool) {
		if req.Method != "tools/call" || !req.ID.IsValid() {
			return nil, false
		}
		init := ss.InitializeParams()
		if init == nil || init.ProtocolVersion == "" || init.ProtocolVersion >= multiRoundTripVersion {
			return nil, false
		}
		params, ok := decodeLaneParams(req.Params)
		if !ok {
			return nil, false
		}
		if _, known := s.surf.Lookup(params.Name); known && !s.registered(params.Name) {
			return nil, false // the SDK's unknown-tool error
		}
		return func(ctx context.Context) *jsonrpc.Response {
			res, err := s.laneCall(ctx, ss, params, true)
			return laneResponse(req.ID, res, err, ss)
		}, true
	}
}

// laneResponse is the answer to the call id given what laneCall returned.
func laneResponse(id jsonrpc.ID, res *mcp.CallToolResult, err error, ss *mcp.ServerSession) *jsonrpc.Response {
	if err != nil {
		return &jsonrpc.Response{ID: id, Error: err}
	}
	b, err := encodeLaneResult(res, ss)
	if err != nil {
		return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}
	}
	return &jsonrpc.Response{ID: id, Result: b}
}

// laneCall runs one call as the SDK's path would for a client before the
// multi-round-trip protocol: the handler; when it stops on a question and
// elicit is set, the question put to the client as an elicitation and the
// handler run once more with the answer. Without elicit, a call that stops
// on a question returns its input-required result as it is.
func (s *Server) laneCall(ctx context.Context, ss *mcp.ServerSession, params *mcp.CallToolParamsRaw, elicit bool) (*mcp.CallToolResult, error) {
	run := func(p *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
		req := &mcp.CallToolRequest{Session: ss, Params: p}
		if s.registered(p.Name) {
			return s.handle(ctx, req)
		}
		return s.callUnknown(ctx, req), nil
	}
	res, err := run(params)
	if err != nil || res == nil || res.InputRequests == nil || !elicit {
		return res, err
	}
	if len(res.InputRequests) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is busy, retry later"}
	}
	answers := make(mcp.InputResponseMap, len(res.InputRequests))
	for id, ir := range res.InputRequests {
		p, ok := ir.(*mcp.ElicitParams)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("multi-round-trip: fulfilling input request %q: unknown input request type: %T", id, ir)}
		}
		a, err := ss.Elicit(ctx, p)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("multi-round-trip: fulfilling input request %q: %v", id, err)}
		}
		answers[id] = a
	}
	again := *params
	again.InputResponses = answers
	again.RequestState = res.RequestState
	return run(&again)
}

// encodeLaneResult encodes res as the SDK's path would: in one pass where
// encodeOnce can render it, else through the SDK's own encoding, with the
// empty content list the SDK gives a result that has none.
func encodeLaneResult(res *mcp.CallToolResult, ss *mcp.ServerSession) (json.RawMessage, error) {
	var v any = res
	if out, ok := asCallResult(res, ss); ok {
		v = out
	} else if res.Content == nil {
		r := *res
		r.Content = []mcp.Content{}
		v = &r
	}
	buf := resultBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= keptResultBytes {
			buf.Reset()
			resultBufs.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// The response copies it (encodeResponse): the buffer goes back.
	return bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// resultBufs keeps the buffers results are encoded in; one grown past
// keptResultBytes (a screenshot, a long file) is left to the collector.
var resultBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const keptResultBytes = 256 << 10

// takeLane hands msg to the call lane when the lane takes it, and says so.
// A notifications/cancelled also cancels the lane's call it names, and goes
// on to the SDK for the calls it runs.
func (c *frontConn) takeLane(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	if !req.ID.IsValid() {
		if req.Method == "notifications/cancelled" {
			c.cancelLane(req.Params)
		}
		return false
	}
	lane := c.lane.Load()
	if lane == nil {
		return false
	}
	run, ok := (*lane)(req)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancel(c.laneCtx)
	c.mu.Lock()
	_, dup := c.laneRuns[req.ID]
	if !dup {
		c.laneRuns[req.ID] = cancel
	}
	c.mu.Unlock()
	if dup {
		cancel()
		c.laneAnswer(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: request ID %v already in use", req.ID.Raw())}})
		return true
	}
	c.laneWG.Add(1)
	c.laneGo(func() {
		defer c.laneWG.Done()
		resp := run(ctx)
		c.mu.Lock()
		delete(c.laneRuns, req.ID)
		c.mu.Unlock()
		cancel()
		c.laneAnswer(resp)
	})
	return true
}

// laneWorkers is how many goroutines the lane keeps for its calls. A call
// runs deep (the adapter, the guard, schema validation, the plugin hop),
// and a goroutine started for each one grew its stack anew through all of
// it: a twelfth of the host's time in a call. Calls beyond them in flight
// get a goroutine of their own.
const laneWorkers = 4

// laneGo runs fn on a kept worker when one is idle, else on a new
// goroutine. The workers end with the connection.
func (c *frontConn) laneGo(fn func()) {
	c.laneStart.Do(func() {
		c.laneWork = make(chan func())
		for range laneWorkers {
			go func() {
				for {
					select {
					case fn := <-c.laneWork:
						fn()
					case <-c.laneCtx.Done():
						return
					}
				}
			}()
		}
	})
	select {
	case c.laneWork <- fn:
	default:
		go fn()
	}
}

// laneAnswer writes a response of the lane, unless the connection closed.
func (c *frontConn) laneAnswer(resp *jsonrpc.Response) {
	select {
	case <-c.closed:
		return
	default:
	}
	if err := c.Write(context.Background(), resp); err != nil {
		c.logger.Warn("answer a call", "error", err)
	}
}

// cancelLane cancels the lane's call a notifications/cancelled names.
func (c *frontConn) cancelLane(params json.RawMessage) {
	id, ok := cancelledID(params)
	if !ok {
		return
	}
	c.mu.Lock()
	cancel := c.laneRuns[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
