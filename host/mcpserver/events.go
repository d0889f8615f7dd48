package mcpserver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/sdk"
)

// events passes the host's events on to MCP clients. It taps the bus, the
// one path of the host's events: a call's progress goes, in the tool's
// goroutine and so before the call's result, to the client that asked for
// it with a progress token; log records are queued and sent, by one
// goroutine, to the clients that set a level with logging/setLevel.
type events struct {
	s     *Server
	untap func()

	mu    sync.Mutex
	calls map[string]progressSink // by the call id given to the adapter

	logs        chan bus.Event
	droppedLogs atomic.Uint64
	done        chan struct{}
	stopped     sync.WaitGroup
}

// progressSink is where one call's progress goes: to send when the call's
// front writes its stream itself, else through the session.
type progressSink struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	send  func(*mcp.ProgressNotificationParams)
}

// progressToKey is the context key of a call's own progress writer.
type progressToKey struct{}

// withProgressTo returns ctx whose call sends its progress with send,
// rather than through its session (the HTTP lane: the SDK's session would
// send it on the standalone stream, not the call's).
func withProgressTo(ctx context.Context, send func(*mcp.ProgressNotificationParams)) context.Context {
	return context.WithValue(ctx, progressToKey{}, send)
}

// logQueue bounds the log records waiting to be sent; more are dropped.
const logQueue = 256

// logSendTimeout bounds the sending of one log record to one client, so
// that a client that reads nothing holds up the others only that long.
const logSendTimeout = time.Second

func newEvents(s *Server, d *bus.Dispatcher) *events {
	e := &events{s: s, calls: map[string]progressSink{}, logs: make(chan bus.Event, logQueue), done: make(chan struct{})}
	if d == nil {
		return e
	}
	e.untap = d.Tap(e.tap)
	e.stopped.Add(1)
	go e.sendLogs()
	return e
}

// close stops the tap and the log sender.
func (e *events) close() {
	if e.untap == nil {
		return
	}
	e.untap()
	close(e.done)
	e.stopped.Wait()
	e.untap = nil
}

func (e *events) tap(ev bus.Event) {
	switch ev.Type {
	case bus.ToolProgress:
		e.mu.Lock()
		sink, ok := e.calls[ev.CallID]
		e.mu.Unlock()
		p, isProgress := ev.Payload.(sdk.Progress)
		if !ok || !isProgress {
			return
		}
		params := &mcp.ProgressNotificationParams{
			ProgressToken: sink.token,
			Message:       p.Message,
			Progress:      p.Progress,
			Total:         p.Total,
		}
		if sink.send != nil {
			sink.send(params)
			return
		}
		_ = sink.ss.NotifyProgress(sink.ctx, params)
	case bus.Log:
		select {
		case e.logs <- ev:
		default:
			e.droppedLogs.Add(1)
		}
	}
}

// forCall returns ctx carrying a call id of the front's own and, when the
// client sent a progress token, routes the call's progress to it until
// done is called (after the call returned).
func (e *events) forCall(ctx context.Context, ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) (_ context.Context, done func()) {
	tok := params.GetProgressToken()
	if tok == nil || e.untap == nil {
		return ctx, func() {}
	}
	id := uuid.NewString()
	e.mu.Lock()
	send, _ := ctx.Value(progressToKey{}).(func(*mcp.ProgressNotificationParams))
	e.calls[id] = progressSink{ctx: ctx, ss: ss, token: tok, send: send}
	e.mu.Unlock()
	return adapter.WithCallID(ctx, id), func() {
		e.mu.Lock()
		delete(e.calls, id)
		e.mu.Unlock()
	}
}

func (e *events) sendLogs() {
	defer e.stopped.Done()
	for {
		select {
		case <-e.done:
			return
		case ev := <-e.logs:
			e.sendLog(ev)
		}
	}
}

// sendLog sends one record to the session it names (a "session" field)
// or, naming none, to every session. The SDK sends it only to clients
// whose logging/setLevel level it reaches.
func (e *events) sendLog(ev bus.Event) {
	rec, ok := ev.Payload.(bus.LogRecord)
	if !ok {
		return
	}
	data := map[string]any{"message": rec.Message}
	for k, v := range rec.Fields {
		if k != "message" {
			data[k] = v
		}
	}
	params := &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(rec.Level), Logger: rec.Logger, Data: data}
	only := ev.SessionID
	if only == "" {
		if id, ok := rec.Fields["session"].(string); ok {
			only = id
		}
	}
	for ss := range e.s.server.Sessions() {
		if only != "" && e.s.yagentSessionID(ss) != only {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), logSendTimeout)
		_ = ss.Log(ctx, params)
		cancel()
	}
}
