package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/surface"
)

// Options configures a Server. A nil *Options means defaults.
type Options struct {
	// Name and Version identify the server in the initialize result.
	Name, Version string
	// Instructions go into the initialize result (the -Y autonomous-decision
	// instructions).
	Instructions string
	// NewSession creates the host session of a new MCP connection; nil uses
	// session.New.
	NewSession func(id string) *session.Session
	// Answerer returns the answerer of a new connection's session, given a
	// way to reach its client; nil attaches one that puts questions to the
	// client's user as input requests when the client supports elicitation,
	// else none.
	Answerer func(ss *mcp.ServerSession) session.Answerer
	// MaxCallsInFlight caps the tool calls one session runs at a time; a
	// call over it fails at once with too_many_calls. 0 means no cap.
	MaxCallsInFlight int
	// OnSessionEnd, when set, runs once an MCP session has ended and its
	// calls have returned, with the id of its yagent session: where the
	// host tells plugins to release what they hold for it. Run waits for
	// it before it returns.
	OnSessionEnd func(ctx context.Context, id string)
	// Bus is the host's event path: the server taps it for the progress
	// of its calls and for log records (notifications/progress and
	// notifications/message). nil sends neither.
	Bus    *bus.Dispatcher
	Logger *slog.Logger
}

// CodeTooManyCalls is the result code of a call refused because its
// session already runs MaxCallsInFlight calls.
const CodeTooManyCalls = "too_many_calls"

// Server is an MCP server over one surface.
type Server struct {
	surf   *surface.Surface
	opts   Options
	server *mcp.Server
	logger *slog.Logger
	// names are the tools given to the SDK, which calls handle for them.
	names map[string]struct{}
	// impl is the server's identity as given to the SDK; serverInfo the
	// _meta the SDK puts it in for a request of protocol 2026-07-28, and
	// versions the protocol versions the SDK serves (the lane's).
	impl       *mcp.Implementation
	serverInfo mcp.Meta
	versions   []string

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*hostSession
	// lanes are the call lanes' calls of the sessions that have one
	// (run, the HTTP lane): a session's end waits for them before
	// OnSessionEnd.
	lanes   map[*mcp.ServerSession]laneCalls
	pending pendingCalls
	// ending counts the sessions whose OnSessionEnd runs.
	ending sync.WaitGroup
	events *events
}

// hostSession is the host's side of one MCP session.
type hostSession struct {
	sess *session.Session
	// ended is cancelled when the MCP session ends, and with it every call
	// the session has in flight: the SDK's Close waits for them to return.
	ended context.Context
	end   context.CancelFunc
	// inFlight counts the session's calls running, under Server.mu.
	inFlight int
}

// New returns a server for surf. Register nothing else on it: its tool list
// is the surface's.
func New(surf *surface.Surface, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "yagent"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.NewSession == nil {
		o.NewSession = session.New
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		surf:     surf,
		opts:     o,
		logger:   logger,
		sessions: map[*mcp.ServerSession]*hostSession{},
		lanes:    map[*mcp.ServerSession]laneCalls{},
	}
	s.impl = &mcp.Implementation{Name: o.Name, Version: o.Version}
	s.serverInfo = mcp.Meta{mcp.MetaKeyServerInfo: s.impl}
	// The SDK serves these unless ServerOptions.SupportedProtocolVersions
	// names fewer, which it does not here.
	s.versions = mcp.SupportedProtocolVersions()
	s.server = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions: o.Instructions,
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
	})
	s.events = newEvents(s, o.Bus)
	s.names = map[string]struct{}{}
	for _, def := range surf.All() {
		s.server.AddTool(toMCPTool(def), s.handle)
		s.names[def.Name] = struct{}{}
	}
	s.server.AddReceivingMiddleware(encodeOnce, s.middleware)
	return s
}

// Run serves one connection over t until the client leaves or ctx ends.
// It returns once the ends of the sessions it served have run.
//
// On a StdioTransport, the session's tools/call requests take the call
// lane (lane.go) once it is initialized.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.run(ctx, t)
	s.WaitEnded()
	return err
}

// run is the SDK's Server.Run, with the call lane opened on a stdio
// connection.
func (s *Server) run(ctx context.Context, t mcp.Transport) error {
	st, ok := t.(*StdioTransport)
	if !ok {
		return s.server.Run(ctx, t)
	}
	withLane := *st
	var conn *frontConn
	withLane.connected = func(c *frontConn) { conn = c }
	ss, err := s.server.Connect(ctx, &withLane, nil)
	if err != nil {
		return err
	}
	if conn != nil {
		s.mu.Lock()
		s.lanes[ss] = &conn.laneWG
		s.mu.Unlock()
		lane := s.laneFor(ss)
		conn.lane.Store(&lane)
		// The connection's Close cancels the lane's calls, but cannot
		// wait for them: the SDK closes it holding a lock their last
		// writes would take. They are waited for here, once it closed.
		defer func() {
			conn.laneWG.Wait()
			s.mu.Lock()
			delete(s.lanes, ss)
			s.mu.Unlock()
		}()
	}
	closed := make(chan error, 1)
	go func() { closed <- ss.Wait() }()
	select {
	case <-ctx.Done():
		_ = ss.Close()
		<-closed
		return ctx.Err()
	case err := <-closed:
		return err
	}
}

// Close stops passing the host's events on. Call it once the server is
// done serving.
func (s *Server) Close() { s.events.close() }

// yagentSessionID is the id of the yagent session of ss.
func (s *Server) yagentSessionID(ss *mcp.ServerSession) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs, ok := s.sessions[ss]; ok {
		return hs.sess.ID()
	}
	return ss.ID()
}

// WaitEnded waits for the OnSessionEnd of every session that has ended.
func (s *Server) WaitEnded() { s.ending.Wait() }

// sessionEndGrace bounds how long the plugins are given to release what a
// session held.
const sessionEndGrace = 10 * time.Second

// NotifyListChanged tells clients that the tool list of sess changed (a
// Cold tool was loaded).
//
// The SDK sends list_changed to every connection when a tool is (re)added;
// re-adding one unchanged definition, whichever it is, is how a change is
// signalled. Connections whose own list did not change re-list and see the
// same tools.
func (s *Server) NotifyListChanged(*session.Session) {
	if defs := s.surf.All(); len(defs) > 0 {
		s.server.AddTool(toMCPTool(defs[0]), s.handle)
	}
}

func (s *Server) sessionFor(ss *mcp.ServerSession) *session.Session {
	return s.hostSessionFor(ss).sess
}

func (s *Server) hostSessionFor(ss *mcp.ServerSession) *hostSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs, ok := s.sessions[ss]; ok {
		return hs
	}
	sess := s.opts.NewSession(ss.ID())
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		sess.SetClient(strings.TrimSuffix(p.ClientInfo.Name+"/"+p.ClientInfo.Version, "/"))
	}
	if s.opts.Answerer != nil {
		sess.SetAnswerer(s.opts.Answerer(ss))
	} else if supportsElicitation(ss) {
		sess.SetAnswerer(inputAnswerer{})
	}
	ended, end := context.WithCancel(context.Background())
	hs := &hostSession{sess: sess, ended: ended, end: end}
	s.sessions[ss] = hs
	s.ending.Add(1)
	go func() {
		defer s.ending.Done()
		_ = ss.Wait()
		end()
		s.mu.Lock()
		delete(s.sessions, ss)
		lane := s.lanes[ss]
		delete(s.lanes, ss)
		s.mu.Unlock()
		if lane != nil {
			// The session's calls on the lane end before its end is told.
			lane.Wait()
		}
		if s.opts.OnSessionEnd != nil {
			ctx, cancel := context.WithTimeout(context.Background(), sessionEndGrace)
			defer cancel()
			s.opts.OnSessionEnd(ctx, sess.ID())
		}
	}()
	return hs
}

// callContext is ctx, also cancelled when the call's session ends. ok is
// false, and nothing is to be done, when the session already runs
// MaxCallsInFlight calls.
func (s *Server) callContext(ctx context.Context, ss *mcp.ServerSession) (_ context.Context, _ *session.Session, done func(), ok bool) {
	hs := s.hostSessionFor(ss)
	s.mu.Lock()
	if limit := s.opts.MaxCallsInFlight; limit > 0 && hs.inFlight >= limit {
		s.mu.Unlock()
		return nil, nil, nil, false
	}
	hs.inFlight++
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(hs.ended, cancel)
	return ctx, hs.sess, func() {
		stop()
		cancel()
		s.mu.Lock()
		hs.inFlight--
		s.mu.Unlock()
	}, true
}

func (s *Server) tooManyCalls() *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"this session already runs %d calls, the most it may at once; wait for one to return, then call again", s.opts.MaxCallsInFlight)}},
		StructuredContent: map[string]any{"code": CodeTooManyCalls},
	}
}

// lookup returns the live MCP session named id, or nil.
func (s *Server) lookup(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.server.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// cancelCalls cancels every call in flight of the MCP session named id.
func (s *Server) cancelCalls(id string) {
	ss := s.lookup(id)
	if ss == nil {
		return
	}
	s.mu.Lock()
	hs := s.sessions[ss]
	s.mu.Unlock()
	if hs != nil {
		hs.end()
	}
}

// EndSession ends the MCP session named id: its calls in flight are
// cancelled, then the session is closed and its host state dropped. It
// reports whether such a session was live.
func (s *Server) EndSession(id string) bool {
	ss := s.lookup(id)
	if ss == nil {
		return false
	}
	s.cancelCalls(id)
	_ = ss.Close()
	return true
}

func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			r, ok := req.(*mcp.ListToolsRequest)
			if !ok {
				break
			}
			sess := s.sessionFor(r.Session)
			return listTools(s.surf.List(sess)), nil
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if !ok || r.Params == nil {
				break
			}
			if _, known := s.surf.Lookup(r.Params.Name); !known {
				return s.callUnknown(ctx, r), nil
			}
		}
		return next(ctx, method, req)
	}
}

// registered says whether name is one of the tools New gave the SDK, whose
// calls it hands to handle.
func (s *Server) registered(name string) bool {
	_, ok := s.names[name]
	return ok
}

// callUnknown runs a call of a tool the surface does not know, for the
// surface's answer (unknown_tool, with the way to find deferred tools)
// rather than the SDK's bare JSON-RPC error.
func (s *Server) callUnknown(ctx context.Context, r *mcp.CallToolRequest) *mcp.CallToolResult {
	ctx, sess, done, ok := s.callContext(withClientTrace(ctx, r.Params.Meta), r.Session)
	if !ok {
		return s.tooManyCalls()
	}
	defer done()
	ctx, routed := s.events.forCall(ctx, r.Session, r.Params)
	defer routed()
	return toCallResult(s.surf.Call(ctx, sess, r.Params.Name, arguments(r.Params.Arguments)))
}

// arguments is a tools/call's input for the surface: MCP makes
// "arguments" optional, and a call that gives none gives the empty
// object. Anything sent, null included, goes on as sent for the adapter
// to judge.
func arguments(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	return raw
}

// handle runs a call of a tool the surface knows, on every front: the
// lane, the SDK's path on stdio, and HTTP. The span the host's telemetry
// opens for it is a child of the client's, when _meta names one.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Extra != nil { // the SDK's path over HTTP: the POST's headers
		ctx = withHeaderTrace(ctx, req.Extra.Header)
	}
	ctx, sess, done, ok := s.callContext(withClientTrace(ctx, req.Params.Meta), req.Session)
	if !ok {
		return s.tooManyCalls(), nil
	}
	defer done()
	ctx, routed := s.events.forCall(ctx, req.Session, req.Params)
	defer routed()
	st := s.pending.resume(req.Params)
	ctx = context.WithValue(ctx, stateKey{}, st)
	res := s.surf.Call(ctx, sess, req.Params.Name, arguments(req.Params.Arguments))
	st.mu.Lock()
	stopped := st.need != nil
	st.mu.Unlock()
	if stopped {
		return s.pending.inputRequired(st), nil
	}
	return toCallResult(res), nil
}

func toMCPTool(d surface.ToolDef) *mcp.Tool {
	t := &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: schemaOf(d)}
	if readOnly(d) {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	return t
}

func toCallResult(r *adapter.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError()}
	text := r.Text
	if text == "" && r.IsError() {
		text = r.Code
	}
	out.Content = append(out.Content, &mcp.TextContent{Text: text})
	for _, img := range r.Images {
		out.Content = append(out.Content, &mcp.ImageContent{Data: img.Data, MIMEType: img.MIMEType})
	}
	structured := map[string]any{}
	if r.Code != "" {
		structured["code"] = r.Code
	}
	// Data goes out as it came: decoding it into maps only to encode it
	// again was the largest part of building a result.
	if len(r.Data) > 0 && json.Valid(r.Data) {
		structured["data"] = r.Data
	}
	if len(r.Repairs) > 0 {
		structured["repairs"] = r.Repairs
	}
	if len(r.Warnings) > 0 {
		structured["warnings"] = r.Warnings
	}
	if r.Truncated {
		structured["truncated"] = true
	}
	if len(structured) > 0 {
		out.StructuredContent = structured
	}
	return out
}

func supportsElicitation(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}
