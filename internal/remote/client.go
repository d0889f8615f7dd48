package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yagent/yagent/internal/wire"
	"github.com/yagent/yagent/sdk"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// Description is what a plugin says about itself.
type Description struct {
	Name            string
	Version         string
	ProtocolVersion int
	Specs           []sdk.Spec
}

// Client is the host's handle on one running plugin, dispensed from
// PluginSet. It is safe for concurrent use: calls run in parallel on one
// connection.
type Client struct {
	client pluginpb.PluginClient
	// hostID is the broker id of the host's callback service, 0 when none.
	hostID uint32
	done   <-chan struct{}
	host   sdk.Host
	seq    atomic.Uint64
	// offered is the call channel handed to the plugin, until Describe
	// says whether it serves it; ch runs the calls when it does.
	offered *CallChannel
	ch      *channelClient

	mu    sync.Mutex
	calls map[string]*inflight
}

// inflight is one running call, so callbacks naming its id reach its ctx
// and progress func.
type inflight struct {
	ctx      context.Context
	info     sdk.CallInfo
	progress func(sdk.Progress)
	host     sdk.Host

	mu   sync.Mutex
	done bool
}

func newClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn, host sdk.Host, version int) *Client {
	if host == nil {
		host = sdk.HostFrom(context.Background()) // approves nothing, ignores reports
	}
	r := &Client{
		client: pluginClient(conn, version),
		done:   ctx.Done(),
		host:   host,
		calls:  make(map[string]*inflight),
	}
	if broker != nil {
		r.hostID = broker.NextId()
		go broker.AcceptAndServe(r.hostID, func(opts []grpc.ServerOption) *grpc.Server {
			s := wire.NewGRPCServer(opts)
			registerHost(s, &hostServer{r: r}, version)
			return s
		})
	}
	return r
}

// Done is closed when the plugin process has exited (go-plugin cancels the
// client's context then, after it has read the last of the plugin's
// stderr). It is never closed for a plugin run in-process.
func (r *Client) Done() <-chan struct{} { return r.done }

// UseCallChannel offers c, whose other end the plugin's process inherited,
// for the plugin's calls. Describe takes it up when the plugin serves it,
// and closes it otherwise; the Client owns c from here on. Call it before
// Describe, and before any call.
func (r *Client) UseCallChannel(c *CallChannel) {
	if r.offered != nil {
		r.offered.Close()
	}
	r.offered = c
}

// takeUp starts calling on the offered call channel when the plugin serves
// it, and closes it when the plugin does not.
func (r *Client) takeUp(served bool) error {
	c := r.offered
	if c == nil {
		return nil
	}
	r.offered = nil
	if !served || r.ch != nil {
		c.Close()
		return nil
	}
	conn, err := c.conn()
	if err != nil {
		return fmt.Errorf("take up the call channel: %w", err)
	}
	r.ch = newChannelClient(conn)
	return nil
}

// Close releases the call channel: calls in flight on it fail. The
// plugin's process is the go-plugin client's to stop.
func (r *Client) Close() {
	if r.offered != nil {
		r.offered.Close()
		r.offered = nil
	}
	if r.ch != nil {
		r.ch.close()
	}
}

// CallChannel reports whether calls travel on the call channel rather than
// as gRPC streams.
func (r *Client) CallChannel() bool { return r.ch != nil }

// Describe asks the plugin for its identity and tool specs. The host calls
// it right after dispensing: the plugin dials the host's callback service
// when it first sees its broker id, and the broker holds that id's address
// only for a few seconds.
func (r *Client) Describe(ctx context.Context) (Description, error) {
	resp, err := r.client.Describe(ctx, &pluginpb.DescribeRequest{HostBrokerId: r.hostID})
	if err != nil {
		return Description{}, fmt.Errorf("describe: %w", err)
	}
	if err := r.takeUp(resp.GetCallChannel()); err != nil {
		return Description{}, fmt.Errorf("describe: %w", err)
	}
	d := Description{
		Name:            resp.GetName(),
		Version:         resp.GetVersion(),
		ProtocolVersion: int(resp.GetProtocolVersion()),
	}
	for _, s := range resp.GetSpecs() {
		d.Specs = append(d.Specs, specFromWire(s))
	}
	return d, nil
}

// Call runs one tool in the plugin and returns its result.
//
// info.Tool names the tool; info.ID, when empty, gets a fresh id;
// info.Deadline, when zero, is ctx's deadline if it has one. Progress
// events, from the call's stream and from the Host.Progress callback, go to
// progress (which may be nil; calls to it are serialized and stop when Call
// returns). The tool's failure is returned as a *sdk.ToolError; a failure of the
// call itself (the plugin died, the connection broke) is another error
// wrapping the gRPC status; when ctx ends first, the error wraps ctx.Err().
func (r *Client) Call(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
	if info.ID == "" {
		info.ID = "call-" + strconv.FormatUint(r.seq.Add(1), 10)
	}
	if d, ok := ctx.Deadline(); ok && info.Deadline.IsZero() {
		info.Deadline = d
	}
	call := &inflight{ctx: ctx, info: info, progress: progress, host: r.host}
	if err := r.register(call); err != nil {
		return nil, err
	}
	defer r.unregister(call)

	req := callToWire(info, input, r.hostID)
	var next func() (*pluginpb.CallEvent, error)
	if ch := r.ch; ch != nil {
		q, err := ch.start(req, traceHeaders(ctx))
		if err != nil {
			return nil, callError(ctx, info, err)
		}
		defer ch.end(q)
		next = func() (*pluginpb.CallEvent, error) { return ch.next(ctx, q) }
	} else {
		streamCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := r.client.Call(injectTrace(streamCtx), req)
		if err != nil {
			return nil, callError(ctx, info, err)
		}
		next = stream.Recv
	}
	for {
		ev, err := next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("call %s: %w", info.Tool, status.Error(codes.Internal, "the plugin ended the call without a result"))
		}
		if err != nil {
			return nil, callError(ctx, info, err)
		}
		if spans := ev.GetSpans(); len(spans) > 0 {
			if sink := spanSink(ctx); sink != nil {
				sink(spansFromWire(spans))
			}
		}
		switch e := ev.GetEvent().(type) {
		case *pluginpb.CallEvent_Progress:
			call.report(progressFromWire(e.Progress))
		case *pluginpb.CallEvent_Result:
			return resultFromWire(e.Result), nil
		case *pluginpb.CallEvent_Error:
			return nil, toolErrorFromWire(e.Error)
		}
	}
}

func callError(ctx context.Context, info sdk.CallInfo, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("call %s: %w", info.Tool, cerr)
	}
	return fmt.Errorf("call %s: %w", info.Tool, err)
}

// Shutdown asks the plugin to release what it holds (its OnShutdown); the
// process keeps running until the host stops it.
func (r *Client) Shutdown(ctx context.Context) error {
	if _, err := r.client.Shutdown(ctx, &pluginpb.ShutdownRequest{}); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// EndSession tells the plugin that the agent session id ended (its
// OnSessionEnd). A plugin that predates the call is not an error: it holds
// nothing it could release.
func (r *Client) EndSession(ctx context.Context, id string) error {
	if _, err := r.client.EndSession(ctx, &pluginpb.EndSessionRequest{SessionId: id, HostBrokerId: r.hostID}); err != nil {
		if status.Code(err) == codes.Unimplemented {
			return nil
		}
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

func (r *Client) register(c *inflight) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.calls[c.info.ID]; dup {
		return fmt.Errorf("call id %q is already in flight", c.info.ID)
	}
	r.calls[c.info.ID] = c
	return nil
}

func (r *Client) unregister(c *inflight) {
	r.mu.Lock()
	delete(r.calls, c.info.ID)
	r.mu.Unlock()
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

func (r *Client) lookup(id string) *inflight {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id]
}

func (c *inflight) report(p sdk.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	if c.progress != nil {
		c.progress(p)
		return
	}
	_ = c.host.Progress(sdk.WithCall(c.ctx, c.info), p)
}

// hostServer is the host's side of the Host service: the plugin's
// callbacks, routed to the call they name.
type hostServer struct {
	pluginpb.UnimplementedHostServer
	r *Client
}

// callInfo returns the CallInfo of the call id names, or what the request
// itself says when that call is not (or no longer) in flight.
func (h *hostServer) callInfo(id, session, tool string) (sdk.CallInfo, *inflight) {
	if c := h.r.lookup(id); c != nil {
		return c.info, c
	}
	return sdk.CallInfo{ID: id, SessionID: session, Tool: tool}, nil
}

// RequestApproval hands the question to the host under the call's own
// context: it carries whatever the caller of Call put in it (the host's
// session), and it ends when the call does or the plugin gives up the
// request. A call that is not in flight has nobody to ask: refused here.
func (h *hostServer) RequestApproval(ctx context.Context, req *pluginpb.ApprovalRequest) (*pluginpb.ApprovalResponse, error) {
	call := h.r.lookup(req.GetCallId())
	if call == nil {
		return &pluginpb.ApprovalResponse{Reason: fmt.Sprintf("call %q is not in flight, so nobody can be asked", req.GetCallId()), Unanswered: true}, nil
	}
	callCtx, cancel := context.WithCancel(call.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	resp, err := h.r.host.RequestApproval(sdk.WithCall(callCtx, call.info), approvalFromWire(req))
	if err != nil {
		if callCtx.Err() != nil {
			return nil, status.FromContextError(callCtx.Err()).Err()
		}
		return nil, status.Errorf(codes.Unknown, "request approval: %v", err)
	}
	return &pluginpb.ApprovalResponse{Approved: resp.Approved, Reason: resp.Reason, Unanswered: resp.Unanswered}, nil
}

func (h *hostServer) Progress(ctx context.Context, req *pluginpb.ProgressReport) (*pluginpb.Empty, error) {
	info, call := h.callInfo(req.GetCallId(), "", "")
	p := progressFromWire(req.GetProgress())
	if call != nil {
		call.report(p)
		return &pluginpb.Empty{}, nil
	}
	_ = h.r.host.Progress(sdk.WithCall(ctx, info), p)
	return &pluginpb.Empty{}, nil
}

func (h *hostServer) ReportProcessGroup(ctx context.Context, req *pluginpb.ProcessGroupReport) (*pluginpb.Empty, error) {
	info, _ := h.callInfo(req.GetCallId(), req.GetSessionId(), "")
	if err := h.r.host.ReportProcessGroup(sdk.WithCall(ctx, info), int(req.GetPgid()), req.GetLive()); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "report process group %d: %v", req.GetPgid(), err)
	}
	return &pluginpb.Empty{}, nil
}
