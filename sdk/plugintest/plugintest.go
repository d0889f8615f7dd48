package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/yagent/yagent/sdk"
)

// Options tunes Start; nil means the defaults.
type Options struct {
	// Approve answers the plugin's approval requests. nil denies every
	// request, with a reason saying no approver is set.
	Approve func(ctx context.Context, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error)
	// Workspace is the workspace of calls whose CallInfo names none;
	// default a fresh t.TempDir().
	Workspace string
}

// Client is a plugin started by Start, as the host sees it.
type Client struct {
	// Host is the test host answering the plugin's callbacks.
	Host *Host
	// Workspace is the workspace given to calls that name none.
	Workspace string

	name   string
	remote *sdk.Remote
	seq    atomic.Uint64
}

// Start serves p in-process and connects to it as the host does, over real
// gRPC with go-plugin's broker. It fails the test when p is invalid or does
// not describe itself. The connection is closed when the test ends.
//
// A tool that panics fails its call with plugin_crashed and the panic text
// (the stack goes to the test log) instead of exiting, as a real plugin
// process would.
//
// sdk.Settings reads the environment: to test settings, build the plugin
// from a function that takes them.
func Start(t testing.TB, p sdk.Plugin, opts *Options) *Client {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	host := &Host{approve: opts.Approve, progress: map[string][]sdk.Progress{}, live: map[int]bool{}}
	serverSet, err := sdk.ServerPluginSet(p, sdk.ServeOptions{
		OnPanic: func(tool string, value any, stack []byte) error {
			t.Logf("plugintest: tool %s panicked: %v\n%s", tool, value, stack)
			return &sdk.ToolError{
				Code:    sdk.CodePluginCrashed,
				Message: fmt.Sprintf("plugin %s crashed: panic: %v", p.Name, value),
			}
		},
	})
	if err != nil {
		t.Fatalf("plugintest.Start: %v", err)
	}
	clientSet := sdk.ClientPluginSet(hostAdapter{host})
	ps := plugin.PluginSet{}
	for key, srv := range serverSet[sdk.ProtocolVersion] {
		ps[key] = bothSides{server: srv.(plugin.GRPCPlugin), client: clientSet[sdk.ProtocolVersion][key].(plugin.GRPCPlugin)}
	}
	client, server := plugin.TestPluginGRPCConn(t, false, ps)
	t.Cleanup(func() {
		server.Stop()
		_ = client.Close()
	})
	remote, err := sdk.DispenseRemote(client)
	if err != nil {
		t.Fatalf("plugintest.Start: %v", err)
	}
	c := &Client{Host: host, Workspace: opts.Workspace, name: p.Name, remote: remote}
	if c.Workspace == "" {
		c.Workspace = t.TempDir()
	}
	// Describing right away also makes the plugin dial the host's callbacks
	// while the broker still offers them.
	if _, err := c.Describe(context.Background()); err != nil {
		t.Fatalf("plugintest.Start: %v", err)
	}
	return c
}

// bothSides is one go-plugin plugin serving the plugin's side and
// dispensing the host's, as a loopback connection needs.
type bothSides struct {
	plugin.NetRPCUnsupportedPlugin
	server, client plugin.GRPCPlugin
}

func (b bothSides) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	return b.server.GRPCServer(broker, s)
}

func (b bothSides) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return b.client.GRPCClient(ctx, broker, conn)
}

// Describe asks the plugin for its name, version and specs over gRPC.
func (c *Client) Describe(ctx context.Context) (sdk.Description, error) {
	return c.remote.Describe(ctx)
}

// Call runs tool with input as the host would: input is JSON-encoded (a
// json.RawMessage passes as is), info.Tool is set to tool, an empty info.ID
// gets a fresh one and an empty info.Workspace is c.Workspace. Progress is
// recorded in c.Host under the call's id. A tool's failure is a
// *sdk.ToolError.
func (c *Client) Call(ctx context.Context, tool string, info sdk.CallInfo, input any) (*sdk.Result, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("plugintest: encode input of %s: %w", tool, err)
	}
	info.Tool = tool
	if info.ID == "" {
		info.ID = "test-call-" + strconv.FormatUint(c.seq.Add(1), 10)
	}
	if info.Workspace == "" {
		info.Workspace = c.Workspace
	}
	id := info.ID
	return c.remote.Call(ctx, info, raw, func(p sdk.Progress) { c.Host.record(id, p) })
}

// EndSession tells the plugin, over gRPC as the host does, that the agent
// session id ended (its OnSessionEnd).
func (c *Client) EndSession(ctx context.Context, id string) error {
	return c.remote.EndSession(ctx, id)
}

// Host is the test host: it records what the plugin reports and answers
// its approval requests. It is safe for concurrent use.
type Host struct {
	approve func(ctx context.Context, call sdk.CallInfo, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error)

	mu        sync.Mutex
	progress  map[string][]sdk.Progress
	live      map[int]bool
	reports   []GroupReport
	approvals []Approval
}

// GroupReport is one ReportProcessGroup callback.
type GroupReport struct {
	CallID string
	PGID   int
	Live   bool
}

// Approval is one approval request and the answer it got.
type Approval struct {
	Call     sdk.CallInfo
	Request  sdk.ApprovalRequest
	Response sdk.ApprovalResponse
	Err      error
}

// Progress returns the progress events of the call with id callID, in order.
func (h *Host) Progress(callID string) []sdk.Progress {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sdk.Progress(nil), h.progress[callID]...)
}

// LiveGroups returns the process groups reported live and not reported
// ended, sorted.
func (h *Host) LiveGroups() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for pgid := range h.live {
		out = append(out, pgid)
	}
	sort.Ints(out)
	return out
}

// GroupReports returns every process-group report, in order.
func (h *Host) GroupReports() []GroupReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]GroupReport(nil), h.reports...)
}

// Approvals returns every approval request and its answer, in order.
func (h *Host) Approvals() []Approval {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Approval(nil), h.approvals...)
}

func (h *Host) record(callID string, p sdk.Progress) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.progress[callID] = append(h.progress[callID], p)
}

// hostAdapter is the sdk.Host the connection's callbacks reach.
type hostAdapter struct{ h *Host }

func (a hostAdapter) Progress(ctx context.Context, p sdk.Progress) error {
	a.h.record(sdk.CallFrom(ctx).ID, p)
	return nil
}

func (a hostAdapter) RequestApproval(ctx context.Context, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	call := sdk.CallFrom(ctx)
	resp := sdk.ApprovalResponse{Approved: false, Reason: "the test host has no approver (plugintest.Options.Approve)"}
	var err error
	if a.h.approve != nil {
		resp, err = a.h.approve(ctx, call, req)
	}
	a.h.mu.Lock()
	a.h.approvals = append(a.h.approvals, Approval{Call: call, Request: req, Response: resp, Err: err})
	a.h.mu.Unlock()
	return resp, err
}

func (a hostAdapter) ReportProcessGroup(ctx context.Context, pgid int, live bool) error {
	a.h.mu.Lock()
	defer a.h.mu.Unlock()
	a.h.reports = append(a.h.reports, GroupReport{CallID: sdk.CallFrom(ctx).ID, PGID: pgid, Live: live})
	if live {
		a.h.live[pgid] = true
	} else {
		delete(a.h.live, pgid)
	}
	return nil
}
