package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
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
// tool: the session is initialized, and the params hold a tool name,
// arguments, and in _meta at most a progress token and a W3C trace context
// (traceparent, tracestate; trace.go), beside, on a session of protocol
// 2026-07-28 or later, the per-request keys of that protocol (SEP-2575).
//
//   - A session of an older protocol: no per-request keys. The lane asks the
//     client the questions a call stops on as the SDK's multi-round-trip
//     middleware does for such clients (an elicitation, then the call once
//     more).
//   - A session of 2026-07-28, begun with server/discover or its first
//     request (both the SDK's): the request names in _meta a protocol
//     version the server supports, and client capabilities and identity
//     that decode as the SDK decodes them, or the SDK answers its error;
//     the log level may be there too. The answer carries its resultType and
//     the server's identity in _meta; a call that stops on a question
//     answers with it (input_required, the request state beside it), and
//     its retry with the user's answer goes to the SDK.
//
// It runs the call through the same handler the SDK calls and writes the
// answer the SDK would, byte for byte. Anything else goes on to the SDK as
// before.

// laneFunc decides, on the read loop, whether the lane takes req; when it
// does, run answers it.
type laneFunc func(req *jsonrpc.Request) (run func(context.Context) laneReply, ok bool)

// laneParams is what the lane reads of a tools/call's params: the params
// the handler gets, whose _meta holds the progress token and the trace
// context (the keys the host reads), and the per-request fields of protocol
// 2026-07-28 (SEP-2575) as they came.
type laneParams struct {
	*mcp.CallToolParamsRaw
	// version is _meta's io.modelcontextprotocol/protocolVersion, a
	// string; clientInfo and clientCaps are its clientInfo and
	// clientCapabilities, nil when absent.
	version                string
	clientInfo, clientCaps json.RawMessage
	// perRequest says whether _meta holds any of the per-request keys
	// (those three and io.modelcontextprotocol/logLevel).
	perRequest bool
}

// decodeLaneParams decodes the params of a tools/call the lane can take:
// a name, arguments, and a _meta holding a progress token, a trace context
// and the per-request keys of protocol 2026-07-28 at most; false for any
// other, which the SDK then decodes as it always has. raw is valid JSON
// (the front judged the line), read by hand: nothing below the _meta
// values the host reads is decoded.
func decodeLaneParams(raw json.RawMessage) (*laneParams, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	fields, dup := topLevel(raw)
	if dup != "" {
		return nil, false
	}
	lp := &laneParams{CallToolParamsRaw: &mcp.CallToolParamsRaw{}}
	for k, v := range fields {
		switch k {
		case "name":
			name, err := jsonString(v)
			if err != nil || v[0] != '"' { // null decodes as ""
				return nil, false
			}
			lp.Name = name
		case "arguments":
			lp.Arguments = v
		case "_meta":
			if !lp.decodeMeta(v) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if _, ok := fields["name"]; !ok {
		return nil, false
	}
	return lp, true
}

// decodeMeta reads raw, the _meta of the params, into lp.
func (lp *laneParams) decodeMeta(raw json.RawMessage) bool {
	switch raw[0] {
	case 'n': // null
		return true
	case '{':
	default:
		return false
	}
	fields, dup := topLevel(raw)
	if dup != "" {
		return false
	}
	for k, v := range fields {
		switch k {
		case "progressToken", traceparentKey, tracestateKey:
			x, ok := metaValue(v)
			if !ok {
				return false
			}
			if lp.Meta == nil {
				lp.Meta = make(mcp.Meta, 3)
			}
			lp.Meta[k] = x
		case mcp.MetaKeyProtocolVersion:
			// Not a string, the SDK takes the request for one of an older
			// protocol; the lane leaves it.
			s, err := jsonString(v)
			if err != nil || v[0] != '"' {
				return false
			}
			lp.version, lp.perRequest = s, true
		case mcp.MetaKeyClientInfo:
			lp.clientInfo, lp.perRequest = v, true
		case mcp.MetaKeyClientCapabilities:
			lp.clientCaps, lp.perRequest = v, true
		case mcp.MetaKeyLogLevel:
			// The SDK puts it in the call's context, where only
			// ServerSession.Log would read it; the host logs to its
			// clients with a context of its own (events.sendLog).
			lp.perRequest = true
		default:
			return false
		}
	}
	return true
}

// metaValue decodes v, one valid JSON value, as encoding/json decodes it
// into an any: a string or a number (a float64) without reflection.
func metaValue(v json.RawMessage) (any, bool) {
	switch c := v[0]; {
	case c == '"':
		s, err := jsonString(v)
		return s, err == nil
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil
	}
	var x any
	return x, json.Unmarshal(v, &x) == nil
}

// laneFor is the call lane of the session ss. It is called on the read
// loop of the session's connection alone.
func (s *Server) laneFor(ss *mcp.ServerSession) laneFunc {
	var known clientMeta
	return func(req *jsonrpc.Request) (func(context.Context) laneReply, bool) {
		if req.Method != "tools/call" || !req.ID.IsValid() {
			return nil, false
		}
		init := ss.InitializeParams()
		if init == nil || init.ProtocolVersion == "" {
			return nil, false
		}
		params, ok := decodeLaneParams(req.Params)
		if !ok {
			return nil, false
		}
		// A session of 2026-07-28 or later (begun with server/discover, or
		// by its first request) takes only requests that carry its
		// per-request _meta; an older one only requests without it.
		multiRoundTrip := init.ProtocolVersion >= multiRoundTripVersion
		if multiRoundTrip {
			if params.version < multiRoundTripVersion || !slices.Contains(s.versions, params.version) ||
				!known.valid(params.clientCaps, params.clientInfo) {
				return nil, false // the SDK's answer, an error for most
			}
		} else if params.perRequest {
			return nil, false
		}
		if _, known := s.surf.Lookup(params.Name); known && !s.registered(params.Name) {
			return nil, false // the SDK's unknown-tool error
		}
		if !multiRoundTrip {
			return func(ctx context.Context) laneReply {
				res, err := s.laneCall(ctx, ss, params.CallToolParamsRaw, ss.Elicit)
				return laneResponse(req.ID, res, err, ss)
			}, true
		}
		// The client asks its user itself: a call that stops on a
		// question answers with the question (input_required).
		return func(ctx context.Context) laneReply {
			res, err := s.laneCall(ctx, ss, params.CallToolParamsRaw, nil)
			if err != nil {
				return laneReply{resp: &jsonrpc.Response{ID: req.ID, Error: err}}
			}
			return s.perRequestReply(req.ID, res, ss)
		}, true
	}
}

// clientMeta remembers the last clientCapabilities and clientInfo of a
// session's requests found to decode as the SDK decodes them: a client
// sends the same ones with every request, so each is decoded once.
type clientMeta struct {
	caps, info []byte
}

// valid says whether caps and info (nil when absent) decode as the SDK's
// check of a request's _meta decodes them (the capabilities are required,
// the client's identity optional); the SDK answers an error where not.
func (m *clientMeta) valid(caps, info json.RawMessage) bool {
	if caps == nil {
		return false
	}
	if m.caps != nil && bytes.Equal(caps, m.caps) && bytes.Equal(info, m.info) && (info == nil) == (m.info == nil) {
		return true
	}
	meta := mcp.Meta{}
	var v any
	if json.Unmarshal(caps, &v) != nil {
		return false
	}
	meta[mcp.MetaKeyClientCapabilities] = v
	if info != nil {
		var v any
		if json.Unmarshal(info, &v) != nil {
			return false
		}
		meta[mcp.MetaKeyClientInfo] = v
	}
	// A request without a session reads these from its _meta alone, as
	// the SDK does: nil where they do not decode.
	r := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta}}
	if r.ClientCapabilities() == nil || (info != nil && r.ClientInfo() == nil) {
		return false
	}
	m.caps, m.info = bytes.Clone(caps), bytes.Clone(info)
	return true
}

// laneReply is the lane's answer to one call: resp, and, where the lane
// encoded the result itself, the whole response already encoded in a kept
// buffer (msg: the message and a line end), written from there. The
// result is copied neither out of the encoder's buffer nor into a message
// of its own: for a 4 KB read_file, two fewer allocations of its size a
// call, 10.6 of the 24 KB the stdio host allocated a read (32 KB over
// HTTP). resp's Result is left empty
// where msg holds it. release gives msg back once it is written: nothing
// may hold its bytes after.
type laneReply struct {
	resp *jsonrpc.Response
	msg  *[]byte
}

// line is the message with the stdio front's line end.
func (r laneReply) line() []byte { return *r.msg }

// body is the message alone, an HTTP response's body.
func (r laneReply) body() []byte { return (*r.msg)[:len(*r.msg)-1] }

// release gives the reply's buffer back to resultBufs.
func (r laneReply) release() {
	if r.msg != nil {
		putResultBuf(r.msg)
	}
}

// laneResponse is the answer to the call id given what laneCall returned.
func laneResponse(id jsonrpc.ID, res *mcp.CallToolResult, err error, ss *mcp.ServerSession) laneReply {
	if err != nil {
		return laneReply{resp: &jsonrpc.Response{ID: id, Error: err}}
	}
	return encodeReply(id, laneResult(res, ss))
}

// encodeReply encodes the response to the call id whose result is v, as
// the SDK's JSON-RPC layer encodes v and the stdio front's encodeResponse
// puts the response around it, in a buffer of resultBufs.
func encodeReply(id jsonrpc.ID, v any) laneReply {
	failed := func(err error) laneReply {
		return laneReply{resp: &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}}
	}
	bp := resultBufs.Get().(*[]byte)
	b, ok := appendResponseHead((*bp)[:0], id)
	if !ok {
		putResultBuf(bp)
		raw, err := encodeLaneValue(v)
		if err != nil {
			return failed(err)
		}
		return laneReply{resp: &jsonrpc.Response{ID: id, Result: raw}}
	}
	b, err := appendResult(b, v)
	*bp = b // grown, kept so
	if err != nil {
		putResultBuf(bp)
		return failed(err)
	}
	*bp = append(b, '}', '\n')
	return laneReply{resp: &jsonrpc.Response{ID: id}, msg: bp}
}

// elicitFunc puts one question to the client and returns its answer:
// ServerSession.Elicit on stdio, the HTTP lane's own on its stream.
type elicitFunc func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)

// laneCall runs one call as the SDK's path would: the handler; when it
// stops on a question and elicit is set (a client before the
// multi-round-trip protocol), the question put to the client through
// elicit and the handler run once more with the answer. Without elicit, a
// call that stops on a question returns its input-required result as it
// is.
func (s *Server) laneCall(ctx context.Context, ss *mcp.ServerSession, params *mcp.CallToolParamsRaw, elicit elicitFunc) (*mcp.CallToolResult, error) {
	run := func(p *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
		req := &mcp.CallToolRequest{Session: ss, Params: p}
		if s.registered(p.Name) {
			return s.handle(ctx, req)
		}
		return s.callUnknown(ctx, req), nil
	}
	res, err := run(params)
	if err != nil || res == nil || res.InputRequests == nil || elicit == nil {
		return res, err
	}
	// The errors are the SDK's own words, in the SDK's wrapping: the
	// response keeps the code of a JSON-RPC error within (the client's
	// answer), else none.
	if len(res.InputRequests) == 0 {
		return nil, errors.New("the server is busy, retry later")
	}
	answers := make(mcp.InputResponseMap, len(res.InputRequests))
	for id, ir := range res.InputRequests {
		p, ok := ir.(*mcp.ElicitParams)
		if !ok {
			return nil, fmt.Errorf("multi-round-trip: fulfilling input request %q: unknown input request type: %T", id, ir)
		}
		a, err := elicit(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("multi-round-trip: fulfilling input request %q: %w", id, err)
		}
		answers[id] = a
	}
	again := *params
	again.InputResponses = answers
	again.RequestState = res.RequestState
	return run(&again)
}

// laneResult is what encodes as the SDK's path encodes res: the
// callResult encodeOnce renders in one pass, else res itself, through the
// SDK's own encoding, with the empty content list the SDK gives a result
// that has none.
func laneResult(res *mcp.CallToolResult, ss *mcp.ServerSession) any {
	if out, ok := asCallResult(res, ss); ok {
		return out
	}
	if res.Content == nil {
		r := *res
		r.Content = []mcp.Content{}
		return &r
	}
	return res
}

// perRequestReply answers the call id with res as the SDK's path does for
// a request carrying the per-request _meta of protocol 2026-07-28: with a
// resultType, "complete", or "input_required" beside the question and the
// request state of a call that stopped on one, and the server's identity
// in _meta (io.modelcontextprotocol/serverInfo) unless the result names
// one. A result encodeOnce renders is written by hand into the reply's
// buffer, as laneResponse writes one.
func (s *Server) perRequestReply(id jsonrpc.ID, res *mcp.CallToolResult, ss *mcp.ServerSession) laneReply {
	meta := s.withServerInfo(res.Meta)
	if out, ok := asCallResult(res, ss); ok {
		out.Meta = meta
		return encodeReply(id, out)
	}
	r := *res
	r.Meta = meta
	resultType := "complete"
	if r.InputRequests != nil {
		if len(r.Content) > 0 || r.StructuredContent != nil {
			return laneReply{resp: &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}}}
		}
		resultType = "input_required"
	} else if r.Content == nil {
		r.Content = []mcp.Content{}
	}
	b, err := marshalCallToolResult(&r, resultType)
	if err != nil {
		return laneReply{resp: &jsonrpc.Response{ID: id, Error: err}}
	}
	return laneReply{resp: &jsonrpc.Response{ID: id, Result: b}}
}

// withServerInfo is the _meta m with the server's identity added, as the
// SDK adds it to each result of a request of protocol 2026-07-28; m itself
// when it names one. m is not changed.
func (s *Server) withServerInfo(m mcp.Meta) mcp.Meta {
	if m == nil {
		return s.serverInfo // only read
	}
	if _, ok := m[mcp.MetaKeyServerInfo]; ok {
		return m
	}
	c := maps.Clone(m)
	c[mcp.MetaKeyServerInfo] = s.impl
	return c
}

// marshalCallToolResult is the SDK's encoding of r (CallToolResult's
// MarshalJSON: its fields, then the result type, then the input requests)
// with the result type the SDK gives it, which it keeps unexported.
func marshalCallToolResult(r *mcp.CallToolResult, resultType string) (json.RawMessage, error) {
	type result mcp.CallToolResult // without its MarshalJSON
	type wire struct {
		result
		ResultType    string          `json:"resultType,omitempty"`
		InputRequests json.RawMessage `json:"inputRequests,omitempty"` // shadows result's
	}
	w := wire{result: result(*r), ResultType: resultType}
	if r.InputRequests != nil {
		ir, err := json.Marshal(r.InputRequests)
		if err != nil {
			return nil, err
		}
		w.InputRequests = ir
	}
	return json.Marshal(w)
}

// encodeLaneValue encodes v, a result, as the SDK's JSON-RPC layer does.
func encodeLaneValue(v any) (json.RawMessage, error) {
	bp := resultBufs.Get().(*[]byte)
	defer putResultBuf(bp)
	b, err := appendResult((*bp)[:0], v)
	*bp = b
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// resultBufs keeps the buffers results are encoded in; one grown past
// keptResultBytes (a screenshot, a long file) is left to the collector.
var resultBufs = sync.Pool{New: func() any { return new([]byte) }}

// putResultBuf gives bp back to resultBufs, unless it grew too large.
func putResultBuf(bp *[]byte) {
	if cap(*bp) <= keptResultBytes {
		*bp = (*bp)[:0]
		resultBufs.Put(bp)
	}
}

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
		c.laneAnswer(laneReply{resp: &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: request ID %v already in use", req.ID.Raw())}}})
		return true
	}
	c.laneWG.Add(1)
	c.laneGo(func() {
		defer c.laneWG.Done()
		reply := run(ctx)
		c.mu.Lock()
		delete(c.laneRuns, req.ID)
		c.mu.Unlock()
		cancel()
		c.laneAnswer(reply)
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

// laneAnswer writes a response of the lane, unless the connection closed,
// and releases it.
func (c *frontConn) laneAnswer(r laneReply) {
	defer r.release()
	select {
	case <-c.closed:
		return
	default:
	}
	var err error
	if r.msg != nil {
		if err = c.writeLine(r.line()); err == nil {
			c.track(r.resp, false)
		}
	} else {
		err = c.Write(context.Background(), r.resp)
	}
	if err != nil {
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
