package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
)

// front is a bare MCP server with one tool, echo, behind StdioTransport,
// driven line by line as a client would.
type front struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
}

const testMaxFrame = 4096

func newFront(t *testing.T) *front {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
		})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f := &front{t: t, in: inW, lines: make(chan []byte, 16), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		f.done <- srv.Run(ctx, &StdioTransport{In: inR, Out: outW, MaxFrame: testMaxFrame})
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(f.lines)
	}()
	t.Cleanup(func() { cancel(); inW.Close() })
	f.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if r := f.recv(); r["id"] != float64(1) || r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	f.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return f
}

func (f *front) send(line string) {
	f.t.Helper()
	if _, err := io.WriteString(f.in, line+"\n"); err != nil {
		f.t.Fatalf("write %.80q: %v", line, err)
	}
}

// recv returns the next message the server wrote, failing after 10s: the
// server died or did not answer.
func (f *front) recv() map[string]any {
	f.t.Helper()
	select {
	case line, ok := <-f.lines:
		if !ok {
			f.t.Fatalf("the server closed its output (Run: %v)", <-f.done)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			f.t.Fatalf("the server wrote %q: %v", line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		f.t.Fatal("no answer from the server in 10s")
	}
	return nil
}

// echoWorks checks that the session goes on: a valid call gets its answer.
func (f *front) echoWorks() {
	f.t.Helper()
	f.send(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
	r := f.recv()
	res, _ := r["result"].(map[string]any)
	if r["id"] != float64(100) || res == nil || !strings.Contains(string(mustJSON(res)), `echo {\"x\":1}`) {
		f.t.Fatalf("the call after the bad frame: %v", r)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestStdioTransport_AnswersBadFramesAndGoesOn(t *testing.T) {
	t.Parallel()
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`
	}
	cases := []struct {
		name     string
		frame    string
		wantCode int64
		wantID   any // nil: null
	}{
		{"not json", "hello", jsonrpc.CodeParseError, nil},
		{"unterminated object", `{"jsonrpc":"2.0","id":7,"method":"tools/list"`, jsonrpc.CodeParseError, nil},
		{"two values on a line", `{"jsonrpc":"2.0","id":7,"method":"tools/list"} {}`, jsonrpc.CodeParseError, nil},
		{"raw invalid bytes", "\xff\xfe", jsonrpc.CodeParseError, nil},
		{"nul byte", "\x00", jsonrpc.CodeParseError, nil},
		{"a number", "42", jsonrpc.CodeInvalidRequest, nil},
		{"a string", `"tools/list"`, jsonrpc.CodeInvalidRequest, nil},
		{"null", "null", jsonrpc.CodeInvalidRequest, nil},
		{"empty batch", "[]", jsonrpc.CodeInvalidRequest, nil},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`, jsonrpc.CodeInvalidRequest, nil},
		{"no method", `{"jsonrpc":"2.0","id":7,"params":{}}`, jsonrpc.CodeInvalidRequest, float64(7)},
		{"no method and no id", `{"jsonrpc":"2.0"}`, jsonrpc.CodeInvalidRequest, nil},
		{"no version", `{"id":7,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, float64(7)},
		{"wrong version", `{"jsonrpc":"1.0","id":"s","method":"tools/list"}`, jsonrpc.CodeInvalidRequest, "s"},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":12}`, jsonrpc.CodeInvalidRequest, float64(7)},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{"id a boolean", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{"id a fraction", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, jsonrpc.CodeInvalidRequest, nil},
		{"duplicate key", `{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"x"}`, jsonrpc.CodeInvalidRequest, float64(7)},
		{"params a number", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":7}`, jsonrpc.CodeInvalidParams, float64(7)},
		{"bad error response", `{"jsonrpc":"2.0","id":7,"error":"x"}`, jsonrpc.CodeInvalidRequest, float64(7)},
		{"over the frame limit", call(`{"s":"` + strings.Repeat("a", testMaxFrame) + `"}`), jsonrpc.CodeInvalidRequest, float64(7)},
		{"far over the frame limit", call(`{"s":"` + strings.Repeat("a", 300<<10) + `"}`), jsonrpc.CodeInvalidRequest, float64(7)},
		{"1000 deep", call(`{"a":` + nested(1000) + `}`), jsonrpc.CodeInvalidParams, float64(7)},
		{"just over the depth limit", call(`{"a":` + nested(MaxDepth-2) + `}`), jsonrpc.CodeInvalidParams, float64(7)},
		{"invalid UTF-8 in a string", call(`{"path":"a` + "\xff" + `"}`), jsonrpc.CodeInvalidRequest, float64(7)},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"nope"}`, jsonrpc.CodeMethodNotFound, float64(7)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFront(t)
			f.send(tc.frame)
			r := f.recv()
			e, _ := r["error"].(map[string]any)
			if e == nil || e["code"] != float64(tc.wantCode) || r["id"] != tc.wantID {
				t.Fatalf("answer %v; want error %d with id %v", r, tc.wantCode, tc.wantID)
			}
			if _, ok := r["id"]; !ok {
				t.Errorf("the answer has no id member (JSON-RPC wants \"id\": null): %v", r)
			}
			f.echoWorks()
		})
	}
}

// TestStdioTransport_PassesGoodFrames: what is well-formed is untouched:
// blank lines and CRLF endings, a depth just within the limit, a line just
// within the frame limit, arguments that are not an object (the surface
// explains those as a tool error).
func TestStdioTransport_PassesGoodFrames(t *testing.T) {
	t.Parallel()
	f := newFront(t)
	f.send("")
	f.send("   \r")
	f.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\r")
	if r := f.recv(); r["id"] != float64(2) || r["result"] == nil {
		t.Fatalf("tools/list with CRLF: %v", r)
	}
	deep := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"a":` + nested(MaxDepth-3) + `}}}`
	f.send(deep)
	if r := f.recv(); r["id"] != float64(3) || r["result"] == nil {
		t.Fatalf("a call %d deep: %v", MaxDepth, r)
	}
	head := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"s":"`
	tail := `"}}}`
	f.send(head + strings.Repeat("a", testMaxFrame-len(head)-len(tail)) + tail)
	if r := f.recv(); r["id"] != float64(4) || r["result"] == nil {
		t.Fatalf("a call of exactly the frame limit: %.200v", r)
	}
	f.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`)
	if r := f.recv(); r["id"] != float64(5) {
		t.Fatalf("arguments not an object: %v", r)
	}
	f.echoWorks()
}

// TestStdioTransport_CloseUnblocksRead: closing the connection ends a Read
// waiting for input.
func TestStdioTransport_CloseUnblocksRead(t *testing.T) {
	t.Parallel()
	inR, _ := io.Pipe()
	conn, err := (&StdioTransport{In: inR, Out: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := conn.Read(context.Background()); done <- err }()
	conn.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Read after Close: no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still blocked 10s after Close")
	}
}

// FuzzFrameReader: any byte stream splits into frames that account for
// every byte, none over the limit, and each frame is either passed on as a
// message that survives a round trip or answered with a well-formed error.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{
		"", "\n", "hello\n", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n",
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"p":"\u00e9"}}}` + "\r\n",
		"[1,2]\n{}\n", `{"jsonrpc":"2.0","id":3,"result":{}}`, `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`,
		"\xff\n" + nested(200) + "\n", `{"jsonrpc":"2.0","id":7,"method":"m","params":{"s":"` + strings.Repeat("x", 300) + `"}}`,
		`{"id":1,"id":2,"jsonrpc":"2.0","method":"m"}`, `{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	const limit = 256
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := newFrameReader(bytes.NewReader(data), limit)
		total := 0
		for {
			fm, err := fr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("next: %v", err)
			}
			total += fm.size
			if !fm.tooLong && len(fm.data) > limit {
				t.Fatalf("a frame of %d bytes passed a limit of %d", len(fm.data), limit)
			}
			msg, bad := decodeFrame(fm)
			switch {
			case bad != nil:
				if msg != nil {
					t.Fatal("both a message and an error")
				}
				var ans struct {
					ID    any `json:"id"`
					Error struct {
						Code int64 `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(bad.encode(), &ans); err != nil {
					t.Fatalf("error answer %s: %v", bad.encode(), err)
				}
				switch ans.Error.Code {
				case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidParams:
				default:
					t.Fatalf("error code %d", ans.Error.Code)
				}
			case msg != nil:
				b, err := jsonrpc.EncodeMessage(msg)
				if err != nil {
					t.Fatalf("encode %v: %v", msg, err)
				}
				again, bad := decodeFrame(frame{data: b, size: len(b), limit: 1 << 20})
				if bad != nil || again == nil {
					t.Fatalf("a message passed on does not pass again: %s: %+v", b, bad)
				}
			}
		}
		if total != len(data) {
			t.Fatalf("frames hold %d bytes of %d", total, len(data))
		}
	})
}

// TestDecodeFrame_RequestAsTheSDKDecodesIt: a request the front builds
// from the fields it judged is the one the SDK's own decoder makes of the
// same line.
func TestDecodeFrame_RequestAsTheSDKDecodesIt(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"}}}`,
		`{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"method":"tools/call","params":{"name":"e","arguments":{}},"id":0,"jsonrpc":"2.0"}`,
	} {
		got, bad := decodeFrame(frame{data: []byte(line), size: len(line)})
		if bad != nil {
			t.Errorf("%s: refused: %s", line, bad.Message)
			continue
		}
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("%s: the SDK refuses it: %v", line, err)
		}
		g, ok := got.(*jsonrpc.Request)
		w := want.(*jsonrpc.Request)
		if bytes.Equal(w.Params, []byte("null")) {
			w.Params = nil // the front passes "params": null on as no params
		}
		if !ok || g.ID != w.ID || g.Method != w.Method || !bytes.Equal(g.Params, w.Params) {
			t.Errorf("%s: got %#v, want %#v", line, got, want)
		}
	}
}

// TestToCallResult_DataGoesOutAsSent: a result's data reaches the client
// byte for byte (agent_exit echoes the model's arguments through it): no
// number rounded through float64, no key order changed.
func TestToCallResult_DataGoesOutAsSent(t *testing.T) {
	t.Parallel()
	data := `{"id":12345678901234567890,"b":1.50,"a":[2e3]}`
	b, err := json.Marshal(toCallResult(&adapter.Result{Text: "x", Data: json.RawMessage(data)}))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"data":`+data)) {
		t.Errorf("result %s does not carry the data %s as sent", b, data)
	}
}

// TestStdioTransport_EndOfInputAnswersCallsInFlight: a client that writes
// its requests and closes stdin gets every answer; the call in flight is
// not cancelled by the end of input.
func TestStdioTransport_EndOfInputAnswersCallsInFlight(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	cancelled := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(entered)
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			case <-ctx.Done():
				close(cancelled)
				return nil, ctx.Err()
			}
		})
	draining := make(chan struct{})
	logger := slog.New(signalHandler{msg: "stdin ended; answering the requests in flight", ch: draining, once: new(sync.Once)})
	inR, inW := io.Pipe()
	var out bytes.Buffer
	run := make(chan error, 1)
	go func() { run <- srv.Run(context.Background(), &StdioTransport{In: inR, Out: &out, Logger: logger}) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`+"\n")
	<-entered
	inW.Close()
	select {
	case <-draining:
	case <-cancelled:
		t.Fatal("the end of stdin cancelled the call in flight")
	case <-time.After(10 * time.Second):
		t.Fatal("no drain 10s after stdin ended")
	}
	close(release)
	select {
	case err := <-run:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return 10s after the last answer")
	}
	if !strings.Contains(out.String(), `"id":2,"result":{"content":[{"type":"text","text":"done"}]}`) {
		t.Errorf("the call's answer is not on stdout:\n%s", out.String())
	}
}

// TestStdioTransport_EndOfInputWaitsOnlyWhenAnAnswerCanCome: the end of
// stdin is passed on at once when nothing is in flight, when the request
// in flight was cancelled, and when a call waits on a question the client
// can no longer answer.
func TestStdioTransport_EndOfInputWaitsOnlyWhenAnAnswerCanCome(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in    string
		reads int
		ask   bool
	}{
		"nothing in flight": {in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, reads: 1},
		"cancelled": {in: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, reads: 2},
		"asked the client": {in: `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`, reads: 1, ask: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn, err := (&StdioTransport{In: strings.NewReader(tc.in + "\n"), Out: io.Discard, DrainTimeout: time.Hour}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			for range tc.reads {
				if _, err := conn.Read(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if tc.ask {
				id, _ := jsonrpc.MakeID(float64(100))
				if err := conn.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "elicitation/create"}); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { _, err := conn.Read(context.Background()); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, io.EOF) {
					t.Errorf("want io.EOF, got %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the end of stdin is held back with no answer to wait for")
			}
		})
	}
}

// signalHandler closes ch when a record with msg is logged.
type signalHandler struct {
	msg  string
	ch   chan struct{}
	once *sync.Once
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }
