package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/session"
)

// laneFront serves s over HTTP, with its call lane or, lane false, with
// the SDK's handler alone.
func laneFront(t *testing.T, s *Server, lane bool) (url string, f *HTTPFront) {
	t.Helper()
	f, err := NewHTTPFront(HTTPOptions{Token: testToken, SessionIdle: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.Attach(s)
	if !lane {
		f.mcp.Load().lane = nil
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		for ss := range s.server.Sessions() {
			s.cancelCalls(ss.ID())
		}
	})
	return srv.URL + MCPPath, f
}

// post is one request of a conversation: a body, headers that differ
// from a plain client's ("" drops one), and the client's answer to a
// question the call puts (after the id: a "result" or an "error"; ""
// accepts, once).
type post struct {
	body   string
	hdr    map[string]string
	answer string
}

// streamID is the stream part of an SSE event id, random on both paths.
var streamID = regexp.MustCompile(`(?m)^id: [A-Z2-7]{26}_`)

// askID is the id of an elicitation request: a number of the SDK's
// session, a string of the lane's own.
var askID = regexp.MustCompile(`"id":("yagent-ask-[A-Z2-7]{26}"|[0-9]+),"method":"elicitation/create"`)

// talkHTTP opens a session of protocol version (able to elicit, with
// elicit), lists the tools, then sends each post in turn and returns, for
// each, what a client sees of its answer: the status, the headers a client
// reads and the body, stream and question ids replaced. An elicitation on
// an answer's stream is accepted once, by a POST of its own, whose status
// follows the body. An answer in a JSON body (the lane's to a call done
// before its stream opened) is shown as the stream that carries it alone,
// and counted in jsonBodies.
func talkHTTP(t *testing.T, url, version string, elicit bool, posts []post) (seen []string, jsonBodies int) {
	t.Helper()
	// A stream that does not end (a question whose answer never arrives)
	// fails the test in 10s.
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	send := func(p post, session string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(p.body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(sessionHeader, session)
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		for k, v := range p.hdr {
			if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
		return client.Do(req)
	}
	caps := `{}`
	if elicit {
		caps = `{"elicitation":{}}`
	}
	resp, err := send(post{body: fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"t","version":"0"}}}`, version, caps)}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get(sessionHeader)
	if session == "" {
		t.Fatal("initialize: no session id")
	}
	for _, b := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`} {
		resp, err := send(post{body: b}, session)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var out []string
	for _, p := range posts {
		resp, err := send(p, session)
		if err != nil {
			t.Fatal(err)
		}
		var answers []string
		var body strings.Builder
		br := bufio.NewReader(resp.Body)
		var event strings.Builder
		for {
			line, err := br.ReadString('\n')
			body.WriteString(line)
			event.WriteString(line)
			if line == "\n" {
				if data, ok := strings.CutPrefix(lastLine(event.String(), "data: "), "data: "); ok {
					var m struct {
						ID     json.RawMessage
						Method string
					}
					_ = json.Unmarshal([]byte(data), &m)
					if m.Method == "elicitation/create" {
						answer := p.answer
						if answer == "" {
							answer = `"result":{"action":"accept","content":{"scope":"once"}}`
						}
						r, err := send(post{body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, answer)}, session)
						if err != nil {
							t.Fatal(err)
						}
						b, _ := io.ReadAll(r.Body)
						r.Body.Close()
						answers = append(answers, fmt.Sprintf("the answer: %d %q", r.StatusCode, b))
					}
				}
				event.Reset()
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		ids := streamID.ReplaceAllString(body.String(), "id: S_")
		contentType, cacheControl := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control")
		if resp.StatusCode == http.StatusOK && contentType == "application/json" {
			jsonBodies++
			contentType, cacheControl = "text/event-stream", "no-cache, no-transform"
			idx := 0
			if version >= protocolPrime {
				ids = "event: prime\nid: S_0\ndata: \n\n"
				idx = 1
			} else {
				ids = ""
			}
			ids += fmt.Sprintf("event: message\nid: S_%d\ndata: %s\n\n", idx, body.String())
		}
		out = append(out, fmt.Sprintf("%d content-type=%q cache-control=%q session=%q\n%s%s",
			resp.StatusCode, contentType, cacheControl, resp.Header.Get(sessionHeader),
			askID.ReplaceAllString(ids, `"id":Q,"method":"elicitation/create"`), strings.Join(answers, "\n")))
	}
	return out, jsonBodies
}

// lastLine is the line of s that starts with prefix, or "".
func lastLine(s, prefix string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// deferringAnswerer puts its questions on the call's result as
// inputAnswerer does, but is not one: the lane takes its session's calls
// and meets a question only once the call runs.
type deferringAnswerer struct{ inputAnswerer }

// TestHTTPLane_AnswersAsTheSDKPath: each POST the lane takes is answered as
// the SDK's handler answers it (status, headers, the events with their
// ids, the stream's random part aside; an answer in a JSON body as the
// stream that would carry it alone) and reaches no SDK request path:
// plain calls, calls with a progress token (their progress on the call's
// stream), and the calls of a client that can elicit, whose questions go
// on the call's stream and whose answers, POSTed, the lane takes (the
// question's id aside). Those it leaves (params or keys it does not know,
// headers it does not plainly pass) reach the SDK's path and are answered
// as before, as does a call that stops on a question for a client that
// cannot be asked.
func TestHTTPLane_AnswersAsTheSDKPath(t *testing.T) {
	t.Parallel()
	taken := []post{
		{body: call(`2`, `{"name":"echo","arguments":{"x":"a <b> & \"c\" é"}}`)},
		{body: call(`"s-3"`, `{"name":"echo","arguments":{"image":true}}`)},
		{body: call(`5`, `{"name":"echo"}`)},
		{body: call(`6`, `{"name":"echo","arguments":null}`)},
		{body: call(`7`, `{"name":"nope","arguments":{}}`)},
		{body: call(`8`, `{"name":"ask","arguments":{"y":2}}`)},
		{body: call(`12`, `{"name":"echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"},"arguments":{}}`)},
		{body: call(`13`, `{"name":"echo","_meta":{"traceparent":"junk","tracestate":7},"arguments":{}}`)},
		{body: " \n" + call(`14`, `{"name":"echo","arguments":{}}`) + "\n", hdr: map[string]string{"Accept": "text/*, application/json;q=0.9"}},
		{body: call(`15`, `{"name":"echo","_meta":{"progressToken":"p1"},"arguments":{}}`)},
		{body: call(`16`, `{"name":"echo","_meta":{"progressToken":7},"arguments":{"progress":true}}`)},
	}
	asked := []post{
		taken[0], taken[5], taken[1], taken[10],
		{body: call(`17`, `{"name":"ask","_meta":{"progressToken":"q"},"arguments":{"progress":1}}`)},
		{body: call(`18`, `{"name":"ask","arguments":{}}`), answer: `"result":{"action":"accept","content":{"scope":"forever"}}`},
		{body: call(`19`, `{"name":"ask","arguments":{}}`), answer: `"result":{"action":"accept","content":{}}`},
		{body: call(`20`, `{"name":"ask","arguments":{}}`), answer: `"result":{"action":"decline"}`},
		{body: call(`21`, `{"name":"ask","arguments":{}}`), answer: `"error":{"code":-32000,"message":"the user closed the dialog"}`},
	}
	left := []post{
		{body: call(`21`, `{"name":"echo","_meta":{"other":1},"arguments":{}}`)},
		{body: call(`22`, `{"name":"echo","arguments":{},"task":{}}`)},
		{body: `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"echo"},"extra":1}`},
		{body: call(`24`, `{"name":"echo","name":"ask"}`)},
		{body: call(`25`, `{"name":"echo"}`), hdr: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{body: call(`26`, `{"name":"echo"}`), hdr: map[string]string{"Mcp-Protocol-Version": "2025-03-26"}},
		{body: call(`27`, `{"name":"echo"}`), hdr: map[string]string{"Mcp-Protocol-Version": ""}},
		{body: call(`28`, `{"name":"echo"}`), hdr: map[string]string{"Accept": "application/json"}},
		{body: `[` + call(`29`, `{"name":"echo"}`) + `]`},
	}
	asking := deferringAnswerer{}
	for _, tc := range []struct {
		name         string
		version      string
		elicit       bool
		opts         *Options
		posts        []post
		wantSDKCalls int64
		// wantJSON counts the lane's answers in a JSON body: those to the
		// calls that wrote nothing before (no progress, no question).
		wantJSON int
	}{
		{"taken, primed", "2025-11-25", false, nil, taken, 0, 10},
		{"taken, no priming event", "2025-06-18", false, nil, taken, 0, 10},
		{"left", "2025-11-25", false, nil, left, 7, 0}, // the batch and the charset fail before a call
		{"a client that elicits", "2025-11-25", true, nil, asked, 0, 2},
		{"a client that elicits, no priming event", "2025-06-18", true, nil, asked, 0, 2},
		{"a question met on the lane", "2025-11-25", true,
			&Options{Answerer: func(*mcp.ServerSession) session.Answerer { return asking }},
			[]post{taken[0], taken[5], taken[1]}, 0, 2},
		{"a question for a client that cannot elicit", "2025-11-25", false,
			&Options{Answerer: func(*mcp.ServerSession) session.Answerer { return asking }},
			[]post{taken[0], taken[5], taken[1]}, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, sdkCalls := laneServerWith(t, tc.opts)
			url, _ := laneFront(t, srv, true)
			got, jsonBodies := talkHTTP(t, url, tc.version, tc.elicit, tc.posts)
			if n := sdkCalls.Load(); n != tc.wantSDKCalls {
				t.Errorf("%d calls took the SDK's path, want %d", n, tc.wantSDKCalls)
			}
			if jsonBodies != tc.wantJSON {
				t.Errorf("%d answers in a JSON body, want %d", jsonBodies, tc.wantJSON)
			}
			plain, _ := laneServerWith(t, tc.opts)
			plainURL, _ := laneFront(t, plain, false)
			want, _ := talkHTTP(t, plainURL, tc.version, tc.elicit, tc.posts)
			for i := range tc.posts {
				if got[i] != want[i] {
					t.Errorf("%s\nthrough the lane:\n%s\nthrough the SDK's path:\n%s", tc.posts[i].body, got[i], want[i])
				}
			}
		})
	}
}

// laneSession opens a session of protocol 2025-11-25 with raw requests and
// lists its tools, so that its calls may take the lane.
func laneSession(t *testing.T, url string) string {
	t.Helper()
	return laneSessionWith(t, url, `{}`)
}

// laneSessionWith is laneSession for a client of capabilities caps.
func laneSessionWith(t *testing.T, url, caps string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"0"}}}`))
	id := laneDo(t, req, "").Header.Get(sessionHeader)
	if id == "" {
		t.Fatal("initialize: no Mcp-Session-Id in the answer")
	}
	for _, b := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`} {
		req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(b))
		laneDo(t, req, id)
	}
	return id
}

func sessionRequest(t *testing.T, ctx context.Context, method, url, body, id string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set(sessionHeader, id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return req
}

// laneDo sends req with a session's headers and reads its answer whole.
func laneDo(t *testing.T, req *http.Request, id string) *http.Response {
	t.Helper()
	req = sessionRequest(t, req.Context(), req.Method, req.URL.String(), bodyOf(req), id)
	resp, err := freshClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.Method, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp
}

func bodyOf(req *http.Request) string {
	if req.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(req.Body)
	return string(b)
}

// countSDKCalls counts the tools/call requests of s that take the SDK's
// request path.
func countSDKCalls(s *Server) *atomic.Int64 {
	n := new(atomic.Int64)
	s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return n
}

// sseEvents reads the events of an event stream onto a channel.
func sseEvents(body io.ReadCloser) <-chan map[string]string {
	ch := make(chan map[string]string, 16)
	go func() {
		defer close(ch)
		defer body.Close()
		br := bufio.NewReader(body)
		ev := map[string]string{}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			if line == "" {
				ch <- ev
				ev = map[string]string{}
				continue
			}
			k, v, _ := strings.Cut(line, ": ")
			ev[k] = v
		}
	}()
	return ch
}

func nextEvent(t *testing.T, ch <-chan map[string]string, what string) map[string]string {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("the stream ended before %s", what)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
	}
	return nil
}

// TestHTTPLane_LongCallResumedAndCancelled: a call on the lane that runs
// past primeAfter opens its stream with the priming event; a client whose
// connection then drops resumes the stream with a GET from that event's
// id, which waits for the answer; a notifications/cancelled ends the call,
// whose answer the resumed stream then carries, and the event store keeps
// as it was through later calls.
func TestHTTPLane_LongCallResumedAndCancelled(t *testing.T) {
	t.Parallel()
	s, b := newBlockingServer(t)
	sdkCalls := countSDKCalls(s)
	url, _ := laneFront(t, s, true)
	id := laneSession(t, url)

	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	resp, err := freshClient.Do(sessionRequest(t, ctx, http.MethodPost, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`, id))
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("a long call: %d %q, want 200 and an event stream", resp.StatusCode, ct)
	}
	prime := nextEvent(t, sseEvents(resp.Body), "the priming event")
	if prime["event"] != "prime" || !strings.HasSuffix(prime["id"], "_0") {
		t.Fatalf("first event %v; want a priming event with an id", prime)
	}
	b.wait(t, b.started, "started")
	drop()

	// Until the server has seen the first connection drop, the stream is
	// still held and a GET gets 409, as from the SDK: the client tries
	// again, as a client's reconnection would.
	var resumed chan *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; {
		get := sessionRequest(t, context.Background(), http.MethodGet, url, "", id)
		get.Header.Set("Last-Event-ID", prime["id"])
		resumed = make(chan *http.Response, 1)
		go func() {
			r, err := freshClient.Do(get)
			if err != nil {
				t.Error(err)
				close(resumed)
				return
			}
			resumed <- r
		}()
		select {
		case r := <-resumed:
			if r == nil {
				t.FailNow()
			}
			if r.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
				r.Body.Close()
				time.Sleep(10 * time.Millisecond)
				continue
			}
			t.Fatalf("the resumed stream answered (%d) before the call ended", r.StatusCode)
		case <-time.After(100 * time.Millisecond):
		}
		break
	}
	cancel, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`))
	if code := laneDo(t, cancel, id).StatusCode; code != http.StatusAccepted {
		t.Errorf("notifications/cancelled: %d, want 202", code)
	}
	b.wait(t, b.ended, "ended by notifications/cancelled")
	var r *http.Response
	select {
	case r = <-resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed stream did not answer within 10s of the call's end")
	}
	if r == nil {
		return
	}
	answer := nextEvent(t, sseEvents(r.Body), "the answer")
	stream, _, _ := strings.Cut(prime["id"], "_")
	if answer["id"] != stream+"_1" || !strings.Contains(answer["data"], `"id":2,"result"`) {
		t.Errorf("resumed: %v; want the answer to call 2 with id %s_1", answer, stream)
	}
	if n := sdkCalls.Load(); n != 0 {
		t.Errorf("%d calls took the SDK's path, want 0", n)
	}

	// The stored answer is the store's own: later calls, whose answers
	// are encoded in the buffers call 2's was, leave it as it was.
	for n := 3; n <= 10; n++ {
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := freshClient.Do(sessionRequest(t, ctx, http.MethodPost, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block","arguments":{}}}`, n), id))
		if err != nil {
			t.Fatal(err)
		}
		b.wait(t, b.started, "started")
		stop, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, n)))
		laneDo(t, stop, id)
		b.wait(t, b.ended, "ended by notifications/cancelled")
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
	}
	again := sessionRequest(t, context.Background(), http.MethodGet, url, "", id)
	again.Header.Set("Last-Event-ID", prime["id"])
	r2, err := freshClient.Do(again)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Body.Close()
	if stored := nextEvent(t, sseEvents(r2.Body), "the stored answer"); stored["data"] != answer["data"] {
		t.Errorf("the stored answer became %q; want %q", stored["data"], answer["data"])
	}
}

// TestHTTPLane_DuplicateIDRefused: a call whose id is that of a call in
// flight is refused as the SDK refuses it, whichever path each takes: the
// lane's call and a second on the lane, the SDK's and a second on the lane,
// the lane's and a second the lane passes on to the SDK (a _meta key it
// does not know), and a tools/list of that id.
func TestHTTPLane_DuplicateIDRefused(t *testing.T) {
	t.Parallel()
	const (
		lanes = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`
		sdks  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","_meta":{"other":1},"arguments":{}}}`
		list  = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		// unread is a call the SDK runs and the lane does not read as its
		// own: a key the lane does not know beside the message's.
		unread = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}},"extra":1}`
	)
	for _, tc := range []struct {
		name, first, second string
		hdr                 map[string]string // the second's, "" drops one
	}{
		{"the lane's, then the lane", lanes, lanes, nil},
		{"the SDK's, then the lane", sdks, lanes, nil},
		{"the lane's, then the SDK", lanes, sdks, nil},
		{"the lane's, then a tools/list", lanes, list, nil},
		{"the lane's, then one the lane does not read", lanes, unread, nil},
		{"the lane's, then one without a protocol version", lanes, lanes, map[string]string{"Mcp-Protocol-Version": ""}},
		{"one the lane does not read, then the lane", unread, lanes, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answers := map[bool]string{}
			for _, lane := range []bool{true, false} {
				s, b := newBlockingServer(t)
				sdkCalls := countSDKCalls(s)
				url, _ := laneFront(t, s, lane)
				id := laneSession(t, url)
				ctx, drop := context.WithCancel(context.Background())
				go func() {
					if resp, err := freshClient.Do(sessionRequest(t, ctx, http.MethodPost, url, tc.first, id)); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}()
				b.wait(t, b.started, "started")
				// A second call let run would block: 10 s fail the test.
				tctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
				req := sessionRequest(t, tctx, http.MethodPost, url, tc.second, id)
				for k, v := range tc.hdr {
					if v == "" {
						req.Header.Del(k)
					} else {
						req.Header.Set(k, v)
					}
				}
				resp, err := freshClient.Do(req)
				if err != nil {
					t.Fatalf("the second call: %v", err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				stop()
				answers[lane] = fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
				if want := int64(strings.Count(tc.first, "other") + strings.Count(tc.first, "extra")); lane && sdkCalls.Load() != want { // the second never runs
					t.Errorf("%d calls took the SDK's path, want %d", sdkCalls.Load(), want)
				}
				drop()
				s.cancelCalls(id)
				b.wait(t, b.ended, "ended")
			}
			if answers[true] != answers[false] {
				t.Errorf("a second call with the id of one in flight:\nthrough the lane: %s\nthrough the SDK: %s", answers[true], answers[false])
			}
			if !strings.HasPrefix(answers[true], "400 ") {
				t.Errorf("a second call with the id of one in flight: %s, want 400", answers[true])
			}
		})
	}
}

// TestHTTPLane_DeleteEndsTheCallInFlight: a DELETE cancels the lane's call
// of its session, and the session's end is told once the call returned.
func TestHTTPLane_DeleteEndsTheCallInFlight(t *testing.T) {
	t.Parallel()
	ended := make(chan string, 2)
	var b *blocker
	s, b := newBlockingServerWith(t, &Options{OnSessionEnd: func(_ context.Context, id string) {
		if b.returns.Load() == 0 {
			t.Errorf("OnSessionEnd(%q) ran before the session's call returned", id)
		}
		ended <- id
	}})
	sdkCalls := countSDKCalls(s)
	url, _ := laneFront(t, s, true)
	id := laneSession(t, url)
	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	go func() {
		if resp, err := freshClient.Do(sessionRequest(t, ctx, http.MethodPost, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`, id)); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	b.wait(t, b.started, "started")
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	if code := laneDo(t, req, id).StatusCode; code != http.StatusNoContent {
		t.Fatalf("DELETE: %d, want 204", code)
	}
	b.wait(t, b.ended, "cancelled by DELETE")
	select {
	case got := <-ended:
		if got != id {
			t.Errorf("OnSessionEnd(%q), want %q", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnSessionEnd did not run within 10s of DELETE")
	}
	if n := sdkCalls.Load(); n != 0 {
		t.Errorf("%d calls took the SDK's path, want 0", n)
	}
	waitSessions(t, s, 0, "after DELETE")
}

// TestHTTPLane_QuestionEndsWithTheSession: a question the lane put on a
// call's stream waits for its answer only while the session lives: a
// DELETE ends the call, which answers, and the session's end is told.
func TestHTTPLane_QuestionEndsWithTheSession(t *testing.T) {
	t.Parallel()
	ended := make(chan string, 1)
	s, sdkCalls := laneServerWith(t, &Options{OnSessionEnd: func(_ context.Context, id string) { ended <- id }})
	url, _ := laneFront(t, s, true)
	id := laneSessionWith(t, url, `{"elicitation":{}}`)
	resp, err := freshClient.Do(sessionRequest(t, context.Background(), http.MethodPost, url, call(`2`, `{"name":"ask","arguments":{}}`), id))
	if err != nil {
		t.Fatal(err)
	}
	events := sseEvents(resp.Body)
	nextEvent(t, events, "the priming event")
	if q := nextEvent(t, events, "the question"); !strings.Contains(q["data"], `"method":"elicitation/create"`) {
		t.Fatalf("second event %v, want the question", q)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	laneDo(t, req, id)
	answer := nextEvent(t, events, "the call's answer")
	if !strings.Contains(answer["data"], `"id":2,"error"`) {
		t.Errorf("answer %v, want an error answer to call 2", answer)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the session's end was not told within 10s of its DELETE")
	}
	if n := sdkCalls.Load(); n != 0 {
		t.Errorf("%d calls took the SDK's path, want 0", n)
	}
}

// TestHTTPLane_IDFreeOnceTheSDKAnswered: the id of a request the lane
// passed on to the SDK counts as in flight only until the SDK has
// answered it: a call of that id then takes the lane.
func TestHTTPLane_IDFreeOnceTheSDKAnswered(t *testing.T) {
	t.Parallel()
	s, b := newBlockingServer(t)
	url, _ := laneFront(t, s, true)
	id := laneSession(t, url)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","_meta":{"other":1},"arguments":{}}}`
		if resp, err := freshClient.Do(sessionRequest(t, context.Background(), http.MethodPost, url, body, id)); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	b.wait(t, b.started, "started on the SDK's path")
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`))
	laneDo(t, req, id)
	b.wait(t, b.ended, "ended")
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the SDK did not answer the cancelled call within 10s")
	}
	refused := make(chan string, 1)
	go func() {
		resp, err := freshClient.Do(sessionRequest(t, context.Background(), http.MethodPost, url,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`, id))
		if err == nil {
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused <- fmt.Sprintf("%d %s", resp.StatusCode, got)
		}
	}()
	select {
	case <-b.started:
	case r := <-refused:
		t.Fatalf("a call of the id the SDK had answered: %s, want it run", r)
	case <-time.After(10 * time.Second):
		t.Fatal("a call of the id the SDK had answered did not start within 10s")
	}
	s.cancelCalls(id)
	b.wait(t, b.ended, "ended")
}

// TestHTTPLane_QuestionResumedAfterADrop: a client that elicits and whose
// connection drops while the call's question waits resumes the call's
// stream with a GET from the priming event, finds the question there,
// answers it, and gets the call's answer on that GET, as from the SDK's
// path (status, headers, events; the stream's and the question's ids
// aside); GETs that may not take the stream (another session's, one
// while the POST holds it, one that takes no event stream) are refused as
// the SDK refuses them. Before, the lane held such a GET until the call ended, and
// the call waited for an answer the client never saw.
func TestHTTPLane_QuestionResumedAfterADrop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body string
	}{
		{"a question", call(`2`, `{"name":"ask","arguments":{}}`)},
		{"a question, then progress", call(`3`, `{"name":"ask","_meta":{"progressToken":"p"},"arguments":{"progress":1}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, sdkCalls := laneServerWith(t, nil)
			url, _ := laneFront(t, s, true)
			got := dropAndResume(t, url, tc.body)
			if n := sdkCalls.Load(); n != 0 {
				t.Errorf("%d calls took the SDK's path, want 0", n)
			}
			plain, _ := laneServerWith(t, nil)
			plainURL, _ := laneFront(t, plain, false)
			if want := dropAndResume(t, plainURL, tc.body); got != want {
				t.Errorf("through the lane:\n%s\nthrough the SDK's path:\n%s", got, want)
			}
		})
	}
}

// dropAndResume opens a session of a client that elicits, POSTs body,
// GETs the stream in ways that do not take it, drops the connection after
// the priming event, resumes the stream with a GET and answers the
// question found there, and returns what the clients saw of the GETs and
// the answer's POST.
func dropAndResume(t *testing.T, url, body string) string {
	t.Helper()
	id := laneSessionWith(t, url, `{"elicitation":{}}`)
	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	resp, err := freshClient.Do(sessionRequest(t, ctx, http.MethodPost, url, body, id))
	if err != nil {
		t.Fatal(err)
	}
	prime := nextEvent(t, sseEvents(resp.Body), "the priming event")
	if prime["event"] != "prime" {
		t.Fatalf("first event %v; want the priming event", prime)
	}
	// GETs that do not take the stream, each bounded by 10s: one whose
	// Accept names no event stream, one while the POST holds the stream,
	// and (after the drop) one of another session.
	var out string
	refused := func(what, session string, hdr map[string]string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := sessionRequest(t, ctx, http.MethodGet, url, "", session)
		req.Header.Set("Last-Event-ID", prime["id"])
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := freshClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out += fmt.Sprintf("%s: %d %q\n", what, resp.StatusCode, b)
	}
	refused("a GET that takes no event stream", id, map[string]string{"Accept": "application/json"})
	refused("a GET while the POST holds the stream", id, nil)
	drop()
	refused("another session's GET", laneSessionWith(t, url, `{"elicitation":{}}`), nil)

	// The server may not have seen the drop yet: a GET that finds the
	// stream still held is refused 409, on both paths, and sent again.
	// A GET that does not end (a call that waits for an answer to a
	// question the client never saw) fails the test in 10s.
	getCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var get *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; {
		req := sessionRequest(t, getCtx, http.MethodGet, url, "", id)
		req.Header.Set("Last-Event-ID", prime["id"])
		if get, err = freshClient.Do(req); err != nil {
			t.Fatal(err)
		}
		if get.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			break
		}
		get.Body.Close()
		time.Sleep(5 * time.Millisecond)
	}
	out += fmt.Sprintf("GET: %d content-type=%q cache-control=%q\n", get.StatusCode, get.Header.Get("Content-Type"), get.Header.Get("Cache-Control"))
	events := sseEvents(get.Body)
	for ev := range events {
		out += fmt.Sprintf("event=%s id=%s data=%s\n", ev["event"], streamID.ReplaceAllString("id: "+ev["id"], "id: S_")[4:],
			askID.ReplaceAllString(ev["data"], `"id":Q,"method":"elicitation/create"`))
		var m struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.Unmarshal([]byte(ev["data"]), &m)
		if m.Method != "elicitation/create" {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"scope":"once"}}}`, m.ID)))
		r := laneDo(t, req, id)
		b, _ := io.ReadAll(r.Body)
		out += fmt.Sprintf("the answer: %d %q\n", r.StatusCode, b)
	}
	return out
}
