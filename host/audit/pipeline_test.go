package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/sdk"
)

// pluginDir holds the fs, shell and cognitive plugins, built from the
// source under test by TestMain.
var pluginDir string

func TestMain(m *testing.M) {
	// Outside the temp folders: the test binary vouches for no plugin, and
	// the host refuses one there that nothing vouches for.
	dir, err := testbuild.BinDir("audit-test-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := testbuild.Build(testbuild.Plugins(dir, "fs", "shell", "cognitive")...); err != nil {
		fmt.Fprintf(os.Stderr, "build the plugins: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// host is a real host (app.Open, the real guard, approver and plugins)
// in a throwaway home and workspace.
type host struct {
	t        testing.TB
	app      *app.App
	home, ws string
	outside  string // a folder outside the workspace, with notes.txt
	readRoot string // a folder in read_paths, with notes.txt

	mu    sync.Mutex
	calls map[string]int // calls made, by session
}

type hostOpts struct {
	yolo   bool
	config string // the user's config.yaml, beside the test's read_paths and exec rules
	// sandboxOff runs without the kernel sandbox, for the benchmarks.
	sandboxOff bool
}

func newHost(t testing.TB, o hostOpts) *host {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	h := &host{t: t, calls: map[string]int{}, home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"), readRoot: filepath.Join(root, "shared")}
	for _, d := range []string{filepath.Join(h.home, ".yagent"), h.ws, h.outside, h.readRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(h.ws, "README.md"), filepath.Join(h.outside, "notes.txt"), filepath.Join(h.readRoot, "notes.txt")} {
		if err := os.WriteFile(f, []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if o.sandboxOff {
		o.config += "sandbox: off\n"
	}
	cfg := fmt.Sprintf("read_paths: [%s]\nexec:\n  rules:\n    - {action: allow, program: \"true\"}\n    - {action: deny, program: shred}\n%s", h.readRoot, o.config)
	if err := os.WriteFile(filepath.Join(h.home, ".yagent", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(t.Context(), app.Options{Workspace: h.ws, Home: h.home, PluginDirs: []string{pluginDir}, Yolo: o.yolo,
		CacheDir: filepath.Join(root, "cache"), LockFile: filepath.Join(root, "plugins.lock")})
	if err != nil {
		t.Fatal(err)
	}
	h.app = a
	t.Cleanup(func() { a.Close(context.Background()) })
	return h
}

func (h *host) auditDir() string { return filepath.Join(h.home, ".yagent", "audit") }

// call runs tool through the surface, as an MCP client's call would.
func (h *host) call(sess *session.Session, tool string, args map[string]any) (string, string) {
	h.t.Helper()
	raw, _ := json.Marshal(args)
	h.mu.Lock()
	h.calls[sess.ID()]++
	h.mu.Unlock()
	ctx := session.NewContext(h.t.Context(), sess)
	res := h.app.Surface.Call(ctx, sess, tool, raw)
	return res.Code, res.Text
}

// lines reads every line of the live audit file.
func (h *host) lines() []map[string]any {
	h.t.Helper()
	return readJSONLines(h.t, filepath.Join(h.auditDir(), "audit.jsonl"))
}

// lineOf returns the line of kind for the session's last call of tool.
// Lines reach the file within the flusher's period: it polls, bounded,
// until every call of the session has its call line.
func (h *host) lineOf(sess *session.Session, kind, tool string) map[string]any {
	h.t.Helper()
	h.mu.Lock()
	made := h.calls[sess.ID()]
	h.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got map[string]any
		done := 0
		if _, err := os.Stat(filepath.Join(h.auditDir(), "audit.jsonl")); err == nil {
			for _, l := range h.lines() {
				if l["session"] != sess.ID() {
					continue
				}
				if l["kind"] == "call" {
					done++
				}
				if l["kind"] == kind && l["tool"] == tool {
					got = l
				}
			}
		}
		if got != nil && done >= made {
			return got
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no %s line for %s in session %s", kind, tool, sess.ID())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// user answers every question with its next answer.
type user struct {
	mu      sync.Mutex
	answers []session.ApprovalAnswer
	asked   int
}

func (u *user) Approve(context.Context, session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked++
	if len(u.answers) == 0 {
		return session.ApprovalAnswer{}, fmt.Errorf("the test has no answer left")
	}
	a := u.answers[0]
	u.answers = u.answers[1:]
	return a, nil
}

func (u *user) Help(context.Context, string) (string, error) { return "", fmt.Errorf("no help here") }

func newSession(answers ...session.ApprovalAnswer) *session.Session {
	s := session.New("")
	if answers != nil {
		s.SetAnswerer(&user{answers: answers})
	}
	return s
}

// TestAudit_EveryDecisionKind: every way a call is decided writes its
// decision line, with the ground and who answered, and a call line.
func TestAudit_EveryDecisionKind(t *testing.T) {
	t.Parallel()
	h := newHost(t, hostOpts{})
	yolo := newHost(t, hostOpts{yolo: true})
	yes := session.ApprovalAnswer{Approved: true}
	tests := []struct {
		name     string
		h        *host
		sess     *session.Session
		pre      func(h *host, s *session.Session) // calls before the one judged
		tool     string
		args     func(h *host) map[string]any
		decision string
		basis    string
		rule     string
		by       string // answer.by; "" = no answer
		approved bool
		allowed  bool
	}{
		{name: "inside the workspace", tool: "read_file", args: func(h *host) map[string]any { return map[string]any{"path": "README.md"} },
			decision: "allow", basis: "workspace", allowed: true},
		{name: "by a read root", tool: "read_file", args: func(h *host) map[string]any { return map[string]any{"path": filepath.Join(h.readRoot, "notes.txt")} },
			decision: "allow", basis: "read_root", allowed: true},
		{name: "by a rule", tool: "run_bash", args: func(h *host) map[string]any { return map[string]any{"command": "true"} },
			decision: "allow", basis: "rule", rule: "{action: allow, program: true}", allowed: true},
		{name: "no effect", tool: "think", args: func(h *host) map[string]any { return map[string]any{"thought": "plan"} },
			decision: "allow", basis: "no_effect", allowed: true},
		{name: "denied by a rule", tool: "run_bash", args: func(h *host) map[string]any { return map[string]any{"command": "shred -u README.md"} },
			decision: "deny", basis: "rule", rule: "{action: deny, program: shred}"},
		{name: "asked, approved by the user", sess: newSession(yes), tool: "read_file",
			args:     func(h *host) map[string]any { return map[string]any{"path": filepath.Join(h.outside, "notes.txt")} },
			decision: "ask", basis: "guard", by: "user", approved: true, allowed: true},
		{name: "asked, declined", sess: newSession(session.ApprovalAnswer{Approved: false, Reason: "not that"}), tool: "read_file",
			args:     func(h *host) map[string]any { return map[string]any{"path": filepath.Join(h.outside, "notes.txt")} },
			decision: "ask", basis: "guard", by: "user"},
		{name: "asked, by the session's pass", sess: newSession(session.ApprovalAnswer{Approved: true, Scope: session.ScopeSession}), tool: "write_file",
			pre: func(h *host, s *session.Session) {
				h.call(s, "write_file", map[string]any{"path": filepath.Join(h.outside, "a.txt"), "content": "a"})
			},
			args: func(h *host) map[string]any {
				return map[string]any{"path": filepath.Join(h.outside, "b.txt"), "content": "b"}
			},
			decision: "ask", basis: "guard", by: "session_pass", approved: true, allowed: true},
		{name: "asked, by -y", h: yolo, tool: "read_file",
			args:     func(h *host) map[string]any { return map[string]any{"path": filepath.Join(h.outside, "notes.txt")} },
			decision: "ask", basis: "guard", by: "yolo_pass", approved: true, allowed: true},
		{name: "asked, nobody to ask", tool: "read_file",
			args:     func(h *host) map[string]any { return map[string]any{"path": filepath.Join(h.outside, "notes.txt")} },
			decision: "ask", basis: "guard", by: "nobody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh, sess := tt.h, tt.sess
			if hh == nil {
				hh = h
			}
			if sess == nil {
				sess = session.New("")
			}
			if tt.pre != nil {
				tt.pre(hh, sess)
			}
			code, text := hh.call(sess, tt.tool, tt.args(hh))
			d := hh.lineOf(sess, "decision", tt.tool)
			if d["decision"] != tt.decision || d["basis"] != tt.basis || d["allowed"] != tt.allowed {
				t.Errorf("decision line %v; want decision %s basis %s allowed %v (call: %s %s)", d, tt.decision, tt.basis, tt.allowed, code, text)
			}
			if r, _ := d["rule"].(string); r != tt.rule {
				t.Errorf("rule %q, want %q", r, tt.rule)
			}
			ans, _ := d["answer"].(map[string]any)
			switch {
			case tt.by == "" && ans != nil:
				t.Errorf("answer %v, want none", ans)
			case tt.by != "" && (ans == nil || ans["by"] != tt.by || ans["approved"] != tt.approved):
				t.Errorf("answer %v, want by %s approved %v", ans, tt.by, tt.approved)
			}
			for _, k := range []string{"time", "call", "family", "effect"} {
				if s, _ := d[k].(string); s == "" {
					t.Errorf("decision line has no %s: %v", k, d)
				}
			}
			c := hh.lineOf(sess, "call", tt.tool)
			if c["call"] != d["call"] || c["allowed"] != tt.allowed {
				t.Errorf("call line %v does not go with decision %v", c, d)
			}
			if got, _ := c["code"].(string); (got == "") != tt.allowed {
				t.Errorf("call line code %q, want success exactly when allowed (%v)", got, tt.allowed)
			}
			if _, ok := c["duration_ms"].(float64); !ok {
				t.Errorf("call line without duration_ms: %v", c)
			}
		})
	}
}

// TestAudit_NoContentInLog: what a call writes never reaches the log, nor
// do the secrets of a command line; the digest and length do.
func TestAudit_NoContentInLog(t *testing.T) {
	t.Parallel()
	h := newHost(t, hostOpts{})
	sess := session.New("")
	const body, repl, pw = "PLANTED-BODY-7f3a91", "PLANTED-REPL-22c4e0", "PLANTED-PW-9d01b7"
	if code, text := h.call(sess, "write_file", map[string]any{"path": "s.txt", "content": "x " + body + " y"}); code != "" {
		t.Fatalf("write_file: %s %s", code, text)
	}
	if code, text := h.call(sess, "search_replace_in_file", map[string]any{"path": "s.txt", "old_string": body, "new_string": repl}); code != "" {
		t.Fatalf("search_replace_in_file: %s %s", code, text)
	}
	if code, text := h.call(sess, "run_bash", map[string]any{"command": "true --password=" + pw + " https://u:" + pw + "@h/?token=" + pw}); code != "" {
		t.Fatalf("run_bash: %s %s", code, text)
	}
	b, err := os.ReadFile(filepath.Join(h.ws, "s.txt"))
	if err != nil || !strings.Contains(string(b), repl) {
		t.Fatalf("the plugin did not write the file (%q, %v): the test proves nothing", b, err)
	}
	if err := h.app.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(h.auditDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(h.auditDir(), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{body, repl, pw} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds %s", e.Name(), s)
			}
		}
	}
	d := h.lineOf(sess, "decision", "write_file")
	content, _ := d["args"].(map[string]any)["content"].(map[string]any)
	if len(content) != 2 || content["len"] != float64(len(body)+4) || len(content["hmac"].(string)) != 32 {
		t.Errorf("write_file's content logged as %v, want its hmac and length", content)
	}
}

// TestAudit_RequiredFailsClosed: under audit: required, a log that cannot
// be written fails the call with audit_unavailable naming the cause, and
// the plugin never runs it; under on the call goes on.
func TestAudit_RequiredFailsClosed(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"required", "on"} {
		t.Run(mode, func(t *testing.T) {
			h := newHost(t, hostOpts{config: fmt.Sprintf("audit: {mode: %s, path: %s}\n", mode, filepath.Join(blocker, "audit"))})
			code, text := h.call(session.New(""), "write_file", map[string]any{"path": "w.txt", "content": "x"})
			_, err := os.Stat(filepath.Join(h.ws, "w.txt"))
			if mode == "on" {
				if code != "" || err != nil {
					t.Errorf("audit on: %s %s (file: %v); want the call to go on", code, text, err)
				}
				return
			}
			if code != sdk.CodeAuditUnavailable || !strings.Contains(text, "not a directory") {
				t.Errorf("got %s %q; want audit_unavailable naming the cause", code, text)
			}
			if err == nil {
				t.Error("the plugin ran the call the log could not record")
			}
		})
	}
}

// TestAudit_RequiredWritesFirst: under audit: required the decision line
// is in the file by the time the call returns, not waiting for the
// flusher.
func TestAudit_RequiredWritesFirst(t *testing.T) {
	t.Parallel()
	h := newHost(t, hostOpts{config: "audit: required\n"})
	sess := session.New("")
	if code, text := h.call(sess, "write_file", map[string]any{"path": "w.txt", "content": "x"}); code != "" {
		t.Fatalf("write_file: %s %s", code, text)
	}
	for _, l := range h.lines() {
		if l["kind"] == "decision" && l["session"] == sess.ID() && l["tool"] == "write_file" {
			return
		}
	}
	t.Error("the decision line was not in the file when the call returned")
}

// TestAudit_ProjectCannotTurnItOff: a workspace's audit: off leaves the
// audit trail on.
func TestAudit_ProjectCannotTurnItOff(t *testing.T) {
	t.Parallel()
	h := newHost(t, hostOpts{})
	h.app.Close(t.Context())
	if err := os.MkdirAll(filepath.Join(h.ws, ".yagent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.ws, ".yagent", "config.yaml"), []byte("audit: {mode: off}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(t.Context(), app.Options{Workspace: h.ws, Home: h.home, PluginDirs: []string{pluginDir}, CacheDir: filepath.Join(h.home, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	h.app = a
	if !strings.Contains(strings.Join(a.Warnings, "\n"), "audit ignored") {
		t.Errorf("warnings %q, want one saying the project's audit keys are ignored", a.Warnings)
	}
	sess := session.New("")
	h.call(sess, "think", map[string]any{"thought": "x"})
	h.lineOf(sess, "decision", "think")
}

func readJSONLines(t testing.TB, name string) []map[string]any {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a line that does not parse: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
