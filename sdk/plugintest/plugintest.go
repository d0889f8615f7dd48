package plugintest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/policy"
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
	// Family is the family the host gives the plugin: its name, as for
	// every plugin the host discovers, when "".
	Family string
	// Unpinned takes the plugin in as the host takes one whose checksum is
	// not pinned (yagent plugins pin): its tools are treated as exec with
	// no roles, so every call asks.
	Unpinned bool
	// Policy is what the guard reads of the profile (read_paths,
	// network.allow, exec rules, sandbox); nil = none, so every URL asks.
	Policy *policy.Rules
	// Home is the home folder "~" expands to; "" = the user's.
	Home string
	// RawInput sends each call's input to the plugin as given, skipping the
	// host's parse, repair and schema validation: for tests of the
	// plugin's own checks of its input, which the host's would shadow.
	RawInput bool
	// Answer answers the guard's asks: true runs the call as if the user
	// approved it once. nil answers nothing, so an asking call fails with
	// needs_auth, as on a host where nobody can be asked.
	Answer func(Decision) bool
	// GRPCCalls sends calls as gRPC streams, as to a plugin built against
	// an sdk without the call channel, instead of on a call channel as a
	// host does to a plugin process it launches.
	GRPCCalls bool
}

// Decision is the host's guard's verdict on one call.
type Decision struct {
	CallID string
	Tool   string
	// Action is "allow", "ask" or "deny".
	Action string
	// Reason says why the call asks or is refused; Hint how a profile
	// would allow it.
	Reason, Hint string
	// Paths are the paths outside the workspace the call touches.
	Paths []string
	// Input is what the plugin receives when the call runs: each path and
	// URL argument as the guard resolved it.
	Input json.RawMessage
}

// Client is a plugin started by Start, as the host sees it.
type Client struct {
	// Host is the test host answering the plugin's callbacks.
	Host *Host
	// Workspace is the workspace given to calls that name none.
	Workspace string

	name   string
	family string
	remote *remote.Client
	seq    atomic.Uint64
	opts   Options
	// tools are the tools as the host serves them (toolspec.Admit), each
	// an adapter that runs the host's input pipeline (see input).
	tools   map[string]*adapter.Adapter
	mu      sync.Mutex
	guards  map[string]*guard.WorkspaceGuard // by workspace
	session map[string]*session.Session      // by session id
}

// Start serves p in-process and connects to it as the host does, over real
// gRPC with go-plugin's broker. It fails the test when p is invalid or does
// not describe itself, and when the host would skip one of its tools, with
// the host's reason (a custom plugin declaring a static tool's name, a
// schema that does not compile). The connection is closed when the test
// ends.
//
// Calls take their input as the host does (parse, repair, schema
// validation) and go through the host's guard (call/guard), as on a real
// host: see Client.Call.
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
	var channel *remote.CallChannel
	var pluginEnd net.Conn
	if !opts.GRPCCalls {
		var err error
		if channel, err = remote.NewCallChannel(); err != nil {
			t.Logf("plugintest: calls go over gRPC: %v", err)
		} else if pluginEnd, err = channel.PluginConn(); err != nil {
			t.Fatalf("plugintest.Start: %v", err)
		}
	}
	serverSet, err := sdk.ServerPluginSet(p, sdk.ServeOptions{
		CallConn: pluginEnd,
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
	rc, err := remote.Loopback(t, serverSet, hostAdapter{host})
	if err != nil {
		t.Fatalf("plugintest.Start: %v", err)
	}
	if channel != nil {
		rc.UseCallChannel(channel)
		t.Cleanup(rc.Close)
	}
	c := &Client{Host: host, Workspace: opts.Workspace, name: p.Name, family: opts.Family, remote: rc, opts: *opts,
		tools: map[string]*adapter.Adapter{}, guards: map[string]*guard.WorkspaceGuard{}, session: map[string]*session.Session{}}
	if c.Workspace == "" {
		c.Workspace = t.TempDir()
	}
	if c.family == "" {
		c.family = p.Name
	}
	// Describing right away also makes the plugin dial the host's callbacks
	// while the broker still offers them.
	desc, err := c.Describe(context.Background())
	if err != nil {
		t.Fatalf("plugintest.Start: %v", err)
	}
	if err := c.admit(desc.Specs); err != nil {
		t.Fatalf("plugintest.Start: %v", err)
	}
	return c
}

// admit takes in the specs as the host's surface does at load.
func (c *Client) admit(specs []sdk.Spec) error {
	var errs []error
	for _, spec := range specs {
		ad, reason := toolspec.Admit(spec, c.name, c.family, !c.opts.Unpinned)
		var in *adapter.Adapter
		if reason == "" {
			in = adapter.New(ad.Spec, c.family, ad.Tier, captureInput{}, adapter.Options{Trusted: ad.Trusted})
			reason = errText(in.SchemaError())
		}
		if reason != "" {
			errs = append(errs, fmt.Errorf("the host skips tool %s of plugin %s: %s", spec.Name, c.name, reason))
			continue
		}
		c.tools[spec.Name] = in
	}
	return errors.Join(errs...)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// CallChannel reports whether calls travel on a call channel, as to a
// plugin process the host launched, rather than as gRPC streams.
func (c *Client) CallChannel() bool { return c.remote.CallChannel() }

// Description is what a plugin says about itself, as the host reads it.
type Description struct {
	Name            string
	Version         string
	ProtocolVersion int
	Specs           []sdk.Spec
}

// Describe asks the plugin for its name, version and specs over gRPC.
func (c *Client) Describe(ctx context.Context) (Description, error) {
	d, err := c.remote.Describe(ctx)
	if err != nil {
		return Description{}, err
	}
	return Description{Name: d.Name, Version: d.Version, ProtocolVersion: d.ProtocolVersion, Specs: d.Specs}, nil
}

// Call runs tool with input as the host would: input is JSON-encoded (a
// json.RawMessage passes as is), info.Tool is set to tool, an empty info.ID
// gets a fresh one and an empty info.Workspace is c.Workspace. Progress is
// recorded in c.Host under the call's id. A tool's failure is a
// *sdk.ToolError.
//
// The host's input pipeline takes the input first, unless
// Options.RawInput: input the tool's schema rejects fails with the host's
// invalid_input text and never reaches the plugin; input the host repairs
// (a bare string for an array, ...) goes on repaired; nil input is {}.
//
// The host's guard then judges the call (Check): a call it refuses fails
// with denied, one it asks about with needs_auth unless Options.Answer
// approves it, each with the host's text; either way c.Host.Decisions
// records it. A call that runs receives what the host would send: each
// path and URL argument as the guard resolved it, and the outside paths
// it allowed in info.ApprovedPaths.
func (c *Client) Call(ctx context.Context, tool string, info sdk.CallInfo, input any) (*sdk.Result, error) {
	info, raw, err := c.prepare(tool, info, input)
	if err != nil {
		return nil, err
	}
	if a, ok := c.tools[tool]; ok {
		if !c.opts.RawInput {
			if raw, err = c.input(ctx, tool, raw); err != nil {
				return nil, err
			}
		}
		d, gd, sess, ok := c.judge(ctx, a, info, raw)
		if ok {
			c.Host.decide(d)
			approved := false
			switch gd.Action {
			case adapter.Deny:
				return nil, &sdk.ToolError{Code: sdk.CodeDenied, Message: adapter.RefusedText(tool, gd)}
			case adapter.Ask:
				if c.opts.Answer == nil || !c.opts.Answer(d) {
					return nil, &sdk.ToolError{Code: sdk.CodeNeedsAuth, Message: adapter.NeedsAuthText(tool, gd, "")}
				}
				approved = true
			}
			info.ApprovedPaths = append(info.ApprovedPaths, gd.Paths...)
			if info.Sandbox == nil {
				info.Sandbox = c.guardOf(info.Workspace).Sandbox(a.Spec(), sess, gd, approved)
			}
			raw = d.Input
		}
	}
	id := info.ID
	return c.remote.Call(ctx, info, raw, func(p sdk.Progress) { c.Host.record(id, p) })
}

// Check returns the host's guard's verdict on a call of tool with input,
// without running it or recording it. It fails for a tool the plugin does
// not serve, and for input that is no JSON object (the host would pass it
// on as {"input": ...}).
func (c *Client) Check(ctx context.Context, tool string, info sdk.CallInfo, input any) (Decision, error) {
	info, raw, err := c.prepare(tool, info, input)
	if err != nil {
		return Decision{}, err
	}
	a, ok := c.tools[tool]
	if !ok {
		return Decision{}, fmt.Errorf("plugintest: plugin %s serves no tool %s", c.name, tool)
	}
	if !c.opts.RawInput {
		if raw, err = c.input(ctx, tool, raw); err != nil {
			return Decision{}, err
		}
	}
	d, _, _, ok := c.judge(ctx, a, info, raw)
	if !ok {
		return Decision{}, fmt.Errorf("plugintest: the input of %s is no JSON object", tool)
	}
	return d, nil
}

// input runs the host's own input pipeline on raw, as the adapter does
// before its guard sees a call: parse (input that is no JSON object goes
// on as {"input": ...}), repair, validate against the schema. It returns
// what the guard and the plugin then receive, or the invalid_input failure
// the model would read.
func (c *Client) input(ctx context.Context, tool string, raw json.RawMessage) (json.RawMessage, error) {
	var got json.RawMessage
	// The pipeline reads no clock and no cancellation: a cancelled call
	// must reach the plugin, as it does through the host.
	res := c.tools[tool].Call(context.WithValue(context.WithoutCancel(ctx), captureKey{}, &got), nil, raw)
	if got == nil {
		return nil, &sdk.ToolError{Code: res.Code, Message: res.Text}
	}
	return got, nil
}

// captureInput is the executor of the adapters input runs: it keeps the
// input the host would send the plugin, in the *json.RawMessage under
// captureKey, and runs nothing.
type captureInput struct{}

type captureKey struct{}

func (captureInput) Execute(ctx context.Context, _ sdk.CallInfo, input json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
	*ctx.Value(captureKey{}).(*json.RawMessage) = append(json.RawMessage(nil), input...)
	return &sdk.Result{}, nil
}

// prepare fills info and encodes input as Call does.
func (c *Client) prepare(tool string, info sdk.CallInfo, input any) (sdk.CallInfo, json.RawMessage, error) {
	// nil is a call with no arguments, which MCP's front passes on as {}.
	raw := json.RawMessage(`{}`)
	if input != nil {
		var err error
		if raw, err = json.Marshal(input); err != nil {
			return info, nil, fmt.Errorf("plugintest: encode input of %s: %w", tool, err)
		}
	}
	info.Tool = tool
	if info.ID == "" {
		info.ID = "test-call-" + strconv.FormatUint(c.seq.Add(1), 10)
	}
	if info.Workspace == "" {
		info.Workspace = c.Workspace
	}
	return info, raw, nil
}

// judge runs the host's guard on one call; ok is false when raw is no JSON
// object, which the guard never sees.
func (c *Client) judge(ctx context.Context, a *adapter.Adapter, info sdk.CallInfo, raw json.RawMessage) (Decision, adapter.Decision, *session.Session, bool) {
	args, _ := adapter.ParseArgs(raw)
	if args == nil {
		return Decision{}, adapter.Decision{}, nil, false
	}
	sess := c.sessionOf(info.SessionID)
	gd := c.guardOf(info.Workspace).Check(ctx, adapter.GuardRequest{Spec: a.Spec(), Args: args, Workspace: info.Workspace, Session: sess, Trusted: a.Trusted()})
	d := Decision{CallID: info.ID, Tool: info.Tool, Action: gd.Action.String(), Reason: gd.Reason, Hint: gd.Hint, Paths: gd.Paths, Input: raw}
	if gd.Args != nil {
		if in, err := adapter.EncodeArgs(gd.Args); err == nil {
			d.Input = in
		}
	}
	return d, gd, sess, true
}

func (c *Client) guardOf(ws string) *guard.WorkspaceGuard {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.guards[ws]
	if g == nil {
		g = guard.New(guard.Options{Workspace: ws, Home: c.opts.Home, Policy: c.opts.Policy})
		c.guards[ws] = g
	}
	return g
}

func (c *Client) sessionOf(id string) *session.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.session[id]
	if s == nil {
		s = session.New(id)
		c.session[id] = s
	}
	return s
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
	decisions []Decision
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

// Decisions returns the guard's verdict on every call, in order.
func (h *Host) Decisions() []Decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Decision(nil), h.decisions...)
}

func (h *Host) decide(d Decision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.decisions = append(h.decisions, d)
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
