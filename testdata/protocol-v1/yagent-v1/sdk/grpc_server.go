package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// pluginServer is the plugin side of the Plugin service: it runs the
// plugin's tools for the host.
type pluginServer struct {
	pluginpb.UnimplementedPluginServer

	plugin Plugin
	tools  map[string]Tool
	specs  []*pluginpb.ToolSpec
	names  []string
	logger hclog.Logger
	// onPanic handles a tool's panic; see ServeOptions.OnPanic.
	onPanic func(tool string, value any, stack []byte) error

	// broker is set when go-plugin registers the server.
	broker *plugin.GRPCBroker
	hosts  hostDialer
	// tracing is set when the host turned telemetry on (TelemetryEnv).
	tracing *pluginTracing
	// channel is set when the plugin serves calls on a call channel.
	channel bool
}

func newPluginServer(p Plugin, opts ServeOptions) (*pluginServer, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	s := &pluginServer{
		plugin:  p,
		tools:   make(map[string]Tool, len(p.Tools)),
		logger:  opts.Logger,
		onPanic: opts.OnPanic,
	}
	if s.logger == nil {
		s.logger = hclog.NewNullLogger()
	}
	if os.Getenv(TelemetryEnv) == "1" {
		s.tracing = newPluginTracing()
	}
	if s.onPanic == nil {
		// Taken now: go-plugin's Serve later points os.Stderr at a pipe
		// to the host, while fd 2 stays the stderr the host reads lines from.
		s.onPanic = exitOnPanic(os.Stderr)
	}
	for _, t := range p.Tools {
		spec := t.Spec()
		s.tools[spec.Name] = t
		s.specs = append(s.specs, specToWire(spec))
		s.names = append(s.names, spec.Name)
	}
	sort.Strings(s.names)
	sort.Slice(s.specs, func(i, j int) bool { return s.specs[i].Name < s.specs[j].Name })
	if opts.CallConn != nil {
		s.serveOn(opts.CallConn)
	}
	return s, nil
}

// exitOnPanic returns Serve's panic handler: the panic text and stack go to
// the process's stderr, where the host reads them, and the process exits so
// the host sees a crash rather than a call that quietly failed.
func exitOnPanic(stderr io.Writer) func(tool string, value any, stack []byte) error {
	return func(tool string, value any, stack []byte) error {
		fmt.Fprintf(stderr, "panic: %v\n\n[in tool %s]\n%s\n", value, tool, stack)
		os.Exit(2)
		return nil
	}
}

func (s *pluginServer) Describe(ctx context.Context, req *pluginpb.DescribeRequest) (*pluginpb.DescribeResponse, error) {
	// Dial the host's callback service now: the broker only holds its
	// address for a few seconds after the host offers it.
	s.hosts.get(s.broker, req.GetHostBrokerId(), s.logger)
	return &pluginpb.DescribeResponse{
		Name:            s.plugin.Name,
		Version:         s.plugin.Version,
		ProtocolVersion: ProtocolVersion,
		Specs:           s.specs,
		CallChannel:     s.channel,
	}, nil
}

func (s *pluginServer) Shutdown(ctx context.Context, _ *pluginpb.ShutdownRequest) (*pluginpb.ShutdownResponse, error) {
	if s.plugin.OnShutdown != nil {
		if err := s.plugin.OnShutdown(ctx); err != nil {
			return nil, status.Errorf(codes.Internal, "shutdown: %v", err)
		}
	}
	return &pluginpb.ShutdownResponse{}, nil
}

func (s *pluginServer) EndSession(ctx context.Context, req *pluginpb.EndSessionRequest) (*pluginpb.EndSessionResponse, error) {
	if s.plugin.OnSessionEnd != nil {
		// No call: progress goes nowhere and approvals find nobody to ask,
		// but the process groups the plugin ends are reported.
		info := CallInfo{SessionID: req.GetSessionId()}
		host := &callHost{info: info, events: &eventSender{done: true}, conn: s.hosts.get(s.broker, req.GetHostBrokerId(), s.logger)}
		ctx = WithHost(WithCall(ctx, info), host)
		if err := s.plugin.OnSessionEnd(ctx, req.GetSessionId()); err != nil {
			return nil, status.Errorf(codes.Internal, "end session: %v", err)
		}
	}
	return &pluginpb.EndSessionResponse{}, nil
}

func (s *pluginServer) Call(req *pluginpb.CallRequest, stream pluginpb.Plugin_CallServer) error {
	return s.call(stream.Context(), req, &eventSender{send: stream.Send})
}

// call runs the call req under ctx (the call's stream, or its entry on the
// call channel) and sends its events.
func (s *pluginServer) call(ctx context.Context, req *pluginpb.CallRequest, events *eventSender) error {
	tool, ok := s.tools[req.GetTool()]
	if !ok {
		return events.final(errorEvent(Errorf(CodeUnknownTool,
			"plugin %s has no tool %q; it serves: %s", s.plugin.Name, req.GetTool(), strings.Join(s.names, ", "))))
	}
	info := callFromWire(req)
	if !info.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, info.Deadline)
		defer cancel()
	}
	host := &callHost{info: info, events: events, conn: s.hosts.get(s.broker, req.GetHostBrokerId(), s.logger)}
	ctx = WithHost(WithCall(ctx, info), host)

	if s.tracing != nil {
		if tctx, span, batch, ok := s.tracing.startCall(ctx, s.plugin.Name, info.Tool); ok {
			res, err := s.run(tctx, tool, info.Tool, req.GetInput())
			ev := s.finalEvent(tctx, info.Tool, res, err)
			ev.Spans = s.tracing.endCall(span, batch, ev)
			return events.final(ev)
		}
	}
	res, err := s.run(ctx, tool, info.Tool, req.GetInput())
	return events.final(s.finalEvent(ctx, info.Tool, res, err))
}

// run calls the tool, handing a panic to onPanic.
func (s *pluginServer) run(ctx context.Context, tool Tool, name string, input []byte) (res *Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, s.onPanic(name, v, debug.Stack())
			if err == nil {
				err = Errorf(CodePluginCrashed, "tool %s panicked: %v", name, v)
			}
		}
	}()
	return tool.Call(ctx, json.RawMessage(input))
}

func (s *pluginServer) finalEvent(ctx context.Context, name string, res *Result, err error) *pluginpb.CallEvent {
	if err != nil {
		if te, ok := AsToolError(err); ok {
			return errorEvent(te)
		}
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			if errors.Is(cerr, context.DeadlineExceeded) {
				return errorEvent(Errorf(CodeTimeout, "%s did not finish before its deadline", name))
			}
			return errorEvent(Errorf(CodeCancelled, "%s was cancelled", name))
		}
		return errorEvent(&ToolError{Code: CodeToolFailed, Message: err.Error()})
	}
	w, err := resultToWire(res)
	if err != nil {
		s.logger.Error("result not serializable", "tool", name, "error", err)
		return errorEvent(Errorf(CodeResultUnencoding, "the result of %s cannot be serialized: %v", name, err))
	}
	return &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Result{Result: w}}
}

func errorEvent(te *ToolError) *pluginpb.CallEvent {
	return &pluginpb.CallEvent{Event: &pluginpb.CallEvent_Error{Error: toolErrorToWire(te)}}
}

// eventSender serializes sends on one call's stream: progress may come from
// any goroutine of the tool, and nothing is sent after the final event.
type eventSender struct {
	mu   sync.Mutex
	send func(*pluginpb.CallEvent) error
	done bool
}

var errCallFinished = errors.New("the call has already finished")

func (e *eventSender) progress(p Progress) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return errCallFinished
	}
	return e.send(&pluginpb.CallEvent{Event: &pluginpb.CallEvent_Progress{Progress: progressToWire(p)}})
}

func (e *eventSender) final(ev *pluginpb.CallEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return errCallFinished
	}
	e.done = true
	return e.send(ev)
}

// callHost is the Host a tool sees during one call: progress travels on the
// call's own stream, approvals and process groups over the broker to the
// host's Host service.
type callHost struct {
	info   CallInfo
	events *eventSender
	conn   *hostConn // nil when the host offered no callback service
}

func (h *callHost) Progress(ctx context.Context, p Progress) error {
	return h.events.progress(p)
}

func (h *callHost) RequestApproval(ctx context.Context, req ApprovalRequest) (ApprovalResponse, error) {
	if h.conn == nil {
		return noHost{}.RequestApproval(ctx, req)
	}
	c, err := h.conn.wait(ctx)
	if err != nil {
		return ApprovalResponse{}, err
	}
	resp, err := c.RequestApproval(ctx, approvalToWire(h.info, req))
	if err != nil {
		return ApprovalResponse{}, fmt.Errorf("request approval: %w", err)
	}
	return ApprovalResponse{Approved: resp.GetApproved(), Reason: resp.GetReason(), Unanswered: resp.GetUnanswered()}, nil
}

func (h *callHost) ReportProcessGroup(ctx context.Context, pgid int, live bool) error {
	if h.conn == nil {
		return nil
	}
	c, err := h.conn.wait(ctx)
	if err != nil {
		return err
	}
	_, err = c.ReportProcessGroup(ctx, &pluginpb.ProcessGroupReport{
		CallId:    h.info.ID,
		SessionId: h.info.SessionID,
		Pgid:      int32(pgid),
		Live:      live,
	})
	if err != nil {
		return fmt.Errorf("report process group %d: %w", pgid, err)
	}
	return nil
}

// hostDialer dials the host's callback service once per broker id: the
// broker hands out an id's address only once.
type hostDialer struct {
	mu    sync.Mutex
	conns map[uint32]*hostConn
}

type hostConn struct {
	ready  chan struct{}
	client pluginpb.HostClient
	err    error
}

// get returns the connection for id, dialing it in the background the first
// time; nil when id is 0 (no callback service).
func (d *hostDialer) get(broker *plugin.GRPCBroker, id uint32, logger hclog.Logger) *hostConn {
	if id == 0 || broker == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.conns[id]; ok {
		return c
	}
	if d.conns == nil {
		d.conns = make(map[uint32]*hostConn)
	}
	c := &hostConn{ready: make(chan struct{})}
	d.conns[id] = c
	go func() {
		defer close(c.ready)
		conn, err := broker.Dial(id)
		if err != nil {
			logger.Error("dial the host's callback service", "broker_id", id, "error", err)
			c.err = fmt.Errorf("dial host callbacks (broker id %d): %w", id, err)
			return
		}
		c.client = pluginpb.NewHostClient(conn)
	}()
	return c
}

func (c *hostConn) wait(ctx context.Context) (pluginpb.HostClient, error) {
	select {
	case <-c.ready:
		return c.client, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
