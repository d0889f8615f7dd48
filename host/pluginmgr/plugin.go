package pluginmgr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/internal/wire"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// Plugin is one plugin binary as Load found it. Its exported fields are
// set by Load and not changed afterwards; its methods are safe for
// concurrent use. Concurrent calls share one process.
type Plugin struct {
	// Name is the plugin's name, the <name> of yagent-plugin-<name>.
	Name string
	// Path is the binary's absolute path.
	Path string
	// Version is what the plugin says of itself.
	Version string
	// Protocol is the plugin protocol version it speaks (one of
	// remote.ProtocolVersions).
	Protocol int
	// SHA256 is the binary's sum, lowercase hex.
	SHA256 string
	// Pinned is true when the lock file names this plugin with this sum.
	Pinned bool
	// Specs are the plugin's tool specs, sorted by name.
	Specs []sdk.Spec
	// Refused says why the plugin cannot be used (a pin mismatch, a binary
	// a command could have written that nothing vouches for, an
	// *UntrustedError; a binary that does not start or describe itself);
	// nil when it can.
	Refused error
	// Built is true when the binary has the sum the host was built with
	// for this name (Options.Built).
	Built bool
	// Writable says why a command could have written the binary, for a
	// plugin refused as untrusted or for its pin; "" when none could, or
	// when it was not judged (vouched for, Dev, or no Options.Writable).
	Writable string
	// Off says why the plugin is switched off (Options.Off); "" when it is
	// not. An off plugin is never launched: it has no Version nor Specs.
	Off string
	// Dev is set when the binary comes from the dev override folder
	// (Options.DevDir); Pinned is then false, whatever the lock says.
	Dev bool
	// Shadows is, for a Dev plugin, the binary of the plugin folders it
	// overrides; "" when none.
	Shadows string

	m  *Manager
	id fileID // the binary's identity when it was hashed

	mu        sync.Mutex
	inst      *instance
	starting  *startOp
	crashes   int // consecutive: reset by a call that did not crash
	lastCrash time.Time
	launches  int
	groups    map[int]bool // process groups reported live
}

var _ adapter.Executor = (*Plugin)(nil)

// instance is one running process of a plugin.
type instance struct {
	client *plugin.Client
	remote *remote.Client
	pid    int
	tail   *stderrTail
	desc   remote.Description
	// cgroups is the folder under which the process makes its commands'
	// cgroups (cgroup.DirOf, read while it lives); "" without cgroup v2.
	cgroups string
}

// startOp is one start in progress; concurrent callers wait on it.
type startOp struct {
	done chan struct{}
	inst *instance
	err  error
}

// PID returns the process id of the running plugin, 0 when it is not
// running.
func (p *Plugin) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == nil {
		return 0
	}
	return p.inst.pid
}

// CallChannel reports whether the running plugin's calls travel on its call
// channel (remote.CallChannel) rather than as gRPC streams; false when it is
// not running.
func (p *Plugin) CallChannel() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inst != nil && p.inst.remote.CallChannel()
}

// Execute runs info.Tool in the plugin, starting the plugin first when it
// is not running. Failures come back as a *sdk.ToolError: the tool's own;
// plugin_crashed when the process died during the call (naming the plugin,
// with its panic text if it panicked; the next call starts a fresh
// process); timeout or cancelled when ctx ended first; plugin_unavailable
// when the plugin is refused, cannot start, or failed the call otherwise.
func (p *Plugin) Execute(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (*sdk.Result, error) {
	if p.Refused != nil {
		return nil, &sdk.ToolError{Code: sdk.CodePluginFailed, Message: p.Refused.Error()}
	}
	if p.Off != "" {
		return nil, &sdk.ToolError{Code: sdk.CodePluginFailed, Message: fmt.Sprintf("plugin %s is off: %s", p.Name, p.Off)}
	}
	if info.Tool == "" {
		return nil, errors.New("pluginmgr: Execute without a tool name")
	}
	inst, err := p.instance(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, contextError(ctx, p.Name, info.Tool)
		}
		return nil, &sdk.ToolError{
			Code:    sdk.CodePluginFailed,
			Message: fmt.Sprintf("plugin %s could not start for %s: %v", p.Name, info.Tool, err),
		}
	}
	res, err := inst.remote.Call(ctx, info, input, progress)
	if err == nil {
		p.survived(inst)
		return res, nil
	}
	if te, ok := sdk.AsToolError(err); ok {
		p.survived(inst)
		return nil, te
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx, p.Name, info.Tool)
	}
	return nil, p.failed(inst, info, err)
}

func contextError(ctx context.Context, plugin, tool string) *sdk.ToolError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return sdk.Errorf(sdk.CodeTimeout, "%s (plugin %s) did not finish before its deadline", tool, plugin)
	}
	return sdk.Errorf(sdk.CodeCancelled, "%s (plugin %s) was cancelled", tool, plugin)
}

// survived records a call the process lived through: the crash count
// starts over.
func (p *Plugin) survived(inst *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inst == inst {
		p.crashes = 0
	}
}

// failed handles a call that failed without an answer from the tool. When
// the process died (or the connection to it is gone) it is a crash: the
// instance is dropped, the plugin's process groups are killed and the call
// fails with plugin_crashed. Otherwise the call fails with
// plugin_unavailable and the process stays.
func (p *Plugin) failed(inst *instance, info sdk.CallInfo, callErr error) error {
	exited := false
	t := time.NewTimer(p.m.crashGrace)
	select {
	case <-inst.remote.Done():
		exited = true
	case <-t.C:
	}
	t.Stop()
	if !exited && status.Code(callErr) != codes.Unavailable {
		return &sdk.ToolError{
			Code:    sdk.CodePluginFailed,
			Message: fmt.Sprintf("plugin %s failed the call to %s: %v", p.Name, info.Tool, callErr),
		}
	}

	panicText := inst.tail.panicText()
	p.crashed(inst)
	msg := fmt.Sprintf("plugin %s crashed during %s", p.Name, info.Tool)
	switch {
	case panicText != "":
		msg += ": " + panicText
	case exited:
		msg += fmt.Sprintf(" (process %d exited)", inst.pid)
	default:
		msg += fmt.Sprintf(" (the connection to process %d broke: %v)", inst.pid, callErr)
	}
	msg += "; the call did not complete and the plugin starts again on the next call"
	p.m.logger.Error("plugin crashed", "plugin", p.Name, "pid", inst.pid, "tool", info.Tool, "panic", panicText)
	return &sdk.ToolError{
		Code:    sdk.CodePluginCrashed,
		Message: msg,
		Data:    map[string]any{"plugin": p.Name, "pid": inst.pid, "panic": panicText},
	}
}

// crashed drops inst (once, whichever of its failed calls gets here
// first), kills the process groups the plugin reported and the cgroups of
// its commands in flight, and reaps the process.
func (p *Plugin) crashed(inst *instance) {
	p.mu.Lock()
	first := p.inst == inst
	if first {
		p.inst = nil
		p.crashes++
		p.lastCrash = time.Now()
	}
	p.mu.Unlock()
	if t := p.m.tel(); t != nil && first {
		t.PluginCrashed(p.Name)
	}
	p.killGroups()
	p.killLiveCgroups(inst)
	inst.client.Kill()
	// Once more, now that the process is gone: a command it started
	// meanwhile.
	p.killLiveCgroups(inst)
	go p.removeCgroups(inst)
}

// removeCgroups removes the cgroup folders a dead plugin left, once the
// groups killed have emptied (bounded; what a background command still
// runs in stays).
func (p *Plugin) removeCgroups(inst *instance) {
	if inst.cgroups == "" {
		return
	}
	for range 50 {
		if cgroup.RemoveEmpty(inst.cgroups) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// instance returns the running instance, starting one when there is none.
// Starts are single-flight: concurrent callers wait on the same start,
// which runs on its own so a caller giving up does not abort it.
func (p *Plugin) instance(ctx context.Context) (*instance, error) {
	for {
		p.mu.Lock()
		inst := p.inst
		p.mu.Unlock()
		if inst == nil {
			break
		}
		select {
		case <-inst.remote.Done():
			// It died between calls: a crash no call was in flight for.
			p.m.logger.Error("plugin exited while idle", "plugin", p.Name, "pid", inst.pid, "panic", inst.tail.panicText())
			p.crashed(inst)
		default:
			return inst, nil
		}
	}
	p.mu.Lock()
	if p.inst != nil { // started meanwhile
		inst := p.inst
		p.mu.Unlock()
		return inst, nil
	}
	select {
	case <-p.m.done:
		p.mu.Unlock()
		return nil, errClosed
	default:
	}
	op := p.starting
	if op == nil {
		op = &startOp{done: make(chan struct{})}
		p.starting = op
		var wait time.Duration
		if p.crashes > 0 {
			wait = p.m.opts.Backoff(p.crashes-1) - time.Since(p.lastCrash)
		}
		go p.start(op, wait)
	}
	p.mu.Unlock()
	select {
	case <-op.done:
		return op.inst, op.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Plugin) start(op *startOp, wait time.Duration) {
	var inst *instance
	var err error
	if wait > 0 {
		p.m.logger.Debug("plugin restart backoff", "plugin", p.Name, "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-p.m.done:
		}
		t.Stop()
	}
	select {
	case <-p.m.done:
		err = errClosed
	default:
		inst, err = p.launch()
	}

	p.mu.Lock()
	p.starting = nil
	p.launches++
	if err == nil {
		select {
		case <-p.m.done: // closed while starting
			err = errClosed
		default:
			p.inst = inst
		}
	}
	if err != nil {
		p.crashes++
		p.lastCrash = time.Now()
	}
	op.inst, op.err = inst, err
	restarted := err == nil && p.launches > 1
	p.mu.Unlock()
	if t := p.m.tel(); t != nil && restarted {
		t.PluginRestarted(p.Name)
	}
	if err != nil && inst != nil {
		inst.client.Kill()
		op.inst = nil
	}
	close(op.done)
}

// startTimeout bounds a plugin's start-up: the handshake and Describe.
const startTimeout = 30 * time.Second

// launch starts the plugin's process, connects, and asks it to describe
// itself (which also lets it dial the host's callback service).
func (p *Plugin) launch() (*instance, error) {
	if id, err := statID(p.Path); err != nil {
		return nil, err
	} else if p.id != (fileID{}) && id != p.id {
		return nil, fmt.Errorf("%s changed since it was loaded (its sha256 %s no longer holds); restart yagent to load it again", p.Path, p.SHA256)
	}
	env, err := p.m.pluginEnv(p.Name)
	if err != nil {
		return nil, err
	}
	// A private empty folder to run in: a plugin that opens a relative
	// path instead of the one the host resolved fails loudly, rather than
	// reading the host's working folder.
	dir, err := os.MkdirTemp("", sdk.WorkdirPrefix+p.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("make the working folder of plugin %s: %w", p.Name, err)
	}
	cmd := exec.Command(p.Path)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PWD=") }), "PWD="+dir)
	setParentDeathSignal(cmd)
	// Calls travel on a socket pair the plugin inherits (see
	// remote.CallChannel); without one they go over gRPC.
	var channel *remote.CallChannel
	if !p.m.opts.GRPCCalls {
		if channel, err = remote.NewCallChannel(); err != nil {
			p.m.logger.Debug("no call channel: calls go over gRPC", "plugin", p.Name, "error", err)
			channel = nil
		} else {
			channel.Attach(cmd)
		}
	}
	// The gRPC connection is mutual TLS with Ed25519 keys the host makes
	// (remote.ChannelTLS); go-plugin's AutoMTLS, with P-521 keys, where the
	// system cannot hand them over.
	ctls, err := remote.NewChannelTLS()
	if err != nil {
		p.m.logger.Debug("no channel TLS: go-plugin's AutoMTLS instead", "plugin", p.Name, "error", err)
		ctls = nil
	} else {
		ctls.Attach(cmd)
		defer ctls.Close()
	}
	tail := &stderrTail{}
	logger := newPluginLogger(p.m.logger, p.Name, filepath.Base(p.Path))
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: remote.PluginSet(&pluginHost{p: p}),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         ctls == nil,
		TLSConfig:        ctls.Config(),
		GRPCDialOptions:  wire.DialOptions(),
		Managed:          false,
		StartTimeout:     startTimeout,
		Logger:           logger,
		Stderr:           tail,
		SyncStdout:       logger.Named("stdout").StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		SyncStderr:       logger.Named("stderr").StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	})
	inst := &instance{client: client, tail: tail}
	watching := false // the folder goes when the process does
	fail := func(err error) (*instance, error) {
		client.Kill()
		if channel != nil {
			channel.Close()
		}
		if inst.remote != nil {
			inst.remote.Close()
		}
		if !watching {
			_ = os.RemoveAll(dir)
		}
		if last := tail.lastLines(); last != "" {
			err = fmt.Errorf("%w (its stderr: %s)", err, last)
		}
		return nil, err
	}
	rpc, err := client.Client()
	if channel != nil {
		channel.Started()
	}
	ctls.Started()
	if err != nil {
		if v, ok := refusedVersion(err); ok {
			return fail(&remote.VersionError{Path: p.Path, Plugin: v})
		}
		return fail(fmt.Errorf("launch %s: %w", p.Path, err))
	}
	if rc := client.ReattachConfig(); rc != nil {
		inst.pid = rc.Pid
		if dir, err := cgroup.DirOf(inst.pid); err == nil {
			inst.cgroups = dir
		}
	}
	if inst.remote, err = remote.Dispense(rpc); err != nil {
		return fail(err)
	}
	if channel != nil {
		inst.remote.UseCallChannel(channel)
		channel = nil // the Client's now
	}
	watching = true
	go func() {
		<-inst.remote.Done()
		_ = os.RemoveAll(dir)
		// A plugin that dies with no call in flight may still own commands
		// (yielded tasks): they die with it, now, not at the next call.
		p.mu.Lock()
		current := p.inst == inst
		p.mu.Unlock()
		if current {
			p.m.logger.Warn("plugin exited", "plugin", p.Name, "pid", inst.pid, "panic", inst.tail.panicText())
			p.crashed(inst)
			return
		}
		p.killLiveCgroups(inst)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if inst.desc, err = inst.remote.Describe(ctx); err != nil {
		return fail(err)
	}
	switch {
	case inst.desc.Name != p.Name:
		return fail(fmt.Errorf("%s says it is plugin %q, not %q: rename the binary %s%s", p.Path, inst.desc.Name, p.Name, BinaryPrefix, inst.desc.Name))
	case inst.desc.ProtocolVersion != client.NegotiatedVersion():
		return fail(fmt.Errorf("%s chose plugin protocol %d in its handshake but says it speaks %d: rebuild it against one sdk", p.Path, client.NegotiatedVersion(), inst.desc.ProtocolVersion))
	}
	if inst.desc.ProtocolVersion != sdk.ProtocolVersion {
		p.m.logger.Info("plugin speaks the previous plugin protocol: under sandbox.network proxy its commands get no network; rebuild it against the current sdk",
			"plugin", p.Name, "protocol", inst.desc.ProtocolVersion, "current", sdk.ProtocolVersion)
	}
	sort.Slice(inst.desc.Specs, func(i, j int) bool { return inst.desc.Specs[i].Name < inst.desc.Specs[j].Name })
	p.m.logger.Debug("plugin started", "plugin", p.Name, "pid", inst.pid)
	return inst, nil
}

// incompatibleVersion is how go-plugin refuses a handshake naming a
// protocol version the host's plugin set does not hold.
var incompatibleVersion = regexp.MustCompile(`incompatible API version with plugin\. Plugin version: (-?\d+)`)

// refusedVersion returns the protocol version a plugin's handshake named
// when go-plugin refused it for that.
func refusedVersion(err error) (int, bool) {
	m := incompatibleVersion.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, false
	}
	v, err := strconv.Atoi(m[1])
	return v, err == nil
}

// stop shuts the running instance down (Close).
func (p *Plugin) stop(ctx context.Context) error {
	p.mu.Lock()
	op := p.starting
	p.mu.Unlock()
	if op != nil {
		select { // a start that finishes now sees the manager closed
		case <-op.done:
		case <-ctx.Done():
		}
	}
	p.mu.Lock()
	inst := p.inst
	p.inst = nil
	p.mu.Unlock()
	var err error
	if inst != nil {
		select {
		case <-inst.remote.Done():
		default:
			if serr := inst.remote.Shutdown(ctx); serr != nil {
				err = fmt.Errorf("plugin %s: %w", p.Name, serr)
			}
		}
		inst.client.Kill()
		p.killLiveCgroups(inst)
	}
	p.killGroups()
	return err
}

// endSession tells the running instance, if any, that session id ended.
func (p *Plugin) endSession(ctx context.Context, id string) error {
	p.mu.Lock()
	inst := p.inst
	p.mu.Unlock()
	if inst == nil {
		return nil
	}
	select {
	case <-inst.remote.Done():
		return nil // gone: it holds nothing any more
	default:
	}
	if err := inst.remote.EndSession(ctx, id); err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	return nil
}

// killGroups kills the process groups the plugin reported live.
func (p *Plugin) killGroups() {
	p.mu.Lock()
	groups := make([]int, 0, len(p.groups))
	for pgid := range p.groups {
		groups = append(groups, pgid)
	}
	clear(p.groups)
	p.mu.Unlock()
	for _, pgid := range groups {
		if err := killGroup(pgid); err != nil {
			p.m.logger.Warn("kill plugin process group", "plugin", p.Name, "pgid", pgid, "error", err)
		}
	}
}

// killLiveCgroups kills the live-N cgroups of inst, the commands it had in
// flight: their setsid and double-forked children too. bg-N (background
// commands) and kept-N (what returned calls left) are not touched.
func (p *Plugin) killLiveCgroups(inst *instance) {
	if inst == nil || inst.cgroups == "" {
		return
	}
	n, err := cgroup.KillLive(inst.cgroups)
	if err != nil {
		p.m.logger.Warn("kill plugin cgroups", "plugin", p.Name, "dir", inst.cgroups, "error", err)
	}
	if n > 0 {
		p.m.logger.Debug("killed plugin cgroups", "plugin", p.Name, "dir", inst.cgroups, "groups", n)
	}
}

// pluginHost answers one plugin's callbacks.
type pluginHost struct{ p *Plugin }

// Progress receives progress of calls no longer in flight (a call's own
// progress goes to its Execute's progress func): it is dropped.
func (h *pluginHost) Progress(ctx context.Context, _ sdk.Progress) error {
	return nil
}

func (h *pluginHost) RequestApproval(ctx context.Context, req sdk.ApprovalRequest) (sdk.ApprovalResponse, error) {
	if h.p.m.opts.Host == nil {
		return sdk.ApprovalResponse{Approved: false, Reason: "no one is attached to the host to approve it"}, nil
	}
	return h.p.m.opts.Host.RequestApproval(ctx, h.p.Name, sdk.CallFrom(ctx), req)
}

func (h *pluginHost) ReportProcessGroup(ctx context.Context, pgid int, live bool) error {
	if err := checkGroup(pgid); err != nil {
		return err
	}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	if live {
		h.p.groups[pgid] = true
	} else {
		delete(h.p.groups, pgid)
	}
	return nil
}
