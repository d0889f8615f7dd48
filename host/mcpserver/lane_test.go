package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/sdk"
)

// askGuard allows every call but those of the tool "ask", which it asks
// the user about.
type askGuard struct{}

func (askGuard) Check(_ context.Context, r adapter.GuardRequest) adapter.Decision {
	if r.Spec.Name == "ask" {
		return adapter.Decision{Action: adapter.Ask, Reason: "asks every time, <always> & again"}
	}
	return adapter.Decision{Action: adapter.Allow}
}

// laneServer is a Server over "echo", which answers with its arguments
// (with an image when asked for one, after two progress reports when
// asked for them), and "ask", whose calls the user is asked about. sdkCalls counts the tools/call requests that took the
// SDK's request path.
func laneServer(t *testing.T) (_ *Server, sdkCalls *atomic.Int64) {
	t.Helper()
	return laneServerWith(t, nil)
}

func laneServerWith(t *testing.T, opts *Options) (_ *Server, sdkCalls *atomic.Int64) {
	t.Helper()
	echo := adapter.ExecutorFunc(func(_ context.Context, _ sdk.CallInfo, args json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
		if strings.Contains(string(args), "progress") {
			progress(sdk.Progress{Message: "half <way> & on", Progress: 1, Total: 2})
			progress(sdk.Progress{Progress: 2, Total: 2})
		}
		r := &sdk.Result{Text: "echo " + string(args), Data: json.RawMessage(`{"n":1}`)}
		if strings.Contains(string(args), "image") {
			r.Images = []sdk.Image{{Data: []byte{1, 2, 3}, MIMEType: "image/png"}}
		}
		return r, nil
	})
	logger := slog.New(slog.DiscardHandler)
	events := bus.New()
	var adapters []*adapter.Adapter
	for _, name := range []string{"echo", "ask"} {
		spec := sdk.Spec{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`), Effect: sdk.EffectRead}
		adapters = append(adapters, adapter.New(spec, "test", toolspec.Hot, echo, adapter.Options{Trusted: true, Bus: events, Logger: logger}))
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Bus = events
	srv := New(surface.NewSurfaceFromAdapters(adapters, surface.Options{Guard: askGuard{}, Bus: events, Logger: logger}), &o)
	t.Cleanup(srv.Close)
	sdkCalls = new(atomic.Int64)
	srv.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				sdkCalls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return srv, sdkCalls
}

// converse runs one stdio session of srv, through its call lane or, with
// lane false, through the SDK's Run alone, for a client of protocol
// version that, with elicit, answers elicitations (accepting once). It
// sends each request of calls, an object with an "id", in turn and
// returns every line the server wrote after the initialize answer, up to
// and including the answer to each.
func converse(t *testing.T, srv *Server, lane bool, version string, elicit bool, calls []string) []string {
	t.Helper()
	caps := `{}`
	if elicit {
		caps = `{"elicitation":{}}`
	}
	open := []string{
		fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"t","version":"0"}}}`, version, caps),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	return converseFrom(t, srv, lane, open, calls)
}

// converseFrom is converse for a client that opens the session with the
// messages of open (the requests among them answered before the calls
// start). A call may name, as $STATE, the requestState of the last
// input-required result, and in its arguments the answer to its question
// ("reply": "forever", out of the schema, "decline" or "error"; none
// accepts once).
func converseFrom(t *testing.T, srv *Server, lane bool, open, calls []string) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr := &StdioTransport{In: inR, Out: outW}
		if lane {
			_ = srv.Run(ctx, tr)
		} else {
			_ = srv.server.Run(ctx, tr)
		}
		outW.Close()
	}()
	defer func() { cancel(); inW.Close(); <-done }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the server closed its output")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no line from the server in 10s")
		}
		return ""
	}
	for _, m := range open {
		io.WriteString(inW, m+"\n")
		if strings.Contains(m, `"id"`) {
			next()
		}
	}
	var out []string
	state := ""
	for _, call := range calls {
		call = strings.ReplaceAll(call, "$STATE", state)
		var want struct {
			ID     json.RawMessage
			Params struct {
				Arguments struct{ Reply string }
			}
		}
		if err := json.Unmarshal([]byte(call), &want); err != nil {
			t.Fatalf("call %s: %v", call, err)
		}
		io.WriteString(inW, call+"\n")
		for {
			line := next()
			var m struct {
				ID     json.RawMessage
				Method string
				Result struct{ RequestState string }
			}
			_ = json.Unmarshal([]byte(line), &m)
			if st := m.Result.RequestState; st != "" {
				// Random: the same in both paths' answers but for this.
				state = st
				line = strings.Replace(line, st, "STATE", 1)
			}
			out = append(out, line)
			if m.Method == "elicitation/create" {
				answer := map[string]string{
					"":        `"result":{"action":"accept","content":{"scope":"once"}}`,
					"forever": `"result":{"action":"accept","content":{"scope":"forever"}}`,
					"decline": `"result":{"action":"decline"}`,
					"error":   `"error":{"code":-32000,"message":"the user closed the dialog"}`,
				}[want.Params.Arguments.Reply]
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", m.ID, answer)
				continue
			}
			if m.Method == "" && string(m.ID) == string(want.ID) {
				break
			}
		}
	}
	return out
}

func call(id, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":%s}`, id, params)
}

// TestLane_AnswersAsTheSDKPath: every call the lane takes is answered byte
// for byte as the SDK's request path answers it (results, an image, a
// progress token, arguments absent or null, a tool nobody knows, a call
// the user is asked about over elicitation and who accepts, answers out of
// the schema, declines or errs, a trace context valid or not), none of
// them reaches the SDK's path, and the calls the lane leaves
// (params it does not know, the per-request _meta of protocol 2026-07-28 on
// an older session, calls without it of a client that initialized with
// 2026-07-28) reach it and are answered as before.
func TestLane_AnswersAsTheSDKPath(t *testing.T) {
	t.Parallel()
	taken := []string{
		call(`2`, `{"name":"echo","arguments":{"x":"a <b> & \"c\" é"}}`),
		call(`"s-3"`, `{"name":"echo","arguments":{"image":true}}`),
		call(`4`, `{"name":"echo","_meta":{"progressToken":"p1"},"arguments":{}}`),
		call(`5`, `{"name":"echo"}`),
		call(`6`, `{"name":"echo","arguments":null}`),
		call(`7`, `{"name":"nope","arguments":{}}`),
		call(`8`, `{"name":"ask","arguments":{"y":2}}`),
		call(`11`, `{"name":"echo","_meta":{"progressToken":1,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"},"arguments":{}}`),
		call(`12`, `{"name":"echo","_meta":{"traceparent":"junk","tracestate":7},"arguments":{}}`),
		call(`14`, `{"name":"ask","arguments":{"reply":"forever"}}`),
		call(`15`, `{"name":"ask","arguments":{"reply":"decline"}}`),
		call(`16`, `{"name":"ask","arguments":{"reply":"error"}}`),
	}
	left := []string{
		call(`9`, `{"name":"echo","arguments":{},"task":{}}`),
		call(`10`, `{"name":"echo","_meta":{"other":1},"arguments":{}}`),
		// The per-request _meta of protocol 2026-07-28 on an older session.
		call(`13`, `{"name":"echo","_meta":`+perRequest(multiRoundTripVersion, "")+`,"arguments":{}}`),
	}
	for _, tc := range []struct {
		version      string
		calls        []string
		wantSDKCalls int64
	}{
		{"2025-11-25", taken, 0},
		{"2025-06-18", left, int64(len(left))},
		{"2026-07-28", taken[:6], 6},
	} {
		lane, sdkCalls := laneServer(t)
		got := converse(t, lane, true, tc.version, true, tc.calls)
		if n := sdkCalls.Load(); n != tc.wantSDKCalls {
			t.Errorf("%s: %d calls took the SDK's path, want %d", tc.version, n, tc.wantSDKCalls)
		}
		plain, _ := laneServer(t)
		want := converse(t, plain, false, tc.version, true, tc.calls)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: through the lane:\n%s\nthrough the SDK's path:\n%s", tc.version, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// perRequest is the _meta a client of protocol 2026-07-28 sends with every
// request (the Go SDK's client sends these three), with more keys after it.
func perRequest(version, more string) string {
	return fmt.Sprintf(`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"},"io.modelcontextprotocol/protocolVersion":%q%s}`, version, more)
}

// TestLane_AnswersSessionlessAsTheSDKPath: for a client of protocol
// 2026-07-28, which opens with server/discover and sends its version,
// identity and capabilities in each request's _meta, every call the lane
// takes is answered byte for byte as the SDK's path answers it (resultType
// and the server's identity in _meta; a call the user is asked about with
// the question, the input-required result, whose retry goes to the SDK),
// none of them reaches the SDK's path, and the calls the lane leaves (an
// unsupported version, capabilities or identity the SDK refuses, other
// _meta keys or params, a request without the per-request _meta, the
// first request of a session not yet begun) reach it and are answered as
// before.
func TestLane_AnswersSessionlessAsTheSDKPath(t *testing.T) {
	t.Parallel()
	meta := perRequest(multiRoundTripVersion, "")
	with := func(more string) string { return perRequest(multiRoundTripVersion, more) }
	taken := []string{
		call(`2`, `{"name":"echo","_meta":`+meta+`,"arguments":{"x":"a <b> & \"c\" é"}}`),
		call(`"s-3"`, `{"name":"echo","_meta":`+meta+`,"arguments":{"image":true}}`),
		call(`4`, `{"name":"echo","_meta":`+with(`,"progressToken":"p1"`)+`,"arguments":{}}`),
		call(`5`, `{"_meta":`+meta+`,"name":"echo"}`),
		call(`6`, `{"name":"echo","_meta":`+meta+`,"arguments":null}`),
		call(`7`, `{"name":"nope","_meta":`+meta+`,"arguments":{}}`),
		call(`8`, `{"name":"ask","_meta":`+meta+`,"arguments":{"y":2}}`),
		call(`11`, `{"name":"echo","_meta":`+with(`,"progressToken":1,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"`)+`,"arguments":{}}`),
		call(`12`, `{"name":"echo","_meta":`+with(`,"io.modelcontextprotocol/logLevel":"debug"`)+`,"arguments":{}}`),
		call(`13`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"arguments":{}}`),
	}
	left := []string{
		// The retry of the call asked about, with the user's answer.
		call(`8`, `{"name":"ask","_meta":`+meta+`,"arguments":{"y":2},"inputResponses":{"yagent":{"action":"accept","content":{"scope":"once"}}},"requestState":"$STATE"}`),
		call(`20`, `{"name":"echo","_meta":`+perRequest("2099-01-01", "")+`,"arguments":{}}`),
		call(`21`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"},"arguments":{}}`),
		call(`22`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null},"arguments":{}}`),
		call(`23`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{}}`),
		call(`24`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":7}},"arguments":{}}`),
		call(`25`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":5}},"arguments":{}}`),
		call(`26`, `{"name":"echo","_meta":`+with(`,"other":1`)+`,"arguments":{}}`),
		call(`27`, `{"name":"echo","_meta":`+meta+`,"arguments":{},"task":{}}`),
		call(`28`, `{"name":"echo","arguments":{}}`),
		call(`29`, `{"name":"echo","_meta":`+perRequest("2025-11-25", "")+`,"arguments":{}}`),
		call(`30`, `{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":2026},"arguments":{}}`),
	}
	discover := []string{`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":` + meta + `}}`}
	for _, tc := range []struct {
		name         string
		open, calls  []string
		wantSDKCalls int64
	}{
		{"taken", discover, taken, 0},
		// The SDK refuses six of them before any call runs.
		{"left", discover, append(taken[6:7:7], left...), int64(len(left)) - 6},
		// The first request begins the session, in the SDK.
		{"begun", nil, taken[:3], 1},
	} {
		lane, sdkCalls := laneServer(t)
		got := converseFrom(t, lane, true, tc.open, tc.calls)
		if n := sdkCalls.Load(); n != tc.wantSDKCalls {
			t.Errorf("%s: %d calls took the SDK's path, want %d", tc.name, n, tc.wantSDKCalls)
		}
		if testing.Verbose() {
			t.Logf("%s:\n%s", tc.name, strings.Join(got, "\n"))
		}
		plain, _ := laneServer(t)
		want := converseFrom(t, plain, false, tc.open, tc.calls)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: through the lane:\n%s\nthrough the SDK's path:\n%s", tc.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// runOnPipes runs srv on a stdio transport over pipes until the test
// ends, and returns the run's context and the client's ends.
func runOnPipes(tb testing.TB, srv interface {
	Run(context.Context, mcp.Transport) error
}) (context.Context, *io.PipeWriter, *io.PipeReader) {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, &StdioTransport{In: inR, Out: outW})
		outW.Close()
	}()
	tb.Cleanup(func() { cancel(); inW.Close(); <-done })
	return ctx, inW, outR
}

// TestLane_TakesTheGoSDKClient: the Go SDK's client, which speaks protocol
// 2026-07-28 unless told otherwise, has its calls answered on the lane,
// a call the user is asked about included; only that call's retry, with
// the user's answer, takes the SDK's path.
func TestLane_TakesTheGoSDKClient(t *testing.T) {
	t.Parallel()
	srv, sdkCalls := laneServer(t)
	ctx, inW, outR := runOnPipes(t, srv)
	var asked atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"scope": "once"}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != multiRoundTripVersion {
		t.Fatalf("the client speaks %s, want %s", v, multiRoundTripVersion)
	}
	for i, p := range []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"path": "a"}},
		{Name: "echo", Arguments: map[string]any{"image": true}, Meta: mcp.Meta{"progressToken": "p"}},
		{Name: "nope"},
		{Name: "ask", Arguments: map[string]any{"y": 2}},
	} {
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("call %d (%s): %v", i, p.Name, err)
		}
		if text := r.Content[0].(*mcp.TextContent).Text; p.Name != "nope" && !strings.HasPrefix(text, "echo ") {
			t.Errorf("call %d (%s) answered %q", i, p.Name, text)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the user was asked %d times, want 1", n)
	}
	if n := sdkCalls.Load(); n != 1 {
		t.Errorf("%d calls took the SDK's path, want 1 (the retry with the answer)", n)
	}
}

// TestLane_CancelledCallEnds: a notifications/cancelled ends the lane's
// call it names, whose answer still comes.
func TestLane_CancelledCallEnds(t *testing.T) {
	t.Parallel()
	srv, b := newBlockingServer(t)
	_, inW, outR := runOnPipes(t, srv)
	answers := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			answers <- sc.Text()
		}
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	<-answers
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(inW, call(`"c"`, `{"name":"block","arguments":{}}`)+"\n")
	b.wait(t, b.started, "started")
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`+"\n")
	b.wait(t, b.ended, "ended by the cancellation")
	select {
	case a := <-answers:
		if !strings.Contains(a, `"id":"c"`) {
			t.Errorf("answer %s, want the cancelled call's", a)
		}
	case <-time.After(10 * time.Second):
		t.Error("no answer to the cancelled call in 10s")
	}
}

// TestDecodeLaneParams: the lane takes only the params it decodes fully.
func TestDecodeLaneParams(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{
		`{"name":"a","arguments":{"x":1}}`:                          true,
		`{"name":"a","_meta":{"progressToken":3}}`:                  true,
		`{"arguments":{}}`:                                          false,
		`{"name":"a","name":"b"}`:                                   false,
		`{"name":"a","inputResponses":{}}`:                          false,
		`{"name":"a","requestState":"s"}`:                           false,
		`{"name":"a","_meta":{"progressToken":3,"other":true}}`:     false,
		`{"name":"a","_meta":{"traceparent":"t","tracestate":"s"}}`: true,
		`{"name":"a","_meta":{"traceparent":1,"progressToken":3}}`:  true,
		`{"name":"a","_meta":{"traceparent":"t","other":true}}`:     false,
		`{"name":1}`: false,
		`[]`:         false,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{},"io.modelcontextprotocol/logLevel":"info","progressToken":1}}`: true,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":2026}}`: false,
		`{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":null}}`: false,
		`{"name":"a","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`:        false,
	} {
		if _, got := decodeLaneParams(json.RawMessage(raw)); got != ok {
			t.Errorf("decodeLaneParams(%s) = %v, want %v", raw, got, ok)
		}
	}
}

// A lane call still unwinding when the session is closed may write (here
// a progress notice) as it ends; the connection's close must not wait for
// it under the SDK's lock that write takes (mutant 894), and the session's
// end is told only once the call is over. That second check is a race the
// test wins only when the session ends before the call: without the wait
// in hostSessionFor it fails about one run in two, so no mutant names it.
func TestLane_CallEndingAtCloseWrites(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var ended atomic.Bool
	exec := adapter.ExecutorFunc(func(ctx context.Context, _ sdk.CallInfo, _ json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
		close(started)
		<-ctx.Done()
		progress(sdk.Progress{Message: "stopping"})
		ended.Store(true)
		return &sdk.Result{Text: "stopped"}, nil
	})
	spec := sdk.Spec{Name: "block", Description: "Blocks until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: sdk.EffectNone}
	events := bus.New()
	a := adapter.New(spec, "test", toolspec.Hot, exec, adapter.Options{Trusted: true, Bus: events, Logger: slog.New(slog.DiscardHandler)})
	surf := surface.NewSurfaceFromAdapters([]*adapter.Adapter{a}, surface.Options{Guard: allowAll{}, Bus: events, Logger: slog.New(slog.DiscardHandler)})
	endTold := make(chan bool, 1)
	srv := New(surf, &Options{Bus: events, OnSessionEnd: func(context.Context, string) { endTold <- ended.Load() }})
	t.Cleanup(srv.Close)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, &StdioTransport{In: inR, Out: outW})
		outW.Close()
	}()
	t.Cleanup(func() { cancel(); inW.Close() })
	out := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(inW, call(`2`, `{"name":"block","_meta":{"progressToken":"p"},"arguments":{}}`)+"\n")
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not start in 10s")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return in 10s after its context ended: the close waits for a call that waits for the close")
	}
	if !ended.Load() {
		t.Error("Run returned before the lane's call ended")
	}
	select {
	case callOver := <-endTold:
		if !callOver {
			t.Error("the session's end was told while its lane call still ran")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session's end was not told in 10s")
	}
}

// TestPerRequestReply_AsTheSDK: the lane's encoding of a result for a
// request of protocol 2026-07-28 is, byte for byte, what the SDK's path
// (with encodeOnce) writes for it: results encodeOnce renders, results it
// leaves to the SDK's own encoding, _meta of the result's own (naming the
// server or not), input-required results (with questions whose text the
// SDK escapes, none while the server sheds load) and the SDK's error for a
// result that both has content and asks.
func TestPerRequestReply_AsTheSDK(t *testing.T) {
	t.Parallel()
	ask := &mcp.ElicitParams{Mode: "form", Message: "<approve> & go", RequestedSchema: map[string]any{"type": "object"}}
	for name, res := range map[string]*mcp.CallToolResult{
		"text":            {Content: []mcp.Content{&mcp.TextContent{Text: "a <b> & \"c\" é"}}, StructuredContent: map[string]any{"code": "x"}},
		"no content":      {},
		"image":           {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, IsError: true},
		"meta":            {Meta: mcp.Meta{"k": "<v>"}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		"meta names":      {Meta: mcp.Meta{mcp.MetaKeyServerInfo: "other"}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}},
		"annotated":       {Content: []mcp.Content{&mcp.TextContent{Text: "<x>", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"link":            {Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///x", Name: "x"}}, Meta: mcp.Meta{"k": 1}},
		"link, no meta":   {Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///x", Name: "<x>"}}},
		"input required":  {InputRequests: mcp.InputRequestMap{"q": ask}, RequestState: "s<1>"},
		"input, meta":     {InputRequests: mcp.InputRequestMap{"q": ask}, RequestState: "s", Meta: mcp.Meta{"k": "v"}},
		"load shed":       {InputRequests: mcp.InputRequestMap{}},
		"content and ask": {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, InputRequests: mcp.InputRequestMap{"q": ask}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			impl := &mcp.Implementation{Name: "test <1>", Version: "0"}
			line, ss := callPerRequest(t, impl, res)
			var want struct {
				Result json.RawMessage
				Error  *jsonrpc.Error
			}
			if err := json.Unmarshal(line, &want); err != nil {
				t.Fatal(err)
			}
			s := &Server{impl: impl, serverInfo: mcp.Meta{mcp.MetaKeyServerInfo: impl}}
			c := *res
			c.Meta = maps.Clone(res.Meta)
			id, _ := jsonrpc.MakeID("call")
			r := s.perRequestReply(id, &c, ss)
			defer r.release()
			if want.Error != nil {
				if err := r.resp.Error; err == nil || err.Error() != want.Error.Error() {
					t.Errorf("error %v, the SDK's %v", err, want.Error)
				}
				return
			}
			if r.resp.Error != nil {
				t.Fatal(r.resp.Error)
			}
			// The whole message, where the lane wrote it; else the result.
			if r.msg != nil {
				if got := bytes.TrimSuffix(r.line(), []byte("\n")); !bytes.Equal(got, line) {
					t.Errorf("the lane's:\n%s\nthe SDK's:\n%s", got, line)
				}
			} else if !bytes.Equal(r.resp.Result, want.Result) {
				t.Errorf("the lane's:\n%s\nthe SDK's:\n%s", r.resp.Result, want.Result)
			}
			if !maps.Equal(c.Meta, res.Meta) && len(res.Meta) > 0 {
				t.Errorf("the result's _meta became %v", c.Meta)
			}
		})
	}
}

// callPerRequest serves one tool that returns res, through the SDK's path
// with encodeOnce, to a client of protocol 2026-07-28, and returns the line
// the server wrote in answer to a call of it and the session.
func callPerRequest(t *testing.T, impl *mcp.Implementation, res *mcp.CallToolResult) ([]byte, *mcp.ServerSession) {
	t.Helper()
	srv := mcp.NewServer(impl, nil)
	var ss *mcp.ServerSession
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ss = req.Session
			c := *res // the SDK marks the result it is handed
			c.Meta = maps.Clone(res.Meta)
			return &c, nil
		})
	srv.AddReceivingMiddleware(encodeOnce)
	_, inW, outR := runOnPipes(t, srv)
	meta := perRequest(multiRoundTripVersion, "")
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":`+meta+`}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"t","_meta":`+meta+`,"arguments":{}}}`+"\n")
	}()
	t.Cleanup(func() { go io.Copy(io.Discard, outR) }) // before the server's end
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	var seen []string
	for sc.Scan() {
		var m struct{ ID any }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID == "call" {
			return append([]byte(nil), sc.Bytes()...), ss
		}
		seen = append(seen, sc.Text())
	}
	t.Fatalf("no answer to the call (%v); the server wrote:\n%s", sc.Err(), strings.Join(seen, "\n"))
	return nil, nil
}
