package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the session on the first frame it cannot
// decode (a read error closes its jsonrpc2 connection), so one bad line
// from a client would end `yagent serve` for good. This transport reads the
// lines itself, answers a bad one with a JSON-RPC error for that message,
// and passes only well-formed messages on, re-encoded, so the SDK never
// meets a frame it would choke on.

// DefaultMaxFrame bounds one inbound message (one line of stdin): 16 MiB,
// the SDK's own default. A longer line is answered with -32600 and skipped.
const DefaultMaxFrame = 16 << 20

// MaxDepth bounds how deeply objects and arrays nest in one message. The
// SDK's decoder gives up past 1000 (and ends the session); no tool input
// needs a tenth of this.
const MaxDepth = 128

// idPrefix is how much of an oversized line is kept to find its id.
const idPrefix = 64 << 10

// StdioTransport serves MCP on a byte stream of newline-delimited JSON-RPC
// messages, by default stdin and stdout, and survives bad input: a line
// that is not JSON (-32700, id null), not a JSON-RPC message (-32600),
// over the frame limit (-32600) or nested too deep (-32602) gets an error
// answer, with the message's id when one can be found, and the session
// goes on.
type StdioTransport struct {
	// In and Out default to os.Stdin and os.Stdout. In is closed with the
	// connection when it is an io.Closer.
	In  io.Reader
	Out io.Writer
	// MaxFrame bounds one line in bytes; 0 means DefaultMaxFrame.
	MaxFrame int
	// Logger is told about each bad frame; nil discards.
	Logger *slog.Logger
	// DrainTimeout bounds how long the end of In waits for the requests
	// still in flight to be answered; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration

	// connected, when set, is told of each connection Connect makes:
	// Server.Run opens its call lane on it.
	connected func(*frontConn)
}

// DefaultDrainTimeout bounds the wait, at the end of stdin, for the answers
// of the requests already read. A client that writes its requests and
// closes its end (`yagent serve < requests.jsonl`) gets every answer; one
// whose call outlasts this bound loses that answer, and the session ends.
const DefaultDrainTimeout = 30 * time.Second

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = stdio(os.Stdin)
	}
	if out == nil {
		out = stdio(os.Stdout)
	}
	limit := t.MaxFrame
	if limit <= 0 {
		limit = DefaultMaxFrame
	}
	logger := t.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	drain := t.DrainTimeout
	if drain <= 0 {
		drain = DefaultDrainTimeout
	}
	c := &frontConn{
		in:       in,
		out:      out,
		logger:   logger,
		drain:    drain,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
		pending:  map[jsonrpc.ID]struct{}{},
		asked:    map[jsonrpc.ID]struct{}{},
		idle:     make(chan struct{}, 1),
		laneRuns: map[jsonrpc.ID]context.CancelFunc{},
	}
	c.laneCtx, c.laneStop = context.WithCancel(context.Background())
	if t.connected != nil {
		t.connected(c)
	}
	go c.readLoop(newFrameReader(in, limit))
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// frontConn is one connection of StdioTransport. Lines are read on a
// goroutine of their own so that Close unblocks Read.
//
// The end of In is held back from the SDK until every request read so far
// has been answered: the SDK ends the session, and cancels the calls in
// flight, on the first read error.
type frontConn struct {
	in       io.Reader
	out      io.Writer
	logger   *slog.Logger
	drain    time.Duration
	incoming chan readResult
	closed   chan struct{}
	once     sync.Once
	writeMu  sync.Mutex

	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // the client's requests not yet answered
	asked   map[jsonrpc.ID]struct{} // our requests the client has not answered
	ended   bool                    // In has ended
	idle    chan struct{}           // signalled when, In ended, waiting is pointless

	// The call lane (lane.go): tools/call requests answered without the
	// SDK's request path, each on a goroutine of its own.
	lane      atomic.Pointer[laneFunc]
	laneCtx   context.Context // ends with the connection
	laneStop  context.CancelFunc
	laneWG    sync.WaitGroup
	laneRuns  map[jsonrpc.ID]context.CancelFunc // under mu
	laneWork  chan func()                       // to the kept workers (laneGo)
	laneStart sync.Once
}

// track records a message crossing the connection: inbound when the client
// sent it, outbound when the server did.
func (c *frontConn) track(msg jsonrpc.Message, inbound bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.ID.IsValid() {
			if inbound && m.Method == "notifications/cancelled" {
				// A cancelled request may go unanswered.
				if id, ok := cancelledID(m.Params); ok {
					delete(c.pending, id)
					break
				}
			}
			return
		}
		if inbound {
			c.pending[m.ID] = struct{}{}
		} else {
			c.asked[m.ID] = struct{}{}
		}
	case *jsonrpc.Response:
		if inbound {
			delete(c.asked, m.ID)
		} else {
			delete(c.pending, m.ID)
		}
	}
	if c.ended && c.pointless() {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
}

// cancelledID is the request a notifications/cancelled names.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return jsonrpc.ID{}, false
	}
	v, err := parseID(p.RequestID)
	if err != nil || v == nil {
		return jsonrpc.ID{}, false
	}
	id, err := requestID(v)
	return id, err == nil
}

// pointless says whether waiting longer for answers can change anything:
// nothing is in flight, or a call waits on a question to a client that can
// no longer answer. c.mu is held.
func (c *frontConn) pointless() bool {
	return len(c.pending) == 0 || len(c.asked) > 0
}

// awaitDrain waits, In having ended, until the requests in flight are
// answered, the drain bound passes or the connection closes.
func (c *frontConn) awaitDrain() {
	c.mu.Lock()
	c.ended = true
	done, n := c.pointless(), len(c.pending)
	c.mu.Unlock()
	if done {
		return
	}
	c.logger.Debug("stdin ended; answering the requests in flight", "requests", n, "bound", c.drain)
	t := time.NewTimer(c.drain)
	defer t.Stop()
	select {
	case <-c.idle:
	case <-t.C:
		c.mu.Lock()
		n = len(c.pending)
		c.mu.Unlock()
		c.logger.Warn("stdin ended and requests are still unanswered; ending the session", "requests", n, "waited", c.drain)
	case <-c.closed:
	}
}

func (c *frontConn) readLoop(fr *frameReader) {
	for {
		f, err := fr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.awaitDrain()
			}
			select {
			case c.incoming <- readResult{err: err}:
			case <-c.closed:
			}
			return
		}
		msg, bad := decodeFrame(f)
		if bad != nil {
			c.logger.Warn("bad MCP frame answered with an error", "code", bad.Code, "reason", bad.Message, "bytes", f.size)
			if err := c.writeLine(append(bad.encode(), '\n')); err != nil {
				select {
				case c.incoming <- readResult{err: err}:
				case <-c.closed:
				}
				return
			}
			continue
		}
		if msg == nil {
			continue // a blank line
		}
		c.track(msg, true)
		if c.takeLane(msg) {
			continue
		}
		select {
		case c.incoming <- readResult{msg: msg}:
		case <-c.closed:
			return
		}
	}
}

// Read implements mcp.Connection.
func (c *frontConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection.
func (c *frontConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, ok := []byte(nil), false
	if r, isResponse := msg.(*jsonrpc.Response); isResponse {
		b, ok = encodeResponse(r)
	}
	if !ok {
		var err error
		if b, err = jsonrpc.EncodeMessage(msg); err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
	}
	if err := c.writeLine(append(b, '\n')); err != nil {
		return err
	}
	c.track(msg, false)
	return nil
}

// writeLine writes b, one message and its line end, in one write.
func (c *frontConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(b)
	return err
}

// Close implements mcp.Connection.
func (c *frontConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		// The lane's calls end with the connection, as the SDK's own do:
		// cancelled here, and waited for by Server.run and the session's
		// end, not here: the SDK closes the connection holding the lock
		// that a call's last write (a progress notice, its answer) takes.
		c.laneStop()
		if cl, ok := c.in.(io.Closer); ok {
			err = cl.Close()
		}
	})
	return err
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *frontConn) SessionID() string { return "" }

// frame is one line of input.
type frame struct {
	// data is the line without its line end; of an oversized line, its
	// first idPrefix bytes.
	data    []byte
	size    int // the whole line's length, line end included
	tooLong bool
	limit   int
}

// frameReader splits a stream into lines, holding at most limit bytes of
// one line in memory.
type frameReader struct {
	br    *bufio.Reader
	limit int
}

func newFrameReader(r io.Reader, limit int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next line; a last line without a line end counts. At
// the end of the stream it returns io.EOF.
func (r *frameReader) next() (frame, error) {
	f := frame{limit: r.limit}
	for {
		chunk, err := r.br.ReadSlice('\n')
		f.size += len(chunk)
		if !f.tooLong {
			f.data = append(f.data, chunk...)
			if len(bytes.TrimRight(f.data, "\r\n")) > r.limit {
				f.tooLong = true
				f.data = f.data[:min(len(f.data), idPrefix)]
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
		case errors.Is(err, io.EOF):
			if f.size == 0 {
				return frame{}, io.EOF
			}
		default:
			return frame{}, err
		}
		if !f.tooLong {
			f.data = bytes.TrimRight(f.data, "\r\n")
		}
		return f, nil
	}
}

// badFrame is the error answer to one bad frame.
type badFrame struct {
	ID      any // string, int64, or nil for null
	Code    int64
	Message string
}

func (b *badFrame) encode() []byte {
	out, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: b.ID, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{b.Code, b.Message}})
	return out
}

func bad(id any, code int64, format string, args ...any) *badFrame {
	return &badFrame{ID: id, Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeFrame judges one line: a message to pass on, nil for a blank line,
// or the error answer of a bad one.
func decodeFrame(f frame) (jsonrpc.Message, *badFrame) {
	data := bytes.TrimLeft(f.data, " \t\r\n")
	if f.tooLong {
		return nil, bad(sniffID(data), jsonrpc.CodeInvalidRequest,
			"invalid request: the message is %d bytes, over the limit of %d bytes per message (one line); send less, a large file in parts", f.size, f.limit)
	}
	data = bytes.TrimRight(data, " \t\r\n")
	if len(data) == 0 {
		return nil, nil
	}
	if d := nestingDepth(data); d > MaxDepth {
		return nil, bad(sniffID(data), jsonrpc.CodeInvalidParams,
			"invalid params: the message nests %d levels deep, over the limit of %d; send flatter arguments", d, MaxDepth)
	}
	if !json.Valid(data) {
		var raw json.RawMessage
		err := json.Unmarshal(data, &raw) // for its words only: Valid says no more than no
		return nil, bad(nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value (%v); send one JSON-RPC message per line", err)
	}
	if i := invalidUTF8(data); i >= 0 {
		return nil, bad(sniffID(data), jsonrpc.CodeInvalidRequest, "invalid request: the message is not valid UTF-8 (byte %d)", i)
	}
	switch data[0] {
	case '{':
	case '[':
		return nil, bad(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not accepted; send one JSON-RPC message per line")
	default:
		return nil, bad(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object, not %s", jsonKind(data[0]))
	}
	fields, dup := topLevel(data)
	if dup != "" {
		return nil, bad(sniffID(data), jsonrpc.CodeInvalidRequest, "invalid request: key %q appears twice", dup)
	}

	var id any
	if rawID, ok := fields["id"]; ok {
		var err error
		if id, err = parseID(rawID); err != nil {
			return nil, bad(nil, jsonrpc.CodeInvalidRequest, "invalid request: %v", err)
		}
	}
	if version, err := jsonString(fields["jsonrpc"]); err != nil || version != "2.0" {
		return nil, bad(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	if rawMethod, ok := fields["method"]; ok {
		method, err := jsonString(rawMethod)
		if err != nil {
			return nil, bad(id, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		if hasResult || hasError {
			return nil, bad(id, jsonrpc.CodeInvalidRequest, `invalid request: a request has no "result" or "error"`)
		}
		var params json.RawMessage
		if p, ok := fields["params"]; ok && !bytes.Equal(p, []byte("null")) {
			if p[0] != '{' && p[0] != '[' {
				return nil, bad(id, jsonrpc.CodeInvalidParams, `invalid params: "params" must be an object, not %s`, jsonKind(p[0]))
			}
			params = p
		}
		// A request is built from the fields judged above, not encoded
		// and decoded once more: the SDK's decoder takes a fresh 32 KiB
		// buffer for every message it reads.
		rid, err := requestID(id)
		if err != nil {
			return nil, bad(nil, jsonrpc.CodeInvalidRequest, "invalid request: %v", err)
		}
		return &jsonrpc.Request{ID: rid, Method: method, Params: params}, nil
	}
	// A response to one of the server's own requests (an elicitation, say).
	out := map[string]json.RawMessage{"jsonrpc": fields["jsonrpc"]}
	if id != nil {
		out["id"] = fields["id"]
	}
	switch {
	case id == nil:
		return nil, bad(nil, jsonrpc.CodeInvalidRequest, `invalid request: no "method"`)
	case hasResult == hasError:
		return nil, bad(id, jsonrpc.CodeInvalidRequest, `invalid request: no "method", and a response needs exactly one of "result" and "error"`)
	case hasError:
		var e struct {
			Code    *int64  `json:"code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(fields["error"], &e); err != nil || e.Code == nil || e.Message == nil {
			return nil, bad(id, jsonrpc.CodeInvalidRequest, `invalid request: "error" must be an object with an integer "code" and a string "message"`)
		}
		out["error"] = fields["error"]
	default:
		out["result"] = fields["result"]
	}
	canonical, err := json.Marshal(out)
	if err != nil {
		return nil, bad(id, jsonrpc.CodeInvalidRequest, "invalid request: %v", err)
	}
	msg, err := jsonrpc.DecodeMessage(canonical)
	if err != nil {
		return nil, bad(id, jsonrpc.CodeInvalidRequest, "invalid request: %v", err)
	}
	return msg, nil
}

// requestID is the SDK's ID for what parseID returned, made as its own
// decoder makes it (an integer passes as a float64, as JSON decodes it).
func requestID(id any) (jsonrpc.ID, error) {
	if n, ok := id.(int64); ok {
		return jsonrpc.MakeID(float64(n))
	}
	return jsonrpc.MakeID(id)
}

// parseID accepts the ids JSON-RPC allows and the SDK keeps exactly: a
// string or an integer; null is a notification. raw is one JSON value.
func parseID(raw json.RawMessage) (any, error) {
	switch {
	case string(raw) == "null":
		return nil, nil
	case len(raw) > 0 && raw[0] == '"':
		return jsonString(raw)
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, nil
	}
	return nil, fmt.Errorf(`"id" must be a string or an integer, not %s`, raw)
}

// sniffID finds the top-level "id" of a message that is too long, too deep
// or otherwise unusable, reading as little as it can, so the error answer
// reaches the call that waits for it; nil when there is none to find.
func sniffID(data []byte) any {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key == "id" {
			t, err := dec.Token()
			if err != nil {
				return nil
			}
			switch t := t.(type) {
			case string:
				return t
			case json.Number:
				if n, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
					return n
				}
			}
			return nil
		}
		if skipValue(dec) != nil {
			return nil
		}
	}
	return nil
}

// skipValue reads one value of dec token by token, so nothing is built.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// nestingDepth is the deepest nesting of objects and arrays in data,
// strings skipped, in one pass that allocates nothing.
func nestingDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest
}

// invalidUTF8 returns the offset of the first byte that is not valid
// UTF-8, or -1. Go's decoder would silently replace it with U+FFFD, so the
// host would judge one string and the tool get another.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func jsonKind(b byte) string {
	switch b {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
