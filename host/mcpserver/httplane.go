package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP lane is the call lane (lane.go) of `serve --http`: a POST that
// carries one plain tools/call of a live, initialized session is answered
// in the request's own goroutine, beside the SDK's StreamableHTTPHandler.
// On the SDK's path the body is decoded three times over with a fresh
// 32 KiB decoder buffer each (the batch, the _meta, the params), the result
// marshalled once more, and the request passed through four goroutines;
// the answer goes out as two server-sent events, each flushed on its own.
//
// The lane answers as the SDK would, with the same headers and the same
// events: a priming event when the protocol has them (2025-11-25 and on),
// then the answer, both with the ids the SDK gives them and both kept in
// the front's event store, so that a client whose stream drops resumes it
// with Last-Event-ID as before: through the lane while the call runs
// (resume), through the SDK after. The stream opens only when the call
// takes longer than primeAfter or writes something before its answer; a
// call done before is answered with a JSON body (laneStream).
//
// It takes a request only where the SDK would do nothing but run the tool
// and answer on the request's stream:
//   - the request passes what the SDK checks first (Content-Type exactly
//     application/json, an Accept naming both JSON and an event stream, no
//     Last-Event-ID, a Host that is loopback when the listener is) and
//     names the protocol version the session was initialized with, one
//     before 2026-07-28;
//   - the body is one JSON-RPC request, nothing but jsonrpc, id, method and
//     params in it, a tools/call whose params decodeLaneParams takes and
//     whose _meta holds none of the per-request keys of protocol
//     2026-07-28;
//   - the session's host state exists (its first call or tools/list went
//     through the SDK).
//
// What the SDK's path writes on a call's stream before its answer, the lane
// writes on its own, as events of the same form, ids and store: the call's
// progress, for a call with a progress token, and the questions put to a
// client that can elicit (elicitation/create, under an id of the lane's,
// "yagent-ask-" and a random part). The POST that carries the client's
// answer to such a question is taken by the lane too (answered) and said
// 202 Accepted, as the SDK says it.
//
// Anything else, and a call that stops on a question for a client that
// cannot be asked, before anything was written, goes on to the SDK with its
// body as it came. A notifications/cancelled also cancels the lane's call it
// names, and goes on to the SDK too. The SDK refuses a call whose id is
// that of one in flight, and each path sees only its own: the lane counts
// the ids of the requests it passes on until the SDK has answered them
// (those of every POST of a live session, read leniently where the lane
// does not take the body as its own: requestIDs), refuses a call of such
// an id, and refuses to pass on a request of the id of a call it runs,
// with the SDK's words.

// primeAfter is how long the lane holds back a call's stream: a call that
// ends before is answered with a JSON body; one that runs longer opens its
// stream then, with the priming event, so that a client whose connection
// drops during a long call has an event id to resume from, as with the SDK.
const primeAfter = 10 * time.Millisecond

// protocolPrime is the first protocol version whose streams open with a
// priming event (SEP-1699), as the SDK writes them.
const protocolPrime = "2025-11-25"

// httpLane is the HTTP front's call lane.
type httpLane struct {
	s     *Server
	store mcp.EventStore
	// primeAfter is primeAfter, shorter in tests.
	primeAfter time.Duration

	mu sync.Mutex
	// running are the lane's streams whose call runs, by stream id: a GET
	// that resumes one takes it over (resume), as it would the SDK's.
	running map[string]*laneStream
}

func newHTTPLane(s *Server, store mcp.EventStore) *httpLane {
	return &httpLane{s: s, store: store, primeAfter: primeAfter, running: map[string]*laneStream{}}
}

// laneCalls are the calls a session's lane runs: Wait returns once they
// have returned. The stdio lane's is a *sync.WaitGroup.
type laneCalls interface{ Wait() }

// httpLaneSession is the lane's state of one MCP session, kept in
// Server.lanes: the calls it runs, so that the session's end waits for
// them.
type httpLaneSession struct {
	id    string
	store mcp.EventStore
	ended context.Context // done when the session ends
	wg    sync.WaitGroup

	mu   sync.Mutex
	runs map[jsonrpc.ID]context.CancelFunc
	// sdk counts the requests the lane passed on to the SDK's path, by id,
	// until the SDK answered them: the SDK refuses a call whose id is in
	// flight, and each path sees only its own.
	sdk map[jsonrpc.ID]int
	// asks are the lane's questions waiting for the client's answer, by
	// the id of the elicitation request that put each.
	asks map[string]chan *jsonrpc.Response
}

// inFlightLocked says whether a request of id runs on either path. l.mu
// is held.
func (l *httpLaneSession) inFlightLocked(id jsonrpc.ID) bool {
	_, lane := l.runs[id]
	return lane || l.sdk[id] > 0
}

// passOn counts ids in flight on the SDK's path, unless the lane runs a
// call of one of them, which it refuses as the SDK would (true): the SDK
// refuses a POST whose requests name any id in flight. release ends the
// count once the SDK has answered.
func (l *httpLaneSession) passOn(w http.ResponseWriter, ids ...jsonrpc.ID) (refused bool, release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, lane := l.runs[id]; lane {
			writeDuplicateID(w, id)
			return true, nil
		}
	}
	for _, id := range ids {
		l.sdk[id]++
	}
	return false, l.answeredBySDK(ids...)
}

// answeredBySDK returns the func that ends the count of requests of ids
// on the SDK's path.
func (l *httpLaneSession) answeredBySDK(ids ...jsonrpc.ID) func() {
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, id := range ids {
			if l.sdk[id]--; l.sdk[id] <= 0 {
				delete(l.sdk, id)
			}
		}
	}
}

// passOnAll is passOn for a body the lane does not take as its own (its
// headers, its protocol version or its form are not what the lane plainly
// passes): the SDK may still run its requests.
func (h *httpLane) passOnAll(w http.ResponseWriter, ss *mcp.ServerSession, body []byte) (refused bool, release func()) {
	ids := requestIDs(body)
	if len(ids) == 0 {
		return false, nil
	}
	l, ok := h.s.httpLaneState(ss, h.store)
	if !ok {
		return false, nil
	}
	return l.passOn(w, ids...)
}

// requestIDs are the ids of the requests in body, one JSON-RPC message or
// a batch of them, read leniently: the SDK may run what the lane's strict
// reading leaves. The body is bounded (HTTPOptions.MaxBody), and
// encoding/json bounds its depth.
func requestIDs(body []byte) []jsonrpc.ID {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		raws = []json.RawMessage{body}
	}
	var ids []jsonrpc.ID
	for _, raw := range raws {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method == "" || m.ID == nil {
			continue
		}
		v, err := parseID(m.ID)
		if err != nil || v == nil {
			continue
		}
		if id, err := requestID(v); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// writeDuplicateID refuses a call whose id is in flight, as the SDK's
// handler does.
func writeDuplicateID(w http.ResponseWriter, id jsonrpc.ID) {
	writeJSONRPCError(w, http.StatusBadRequest, id, &jsonrpc.Error{
		Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw())})
}

// Wait waits for the session's lane calls, then drops what they stored
// after the SDK forgot the session.
func (l *httpLaneSession) Wait() {
	l.wg.Wait()
	_ = l.store.SessionClosed(context.Background(), l.id)
}

// httpLaneState returns the lane state of ss, or false when the session
// has no host state yet (its first call or tools/list goes through the
// SDK), or has ended.
func (s *Server) httpLaneState(ss *mcp.ServerSession, store mcp.EventStore) (*httpLaneSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpLaneStateLocked(ss, store)
}

// enterHTTPLane is httpLaneState with one more call counted (l.wg), under
// the lock the session's end takes before it waits for them.
func (s *Server) enterHTTPLane(ss *mcp.ServerSession, store mcp.EventStore) (*httpLaneSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.httpLaneStateLocked(ss, store)
	if ok {
		l.wg.Add(1)
	}
	return l, ok
}

func (s *Server) httpLaneStateLocked(ss *mcp.ServerSession, store mcp.EventStore) (*httpLaneSession, bool) {
	hs := s.sessions[ss]
	if hs == nil || hs.ended.Err() != nil {
		return nil, false
	}
	switch cur := s.lanes[ss].(type) {
	case nil:
		l := &httpLaneSession{id: ss.ID(), store: store, ended: hs.ended, runs: map[jsonrpc.ID]context.CancelFunc{},
			sdk: map[jsonrpc.ID]int{}, asks: map[string]chan *jsonrpc.Response{}}
		s.lanes[ss] = l
		return l, true
	case *httpLaneSession:
		return cur, true
	}
	return nil, false
}

// serve answers r when the lane takes it and reports whether it did; when
// it did not, r's body is there for the SDK as it came, and release, when
// not nil, is to be called once the SDK has answered r: until then the id
// of the request it carries counts as in flight, so that the lane refuses
// a call of the same id as the SDK would.
func (h *httpLane) serve(w http.ResponseWriter, r *http.Request, sessionID string) (taken bool, release func()) {
	ss := h.s.lookup(sessionID)
	if ss == nil {
		return false, nil
	}
	body, err := readBody(r)
	if err != nil {
		return false, nil
	}
	init := ss.InitializeParams()
	version := r.Header.Get("Mcp-Protocol-Version")
	if !h.eligibleHeaders(r) || init == nil || version == "" || version != init.ProtocolVersion || version >= multiRoundTripVersion {
		return h.passOnAll(w, ss, body)
	}
	msg, ok := laneMessage(body)
	if !ok {
		return h.passOnAll(w, ss, body)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		return h.answered(w, ss, resp), nil
	}
	req := msg.(*jsonrpc.Request)
	if !req.ID.IsValid() {
		if req.Method == "notifications/cancelled" {
			h.cancel(ss, req.Params)
		}
		return false, nil
	}
	l, ok := h.s.httpLaneState(ss, h.store)
	if !ok {
		return false, nil
	}
	if req.Method != "tools/call" {
		return l.passOn(w, req.ID)
	}
	params, ok := decodeLaneParams(req.Params)
	if !ok || params.perRequest {
		return l.passOn(w, req.ID)
	}
	if _, known := h.s.surf.Lookup(params.Name); known && !h.s.registered(params.Name) {
		return l.passOn(w, req.ID) // the SDK's unknown-tool error
	}
	if l, ok = h.s.enterHTTPLane(ss, h.store); !ok {
		return false, nil
	}
	defer l.wg.Done()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.mu.Lock()
	dup := l.inFlightLocked(req.ID)
	if !dup {
		l.runs[req.ID] = cancel
	}
	l.mu.Unlock()
	if dup {
		writeDuplicateID(w, req.ID)
		return true, nil
	}
	taken = h.answer(ctx, w, r, ss, l, version, req.ID, params.CallToolParamsRaw)
	l.mu.Lock()
	delete(l.runs, req.ID)
	if !taken {
		// Handed to the SDK, which runs it again: in flight there now.
		l.sdk[req.ID]++
	}
	l.mu.Unlock()
	if taken {
		return true, nil
	}
	return false, l.answeredBySDK(req.ID)
}

// answer runs the call and writes its stream; false, nothing written, when
// the call stopped on a question the SDK is to put.
func (h *httpLane) answer(ctx context.Context, w http.ResponseWriter, r *http.Request, ss *mcp.ServerSession, l *httpLaneSession, version string, id jsonrpc.ID, params *mcp.CallToolParamsRaw) bool {
	sessionID := l.id
	st := &laneStream{w: w, holder: r.Context(), id: rand.Text(), primed: version >= protocolPrime, store: h.store,
		session: sessionID, done: make(chan struct{}), conn: heldConnOf(r.Context(), r.ProtoMajor)}
	h.mu.Lock()
	h.running[st.id] = st
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.running, st.id)
		h.mu.Unlock()
		close(st.done)
	}()
	timer := time.AfterFunc(h.primeAfter, st.prime)

	// The call's progress and questions go on its own stream, as the
	// SDK's path puts them.
	ctx = withProgressTo(withHeaderTrace(ctx, r.Header), st.progress)
	var elicit elicitFunc
	if supportsElicitation(ss) {
		elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return h.elicit(ctx, ss, l, st, p)
		}
	}
	res, err := h.s.laneCall(ctx, ss, params, elicit)
	timer.Stop()
	if err == nil && res != nil && res.InputRequests != nil && elicit == nil {
		// Nothing ran: the pipeline asks before it executes. Unless the
		// stream is open already, the SDK runs the call again and gives
		// its answer to a client that cannot be asked.
		h.s.pending.take(res.RequestState)
		if st.handOff() {
			return false
		}
		res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call needs an answer from the user and the stream was already open; call again"}
	}
	reply := laneResponse(id, res, err, ss)
	defer reply.release()
	if reply.msg != nil {
		st.finish(reply.body())
		return true
	}
	resp := reply.resp
	data, ok := encodeResponse(resp)
	if !ok {
		if data, err = jsonrpc.EncodeMessage(resp); err != nil {
			data, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
				Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("encoding the result: %v", err)}})
		}
	}
	st.finish(data)
	return true
}

// laneStream writes one call's answer, and the events before it, to its
// response. A call that ends before anything was written (its progress, a
// question, the priming event after primeAfter) is answered with its
// answer alone, as a JSON body, as the SDK's JSONResponse option answers:
// no client can resume a stream of which it has no event id, so a stream
// would buy nothing, and the client reads a body rather than scanning
// events. Once open, the stream's events are each stored in the front's
// event store before they are written, as the SDK does: a client that
// resumes the stream finds them.
type laneStream struct {
	id      string
	primed  bool // the stream opens with a priming event
	store   mcp.EventStore
	session string
	done    chan struct{} // closed once the call has returned
	conn    *heldConn     // the POST's connection, nil unless of HTTPFront.Listener

	mu sync.Mutex
	// w is the response the stream's events go to: the POST's, then that
	// of a GET that resumed the stream (resume), nil while none holds it.
	// holder is the context of w's request.
	w        http.ResponseWriter
	holder   context.Context
	open     bool // the priming event (or the header) is written
	finished bool
	next     int // the index of the stream's next event
}

// prime writes and flushes the priming event, unless the call has ended.
func (st *laneStream) prime() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished || st.open {
		return
	}
	_ = st.openLocked()
	_ = http.NewResponseController(st.w).Flush()
}

// openLocked opens the stream in the event store and writes the
// response's header and the priming event.
func (st *laneStream) openLocked() error {
	st.open = true
	ctx := context.Background()
	err := st.store.Open(ctx, st.session, st.id)
	if st.primed {
		if err == nil {
			err = st.store.Append(ctx, st.session, st.id, nil)
		}
		st.next = 1
	}
	hdr := st.w.Header()
	hdr.Set("Cache-Control", "no-cache, no-transform")
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Connection", "keep-alive")
	st.w.WriteHeader(http.StatusOK)
	if st.primed {
		_, _ = st.w.Write(st.event(nil, "prime", 0))
	}
	return err
}

// send writes one message of the call's stream before its answer (a
// progress notification, a question), opening the stream first, and
// flushes it.
func (st *laneStream) send(data []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.finished {
		return errors.New("the call's stream has ended")
	}
	if !st.open {
		if err := st.openLocked(); err != nil {
			return err
		}
	}
	// Stored is sent, as for the SDK: a client whose connection dropped
	// finds the event when it resumes the stream.
	if err := st.store.Append(context.Background(), st.session, st.id, data); err != nil {
		return err
	}
	if st.w != nil {
		if _, err := st.w.Write(st.event(data, "message", st.next)); err == nil {
			_ = http.NewResponseController(st.w).Flush()
		}
	}
	st.next++
	return nil
}

// progress sends a progress notification of the call on its stream.
func (st *laneStream) progress(p *mcp.ProgressNotificationParams) {
	raw, err := encodeLaneValue(p)
	if err != nil {
		return
	}
	if data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/progress", Params: raw}); err == nil {
		_ = st.send(data)
	}
}

// handOff ends the lane's hold on the response, unless it is open.
func (st *laneStream) handOff() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.finished = true
	return !st.open
}

// finish writes the answer: as the stream's last event once it is open,
// as a JSON body before.
func (st *laneStream) finish(data []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.finished = true
	if !st.open {
		hdr := st.w.Header()
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Content-Length", strconv.Itoa(len(data)))
		if st.conn == nil || len(data) > heldMax {
			_, _ = st.w.Write(data)
			return
		}
		// The header and the answer in one write (heldconn.go).
		st.conn.hold()
		_, _ = st.w.Write(data)
		_ = http.NewResponseController(st.w).Flush()
		st.conn.send()
		return
	}
	// The store keeps what it is given; data goes back to its buffer.
	_ = st.store.Append(context.Background(), st.session, st.id, bytes.Clone(data))
	if st.w != nil {
		_, _ = st.w.Write(st.event(data, "message", st.next))
	}
}

// event renders one server-sent event as the SDK's writeEvent does, with
// the id the SDK gives the event at idx of the stream.
func (st *laneStream) event(data []byte, name string, idx int) []byte {
	b := make([]byte, 0, len(data)+len(st.id)+48)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\nid: "...)
	b = append(b, st.id...)
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(idx), 10)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// resume serves a GET that resumes one of the lane's streams whose call
// still runs, as the SDK's serveGET serves one of its own: it sends the
// events stored after Last-Event-ID, then takes the stream over, so that
// its next events and its answer come to this GET, until the call ends or
// the GET does. A question put while no request held the stream is among
// the events it sends: the client answers it and the call goes on. False,
// nothing written, when r is no such GET: the SDK serves it (a stream
// whose call has ended, from the store, where the lane stored each event).
func (h *httpLane) resume(w http.ResponseWriter, r *http.Request, sessionID string) bool {
	if h == nil || sessionID == "" {
		return false
	}
	stream, idx, ok := resumePoint(r.Header.Values("Last-Event-ID"))
	if !ok {
		return false
	}
	h.mu.Lock()
	st := h.running[stream]
	h.mu.Unlock()
	if st == nil || st.session != sessionID || !h.eligibleResume(r, sessionID) {
		return false
	}
	st.mu.Lock()
	if st.finished {
		// The answer is stored: the SDK replays the stream.
		st.mu.Unlock()
		return false
	}
	if st.w != nil && st.holder.Err() == nil {
		st.mu.Unlock()
		http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
		return true
	}
	var replay [][]byte
	for data, err := range st.store.After(r.Context(), sessionID, stream, idx) {
		if err != nil {
			st.mu.Unlock()
			http.Error(w, "failed to replay events", http.StatusBadRequest)
			return true
		}
		if len(data) > 0 {
			replay = append(replay, data)
		}
	}
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-cache, no-transform")
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Connection", "keep-alive")
	for _, data := range replay {
		idx++
		if _, err := w.Write(st.event(data, "message", idx)); err != nil {
			st.mu.Unlock()
			return true
		}
		_ = http.NewResponseController(w).Flush()
	}
	// The header goes out with the next event, as from the SDK.
	st.w, st.holder, st.open = w, r.Context(), true
	st.mu.Unlock()

	select {
	case <-st.done:
	case <-r.Context().Done():
	}
	st.mu.Lock()
	if st.holder == r.Context() {
		st.w = nil
	}
	st.mu.Unlock()
	return true
}

// resumePoint reads Last-Event-ID as the SDK does (parseEventID): the
// stream's id and the index of the last event the client has.
func resumePoint(values []string) (stream string, idx int, ok bool) {
	if len(values) == 0 {
		return "", 0, false
	}
	stream, n, ok := strings.Cut(values[0], "_")
	if !ok || strings.Contains(n, "_") {
		return "", 0, false
	}
	idx, err := strconv.Atoi(n)
	return stream, idx, err == nil && idx >= 0
}

// eligibleResume says whether a resuming GET of session sessionID passes,
// plainly, what the SDK checks before it serves one: its Host, its Accept,
// a live session and the protocol version, which is the session's or none.
func (h *httpLane) eligibleResume(r *http.Request, sessionID string) bool {
	if _, streamOK := accepts(r.Header.Values("Accept")); !streamOK || !loopbackHostOK(r) {
		return false
	}
	ss := h.s.lookup(sessionID)
	if ss == nil {
		return false
	}
	v := r.Header.Get("Mcp-Protocol-Version")
	init := ss.InitializeParams()
	return init != nil && (v == "" || v == init.ProtocolVersion)
}

// cancel cancels the lane's call of ss a notifications/cancelled names.
func (h *httpLane) cancel(ss *mcp.ServerSession, params []byte) {
	id, ok := cancelledID(params)
	if !ok {
		return
	}
	h.s.mu.Lock()
	l, _ := h.s.lanes[ss].(*httpLaneSession)
	h.s.mu.Unlock()
	if l == nil {
		return
	}
	l.mu.Lock()
	cancel := l.runs[id]
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// eligibleHeaders says whether r passes, plainly, what the SDK checks
// before it reads a POST's body.
func (h *httpLane) eligibleHeaders(r *http.Request) bool {
	if r.Header.Get("Content-Type") != "application/json" || len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return false
	}
	return loopbackHostOK(r)
}

// loopbackHostOK is the SDK's guard against DNS rebinding: a request to a
// loopback listener names a loopback host.
func loopbackHostOK(r *http.Request) bool {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		return !sdkLoopback(a.String()) || sdkLoopback(r.Host)
	}
	return true
}

// accepts is the SDK's reading of Accept (streamableAccepts).
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// sdkLoopback is the SDK's test of a loopback address (host, or host and
// port).
func sdkLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// readBody reads r's body and puts it back for whoever reads it next; a
// read error is left for that reader to meet too.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, errors.New("no body")
	}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= 1<<20 {
		buf.Grow(int(n))
	}
	_, err := buf.ReadFrom(r.Body)
	body := buf.Bytes()
	if err != nil {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// laneMessage decodes a body the lane may take: one JSON-RPC message, as
// strictly as the stdio front judges a line, with no keys but jsonrpc, id
// and method and params (a request) or result and error (a response).
func laneMessage(body []byte) (jsonrpc.Message, bool) {
	if len(body) == 0 || len(body) > DefaultMaxFrame {
		return nil, false
	}
	msg, bad := decodeFrame(frame{data: body, size: len(body), limit: DefaultMaxFrame})
	if bad != nil || msg == nil {
		return nil, false
	}
	_, isResponse := msg.(*jsonrpc.Response)
	fields, _ := topLevel(bytes.TrimSpace(body))
	for k := range fields {
		switch k {
		case "jsonrpc", "id":
		case "method", "params":
			if isResponse {
				return nil, false
			}
		case "result", "error":
			if !isResponse {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return msg, true
}

// laneAskPrefix starts the id of every question the lane puts, so that
// no id of the SDK's own requests (numbers) is ever one of them.
const laneAskPrefix = "yagent-ask-"

// answered hands the client's answer to the lane's question it names to
// the call that waits for it, and says 202 Accepted as the SDK would; false
// for any other response, which goes on to the SDK.
func (h *httpLane) answered(w http.ResponseWriter, ss *mcp.ServerSession, resp *jsonrpc.Response) bool {
	qid, ok := resp.ID.Raw().(string)
	if !ok || !strings.HasPrefix(qid, laneAskPrefix) {
		return false
	}
	h.s.mu.Lock()
	l, _ := h.s.lanes[ss].(*httpLaneSession)
	h.s.mu.Unlock()
	if l == nil {
		return false
	}
	l.mu.Lock()
	ch := l.asks[qid]
	delete(l.asks, qid)
	l.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- resp
	w.WriteHeader(http.StatusAccepted)
	return true
}

// elicit puts p to the client on the call's own stream, as the SDK's
// ServerSession.Elicit does on its path, under an id of the lane's, and
// waits for the answer a POST of the session brings (answered), the
// call's end or the session's.
func (h *httpLane) elicit(ctx context.Context, ss *mcp.ServerSession, l *httpLaneSession, st *laneStream, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	caps := ss.InitializeParams().Capabilities.Elicitation
	if (p.Mode == "" || p.Mode == "form") && caps.Form == nil && caps.URL != nil {
		return nil, errors.New(`client does not support "form" elicitation`)
	}
	if p.Mode == "url" && caps.URL == nil {
		return nil, errors.New(`client does not support "url" elicitation`)
	}
	raw, err := encodeLaneValue(p)
	if err != nil {
		return nil, err
	}
	qid := laneAskPrefix + rand.Text()
	id, err := jsonrpc.MakeID(qid)
	if err != nil {
		return nil, err
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "elicitation/create", Params: raw})
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	l.mu.Lock()
	l.asks[qid] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.asks, qid)
		l.mu.Unlock()
	}()
	if err := st.send(data); err != nil {
		return nil, err
	}
	var resp *jsonrpc.Response
	select {
	case resp = <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.ended.Done():
		return nil, errors.New("the session ended before the client answered")
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("calling %q: %w", "elicitation/create", resp.Error)
	}
	var res mcp.ElicitResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, err
	}
	if err := checkElicitAnswer(p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// checkElicitAnswer holds an accepted answer to the schema its question
// requested and fills in the schema's defaults, as ServerSession.Elicit
// does.
func checkElicitAnswer(p *mcp.ElicitParams, res *mcp.ElicitResult) error {
	if res.Action != "accept" || res.Content == nil || p.RequestedSchema == nil {
		return nil
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return err
	}
	var schema *jsonschema.Schema
	if err := json.Unmarshal(b, &schema); err != nil || schema == nil {
		return err
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return err
	}
	if err := resolved.Validate(res.Content); err != nil {
		return fmt.Errorf("elicitation result content does not match requested schema: %v", err)
	}
	if err := resolved.ApplyDefaults(&res.Content); err != nil {
		return fmt.Errorf("failed to apply schema defaults to elicitation result: %v", err)
	}
	return nil
}

// writeJSONRPCError writes an error answer as the SDK's handler does.
func writeJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, jerr *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: jerr}); err == nil {
		_, _ = w.Write(data)
	}
}
