package authz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/guard"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// These are the end-to-end authorization tests of
// docs/ARCHITECTURE.md#core-rules (§11–§13): the real dispatcher, the real
// WorkspaceGuard and the real loop, with the test playing the user on the bus
// (the session's answerer is authz.Remote, which leaves the answer to it).

// recorder is a tool's executor that records what ran.
type recorder struct {
	mu    sync.Mutex
	calls int
	infos []sdk.CallInfo
}

func (r *recorder) Execute(_ context.Context, info sdk.CallInfo, _ json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.infos = append(r.infos, info)
	return &sdk.Result{Text: "ran " + info.Tool}, nil
}

func (r *recorder) ran() (int, sdk.CallInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == 0 {
		return 0, sdk.CallInfo{}
	}
	return r.calls, r.infos[len(r.infos)-1]
}

// syncBuf collects the loop's log.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	t        *testing.T
	ws       string
	outside  string
	settings string
	bus      *bus.Dispatcher
	user     *bus.Subscription // the test, playing the user
	loop     *authz.Loop
	surf     *surface.Surface
	sess     *session.Session
	rec      map[string]*recorder
	log      *syncBuf
}

type harnessOpts struct {
	yolo     bool
	rules    []policy.ExecRule
	settings string // settings file; "" = a fresh one
	ws       string // "" = a fresh one
	after    func(time.Duration) <-chan time.Time
}

var toolSpecs = []sdk.Spec{
	{Name: "read_it", Effect: sdk.EffectRead, Roles: map[string]sdk.Role{"path": sdk.RolePathRead},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "write_it", Effect: sdk.EffectWrite, Roles: map[string]sdk.Role{"path": sdk.RolePathWrite},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "exec_it", Effect: sdk.EffectExec, Roles: map[string]sdk.Role{"command": sdk.RoleCommand, "danger": sdk.RoleDangerFlag},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"danger":{"type":"boolean"}},"required":["command"]}`)},
	{Name: "always_it", Effect: sdk.EffectNone, AlwaysAsk: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)},
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, ws: o.ws, outside: t.TempDir(), settings: o.settings, bus: bus.New(), rec: map[string]*recorder{}, log: &syncBuf{}}
	if h.ws == "" {
		h.ws = t.TempDir()
	}
	if h.settings == "" {
		h.settings = filepath.Join(t.TempDir(), ".yagent", authz.SettingsFile)
	}
	if err := os.WriteFile(filepath.Join(h.outside, "notes.txt"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(h.log, nil))
	projects, err := authz.OpenProjects(h.settings)
	if err != nil {
		t.Fatal(err)
	}
	passes := &authz.Passes{Yolo: o.yolo, Projects: projects, Workspace: h.ws}
	h.loop = authz.NewLoop(authz.LoopOptions{Bus: h.bus, Logger: logger, After: o.after})
	g := guard.New(guard.Options{Workspace: h.ws, Policy: &policy.Rules{Exec: policy.ExecRules{Rules: o.rules}}})
	ap := authz.NewApprover(authz.ApproverOptions{Passes: passes, Loop: h.loop, Logger: logger})
	var adapters []*adapter.Adapter
	for _, sp := range toolSpecs {
		sp.Description = "A test tool."
		r := &recorder{}
		h.rec[sp.Name] = r
		adapters = append(adapters, adapter.New(sp, "test", toolspec.Warm, r, adapter.Options{Workspace: h.ws, Bus: h.bus, Trusted: true}))
	}
	h.surf = surface.NewSurfaceFromAdapters(adapters, surface.Options{
		Workspace: h.ws, Guard: g, Approver: ap, Bus: h.bus, Logger: logger,
		Profile: &config.Profile{Name: "test", Deferred: config.DeferredOff},
	})
	h.sess = session.New("s-" + uuid.NewString())
	h.sess.SetAnswerer(authz.Remote{})
	h.user = h.bus.Subscribe(64)
	t.Cleanup(h.user.Close)
	return h
}

// call runs a tool in the background; the result arrives on the channel.
func (h *harness) call(ctx context.Context, tool string, args map[string]any) <-chan *adapter.Result {
	b, _ := json.Marshal(args)
	out := make(chan *adapter.Result, 1)
	go func() { out <- h.surf.Call(ctx, h.sess, tool, b) }()
	return out
}

// question waits for the user_help_needed the loop announces.
func (h *harness) question() bus.Event {
	h.t.Helper()
	for {
		select {
		case ev := <-h.user.Critical():
			if ev.Type == bus.UserHelpNeeded {
				return ev
			}
		case <-time.After(10 * time.Second):
			h.t.Fatal("no user_help_needed within 10s")
		}
	}
}

// noQuestion asserts that nothing was asked: events are published before
// the call returns, so after it nothing more can come.
func (h *harness) noQuestion() {
	h.t.Helper()
	for {
		select {
		case ev := <-h.user.Critical():
			if ev.Type == bus.UserHelpNeeded {
				h.t.Fatalf("the user was asked: %+v", ev)
			}
		default:
			return
		}
	}
}

func (h *harness) answer(q bus.Event, a session.ApprovalAnswer) {
	h.bus.Publish(bus.Event{Type: bus.UserHelpResponse, SessionID: q.SessionID, RequestID: q.RequestID, Tool: q.Tool, Payload: a})
}

func (h *harness) result(ch <-chan *adapter.Result) *adapter.Result {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		h.t.Fatal("the call did not return within 10s")
	}
	return nil
}

func TestAuthorization_ApproveRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	target := filepath.Join(h.outside, "notes.txt")
	done := h.call(t.Context(), "read_it", map[string]any{"path": target})
	q := h.question()
	p, ok := q.Payload.(session.ApprovalPrompt)
	if !ok || q.Tool != "read_it" || q.SessionID != h.sess.ID() || q.RequestID == "" || p.RequestID != q.RequestID || !slices.Contains(p.Paths, target) {
		t.Fatalf("question %+v; want read_it's prompt with its id, session and %s", q, target)
	}
	if n, _ := h.rec["read_it"].ran(); n != 0 {
		t.Fatal("the tool ran before the user answered")
	}
	h.answer(q, session.ApprovalAnswer{Approved: true, Scope: session.ScopeOnce})
	res := h.result(done)
	n, info := h.rec["read_it"].ran()
	if res.IsError() || n != 1 {
		t.Fatalf("approved call: %s %q, ran %d times", res.Code, res.Text, n)
	}
	if !slices.Contains(info.ApprovedPaths, target) {
		t.Fatalf("CallInfo.ApprovedPaths = %v, want %s: the plugin must be told what was approved", info.ApprovedPaths, target)
	}
	// Once means once: the next call asks again.
	done = h.call(t.Context(), "read_it", map[string]any{"path": target})
	h.answer(h.question(), session.ApprovalAnswer{Approved: true})
	if res := h.result(done); res.IsError() {
		t.Fatalf("second call: %s", res.Text)
	}
}

func TestAuthorization_DenyFedBackToModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	done := h.call(t.Context(), "write_it", map[string]any{"path": filepath.Join(h.outside, "x")})
	h.answer(h.question(), session.ApprovalAnswer{Approved: false, Reason: "write it under build/ instead"})
	res := h.result(done)
	if res.Code != sdk.CodeDenied || !strings.Contains(res.Text, "write it under build/ instead") || !strings.Contains(res.Text, "write_it") {
		t.Fatalf("declined call = %s %q; want denied with the user's reason for the model", res.Code, res.Text)
	}
	if n, _ := h.rec["write_it"].ran(); n != 0 {
		t.Fatal("a declined call ran")
	}
}

func TestAuthorization_SessionLevelNoAsk(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	done := h.call(t.Context(), "exec_it", map[string]any{"command": "cat /etc/hosts"})
	h.answer(h.question(), session.ApprovalAnswer{Approved: true, Scope: session.ScopeSession})
	if res := h.result(done); res.IsError() {
		t.Fatalf("first call: %s", res.Text)
	}
	res := h.result(h.call(t.Context(), "exec_it", map[string]any{"command": "cat /etc/hostname"}))
	h.noQuestion()
	if n, _ := h.rec["exec_it"].ran(); res.IsError() || n != 2 {
		t.Fatalf("second call with a session pass: %s %q, ran %d", res.Code, res.Text, n)
	}
	// The pass is the tool's: another tool still asks.
	done = h.call(t.Context(), "write_it", map[string]any{"path": filepath.Join(h.outside, "y")})
	h.answer(h.question(), session.ApprovalAnswer{Approved: false})
	h.result(done)
}

func TestAuthorization_NoAskInsideWorkspace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_it", map[string]any{"path": "src/main.go"}},
		{"read_it", map[string]any{"path": "."}},
		{"write_it", map[string]any{"path": filepath.Join(h.ws, "new", "f.txt")}},
		{"exec_it", map[string]any{"command": "go test ./... 2>&1 | tail -5"}},
	} {
		res := h.result(h.call(t.Context(), c.tool, c.args))
		h.noQuestion()
		if res.IsError() {
			t.Fatalf("%s %v inside the workspace: %s %q", c.tool, c.args, res.Code, res.Text)
		}
	}
}

func TestAuthorization_MismatchedRequestIDIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	done := h.call(t.Context(), "read_it", map[string]any{"path": filepath.Join(h.outside, "notes.txt")})
	q := h.question()
	wrong := q
	wrong.RequestID = uuid.NewString()
	h.answer(wrong, session.ApprovalAnswer{Approved: true})
	other := q
	other.SessionID = "another-session"
	h.answer(other, session.ApprovalAnswer{Approved: true})
	h.bus.Publish(bus.Event{Type: bus.ToolFinished, RequestID: q.RequestID}) // not a response at all

	deadline := time.Now().Add(10 * time.Second)
	for !(strings.Contains(h.log.String(), wrong.RequestID) && strings.Contains(h.log.String(), "another-session")) {
		select {
		case r := <-done:
			t.Fatalf("a mismatched response was taken for the answer: %s %q", r.Code, r.Text)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warning about the mismatched responses; log:\n%s", h.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("a mismatched response was taken for the answer: %s %q", r.Code, r.Text)
	default:
	}
	if n, _ := h.rec["read_it"].ran(); n != 0 || h.loop.Pending() != 1 {
		t.Fatalf("ran %d times, %d pending; want 0 and the request still waiting", n, h.loop.Pending())
	}
	h.answer(q, session.ApprovalAnswer{Approved: true})
	if res := h.result(done); res.IsError() {
		t.Fatalf("the matching answer: %s", res.Text)
	}
}

func TestAuthorization_CancelUnblocksTool(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	ctx, cancel := context.WithCancel(t.Context())
	done := h.call(ctx, "write_it", map[string]any{"path": filepath.Join(h.outside, "x")})
	h.question()
	cancel()
	res := h.result(done)
	if res.Code != sdk.CodeCancelled {
		t.Fatalf("cancelled while asking = %s %q, want cancelled", res.Code, res.Text)
	}
	if n, _ := h.rec["write_it"].ran(); n != 0 || h.loop.Pending() != 0 {
		t.Fatalf("ran %d, %d pending after cancel", n, h.loop.Pending())
	}
}

func TestAuthorization_TimeoutUnblocksTool(t *testing.T) {
	t.Parallel()
	fire := make(chan time.Time)
	h := newHarness(t, harnessOpts{after: func(time.Duration) <-chan time.Time { return fire }})
	done := h.call(t.Context(), "write_it", map[string]any{"path": filepath.Join(h.outside, "x")})
	h.question()
	close(fire)
	res := h.result(done)
	if res.Code != sdk.CodeNeedsAuth || !strings.Contains(res.Text, "timed out") {
		t.Fatalf("timed out while asking = %s %q, want needs_auth saying the question timed out", res.Code, res.Text)
	}
	if n, _ := h.rec["write_it"].ran(); n != 0 || h.loop.Pending() != 0 {
		t.Fatalf("ran %d, %d pending after the timeout", n, h.loop.Pending())
	}
}

func TestAuthorization_AlwaysAsk(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	done := h.call(t.Context(), "always_it", map[string]any{"x": "harmless"})
	q := h.question()
	if p := q.Payload.(session.ApprovalPrompt); !strings.Contains(p.Reason, "always_it") {
		t.Fatalf("prompt %+v does not say which tool asks", p)
	}
	h.answer(q, session.ApprovalAnswer{Approved: true})
	if res := h.result(done); res.IsError() {
		t.Fatalf("approved: %s", res.Text)
	}
}

func TestAuthorization_NobodyToAskNeedsAuth(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.sess.SetAnswerer(nil)
	res := h.result(h.call(t.Context(), "read_it", map[string]any{"path": filepath.Join(h.outside, "notes.txt")}))
	h.noQuestion()
	if res.Code != sdk.CodeNeedsAuth || !strings.Contains(res.Text, "-y") || !strings.Contains(res.Text, "read_paths") {
		t.Fatalf("no answerer = %s %q; want needs_auth naming -y and the profile line", res.Code, res.Text)
	}
}

func TestAuthorization_YoloAndAdminDeny(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{yolo: true, rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "rm", Args: []string{"-rf"}}}})
	target := filepath.Join(h.outside, "x")
	res := h.result(h.call(t.Context(), "write_it", map[string]any{"path": target}))
	h.noQuestion()
	n, info := h.rec["write_it"].ran()
	if res.IsError() || n != 1 || !slices.Contains(info.ApprovedPaths, target) {
		t.Fatalf("-y outside write: %s %q ran %d paths %v; want it to run with the path approved", res.Code, res.Text, n, info.ApprovedPaths)
	}
	res = h.result(h.call(t.Context(), "exec_it", map[string]any{"command": "env rm -rf build", "danger": true}))
	h.noQuestion()
	if n, _ := h.rec["exec_it"].ran(); res.Code != sdk.CodeDenied || n != 0 || !strings.Contains(res.Text, "rm") {
		t.Fatalf("admin deny under -y = %s %q (ran %d); want denied", res.Code, res.Text, n)
	}
	if res := h.result(h.call(t.Context(), "exec_it", map[string]any{"command": "rm -r build"})); res.IsError() {
		t.Fatalf("a command the deny rule does not match: %s", res.Text)
	}
}

func TestAuthorization_ProjectPassSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	target := filepath.Join(h.outside, "notes.txt")
	done := h.call(t.Context(), "read_it", map[string]any{"path": target})
	h.answer(h.question(), session.ApprovalAnswer{Approved: true, Scope: session.ScopeProject})
	if res := h.result(done); res.IsError() {
		t.Fatalf("approved for the project: %s", res.Text)
	}
	fi, err := os.Stat(h.settings)
	if err != nil {
		t.Fatalf("settings file %s: %v; want it written", h.settings, err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings file mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(h.settings)
	var doc struct {
		Projects []string `json:"authorized_projects"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || !slices.Contains(doc.Projects, h.ws) {
		t.Fatalf("settings %s: %v; want authorized_projects holding %s", b, err, h.ws)
	}

	// A new host (new loop, new session) on the same workspace and settings.
	again := newHarness(t, harnessOpts{ws: h.ws, settings: h.settings})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_it", map[string]any{"path": target}},
		{"write_it", map[string]any{"path": filepath.Join(h.outside, "new")}},
	} {
		res := again.result(again.call(t.Context(), c.tool, c.args))
		again.noQuestion()
		if res.IsError() {
			t.Fatalf("%s after a restart with a project pass: %s %q", c.tool, res.Code, res.Text)
		}
	}
	// Another project is not covered.
	other := newHarness(t, harnessOpts{settings: h.settings})
	done = other.call(t.Context(), "read_it", map[string]any{"path": target})
	other.answer(other.question(), session.ApprovalAnswer{Approved: false})
	other.result(done)
}

// ttyAnswerer stands for a terminal: it answers in order and records how
// many prompts were open at once.
type ttyAnswerer struct {
	mu       sync.Mutex
	open     int
	maxOpen  int
	asked    []session.ApprovalPrompt
	release  chan struct{}
	answer   session.ApprovalAnswer
	question string
}

func (a *ttyAnswerer) Approve(ctx context.Context, p session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	a.mu.Lock()
	a.open++
	a.maxOpen = max(a.maxOpen, a.open)
	a.asked = append(a.asked, p)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.open--
		a.mu.Unlock()
	}()
	select {
	case <-a.release:
	case <-ctx.Done():
		return session.ApprovalAnswer{}, ctx.Err()
	}
	return a.answer, nil
}

func (a *ttyAnswerer) Help(_ context.Context, q string) (string, error) {
	a.question = q
	return "blue", nil
}

// TestAuthorization_AnswererDrivenFromLoop: the session's answerer (a TTY,
// MCP elicitation) is called by the loop, one question at a time per
// session; its answer travels back as user_help_response with the
// question's request_id; a session answer skips the questions queued
// behind it for the same tool.
func TestAuthorization_AnswererDrivenFromLoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	tty := &ttyAnswerer{release: make(chan struct{}), answer: session.ApprovalAnswer{Approved: true, Scope: session.ScopeSession}}
	h.sess.SetAnswerer(tty)
	var dones []<-chan *adapter.Result
	for i := range 3 {
		dones = append(dones, h.call(t.Context(), "write_it", map[string]any{"path": filepath.Join(h.outside, string(rune('a'+i)))}))
	}
	var asked []bus.Event
	for range 3 {
		asked = append(asked, h.question())
	}
	close(tty.release)
	for _, d := range dones {
		if res := h.result(d); res.IsError() {
			t.Fatalf("call: %s %q", res.Code, res.Text)
		}
	}
	tty.mu.Lock()
	defer tty.mu.Unlock()
	if len(tty.asked) != 1 || tty.maxOpen != 1 {
		t.Fatalf("the terminal was asked %d times, %d at once; want once: the session answer covers the rest", len(tty.asked), tty.maxOpen)
	}
	var responses int
	for {
		select {
		case ev := <-h.user.Critical():
			if ev.Type == bus.UserHelpResponse && slices.ContainsFunc(asked, func(q bus.Event) bool { return q.RequestID == ev.RequestID }) {
				responses++
			}
			continue
		default:
		}
		break
	}
	if responses != 3 {
		t.Fatalf("%d user_help_response events paired with the 3 questions, want 3", responses)
	}
}

// TestLoop_Help: free-form questions ride the same loop.
func TestLoop_Help(t *testing.T) {
	t.Parallel()
	b := bus.New()
	l := authz.NewLoop(authz.LoopOptions{Bus: b})
	s := session.New("s")
	tty := &ttyAnswerer{}
	s.SetAnswerer(tty)
	got, err := l.Help(t.Context(), s, "ask_user_for_help", "which color?")
	if err != nil || got != "blue" || tty.question != "which color?" {
		t.Fatalf("Help = %q, %v (asked %q)", got, err, tty.question)
	}
}

func TestPluginHost_RequestApproval(t *testing.T) {
	t.Parallel()
	b := bus.New()
	ap := authz.NewApprover(authz.ApproverOptions{Loop: authz.NewLoop(authz.LoopOptions{Bus: b})})
	host := authz.NewPluginHost(ap, nil)
	user := b.Subscribe(8)
	defer user.Close()
	s := session.New("s")
	s.SetAnswerer(authz.Remote{})
	go func() {
		for ev := range user.Critical() {
			if ev.Type == bus.UserHelpNeeded {
				b.Publish(bus.Event{Type: bus.UserHelpResponse, SessionID: ev.SessionID, RequestID: ev.RequestID, Payload: session.ApprovalAnswer{Approved: true, Reason: "ok"}})
			}
		}
	}()
	// The plugin asks mid-call, under the call's own context: its session
	// is the one asked.
	resp, err := host.RequestApproval(session.NewContext(t.Context(), s), "fs", sdk.CallInfo{ID: "c1", Tool: "read_file", SessionID: "s"},
		sdk.ApprovalRequest{Reason: "follow a symlink out", Paths: []string{"/srv/x"}})
	if err != nil || !resp.Approved || resp.Reason != "ok" {
		t.Fatalf("RequestApproval = %+v, %v; want the plugin's request approved", resp, err)
	}
	// A context without a session (no call in flight) cannot be asked about.
	resp, _ = host.RequestApproval(t.Context(), "fs", sdk.CallInfo{ID: "gone"}, sdk.ApprovalRequest{Reason: "x"})
	if resp.Approved || resp.Reason == "" {
		t.Fatalf("request for a finished call = %+v, want refused with a reason", resp)
	}
}

// failingAnswerer is a client that claims to answer but cannot.
type failingAnswerer struct{}

func (failingAnswerer) Approve(context.Context, session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	return session.ApprovalAnswer{}, errors.New("elicitation/create is not allowed on this protocol")
}
func (failingAnswerer) Help(context.Context, string) (string, error) { return "", errors.New("no") }

// TestAuthorization_AnswererFailureFailsClosed: an answerer that fails is
// nobody answering: needs_auth, with what happened, never the user's "no".
func TestAuthorization_AnswererFailureFailsClosed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{})
	h.sess.SetAnswerer(failingAnswerer{})
	res := h.result(h.call(t.Context(), "read_it", map[string]any{"path": filepath.Join(h.outside, "notes.txt")}))
	if res.Code != sdk.CodeNeedsAuth || !strings.Contains(res.Text, "not allowed on this protocol") || strings.Contains(res.Text, "declined") {
		t.Fatalf("failing answerer = %s %q; want needs_auth naming the failure", res.Code, res.Text)
	}
	if n, _ := h.rec["read_it"].ran(); n != 0 {
		t.Fatal("the call ran without an approval")
	}
}
