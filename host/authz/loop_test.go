package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
)

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pendingLoop returns a loop with one approval pending for session s,
// waiting in the background; its result arrives on the channel.
func pendingLoop(t *testing.T, id string) (*Loop, *logBuf, <-chan error) {
	t.Helper()
	logs := &logBuf{}
	l := NewLoop(LoopOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s := session.New("s")
	s.SetAnswerer(Remote{})
	done := make(chan error, 1)
	go func() {
		_, err := l.Approve(t.Context(), s, Question{Prompt: session.ApprovalPrompt{RequestID: id, Tool: "t"}})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for l.Pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never became pending")
		}
		time.Sleep(time.Millisecond)
	}
	return l, logs, done
}

func TestLoop_ConsumeAcceptsOnlyMatchingResponses(t *testing.T) {
	t.Parallel()
	l, logs, done := pendingLoop(t, "req-1")
	yes := session.ApprovalAnswer{Approved: true}
	for _, tc := range []struct {
		name string
		ev   bus.Event
		warn string
	}{
		{"a user_help_needed is no answer", bus.Event{Type: bus.UserHelpNeeded, RequestID: "req-1", Payload: yes}, ""},
		{"another event type", bus.Event{Type: bus.ToolFinished, RequestID: "req-1", Payload: yes}, ""},
		{"mismatched id", bus.Event{Type: bus.UserHelpResponse, RequestID: "req-2", SessionID: "s", Payload: yes}, "req-2"},
		{"another session", bus.Event{Type: bus.UserHelpResponse, RequestID: "req-1", SessionID: "intruder", Payload: yes}, "intruder"},
	} {
		if l.Consume(tc.ev) {
			t.Fatalf("%s: Consume took %+v", tc.name, tc.ev)
		}
		if tc.warn != "" && !strings.Contains(logs.String(), tc.warn) {
			t.Fatalf("%s: no warning naming %q; log:\n%s", tc.name, tc.warn, logs.String())
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the request ended on a response that was not its own: %v", err)
	default:
	}
	if !l.Consume(bus.Event{Type: bus.UserHelpResponse, RequestID: "req-1", Payload: yes}) {
		t.Fatal("Consume refused the matching response")
	}
	if err := <-done; err != nil {
		t.Fatalf("Approve: %v", err)
	}
	if l.Consume(bus.Event{Type: bus.UserHelpResponse, RequestID: "req-1", Payload: yes}) {
		t.Fatal("a second answer to a finished request was taken")
	}
}

func TestLoop_ForeignQuestionsAreNotMismatches(t *testing.T) {
	t.Parallel()
	l, logs, done := pendingLoop(t, "mine")
	// ask_user_for_help publishes its own pair.
	l.Bus().Publish(bus.Event{Type: bus.UserHelpNeeded, RequestID: "theirs", Payload: "which?"})
	l.Bus().Publish(bus.Event{Type: bus.UserHelpResponse, RequestID: "theirs", Payload: "blue"})
	l.Bus().Publish(bus.Event{Type: bus.UserHelpResponse, RequestID: "mine", Payload: session.ApprovalAnswer{Approved: true}})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "theirs") {
		t.Fatalf("a question the loop did not ask was warned about:\n%s", logs.String())
	}
}

func TestLoop_DuplicateAndMissingIDs(t *testing.T) {
	t.Parallel()
	l, _, done := pendingLoop(t, "dup")
	s := session.New("s")
	s.SetAnswerer(Remote{})
	if _, err := l.Approve(t.Context(), s, Question{Prompt: session.ApprovalPrompt{RequestID: "dup"}}); err == nil {
		t.Fatal("a second request with a pending id was accepted")
	}
	l.Consume(bus.Event{Type: bus.UserHelpResponse, RequestID: "dup", Payload: session.ApprovalAnswer{}})
	<-done

	sub := l.Bus().Subscribe(4)
	defer sub.Close()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		ev := <-sub.Critical()
		if len(ev.RequestID) != 36 || ev.Payload.(session.ApprovalPrompt).RequestID != ev.RequestID {
			t.Errorf("missing id: announced %+v; want a uuid on the event and the prompt", ev)
		}
		cancel()
	}()
	if _, err := l.Approve(ctx, s, Question{}); err == nil {
		t.Fatal("a cancelled request returned no error")
	}
}

func TestProjects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".yagent", SettingsFile)
	p, err := OpenProjects(path)
	if err != nil || p.Authorized("/w") {
		t.Fatalf("a missing settings file: %v, authorized %v", err, p.Authorized("/w"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"theme":"dark","authorized_projects":["/a"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = OpenProjects(path)
	if err != nil || !p.Authorized("/a") || p.Authorized("/a/b") || p.Authorized("/") {
		t.Fatalf("OpenProjects: %v; want /a authorized, exactly", err)
	}
	// Another host adds a project meanwhile; both survive.
	other, _ := OpenProjects(path)
	if err := other.Authorize("/b"); err != nil {
		t.Fatal(err)
	}
	if err := p.Authorize("/c/"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var doc struct {
		Theme    string   `json:"theme"`
		Projects []string `json:"authorized_projects"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Theme != "dark" || !slices.Equal(doc.Projects, []string{"/a", "/b", "/c"}) {
		t.Fatalf("settings = %s (%v); want the other keys kept and /a /b /c", b, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings mode %v, want 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("temporary files left beside the settings: %v", ents)
	}
	if err := os.WriteFile(path, []byte(`{"authorized_projects": "oops"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenProjects(path); err == nil || !strings.Contains(err.Error(), "authorized_projects") {
		t.Fatalf("a malformed settings file: %v; want an error naming the key", err)
	}
}

func TestApprover_Scopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scope     string
		sameTool  bool // a second call of the tool runs without asking
		otherTool bool // a call of another tool runs without asking
		project   bool
	}{
		{session.ScopeOnce, false, false, false},
		{session.ScopeSession, true, false, false},
		{session.ScopeAll, true, true, false},
		{session.ScopeProject, true, true, true},
	} {
		t.Run(tc.scope, func(t *testing.T) {
			t.Parallel()
			projects, _ := OpenProjects(filepath.Join(t.TempDir(), SettingsFile))
			ws := t.TempDir()
			ap := NewApprover(ApproverOptions{Passes: &Passes{Projects: projects, Workspace: ws}})
			s := session.New("s")
			tty := &countingAnswerer{ans: session.ApprovalAnswer{Approved: true, Scope: tc.scope}}
			s.SetAnswerer(tty)
			ask := func(tool string) {
				if r := ap.ask(t.Context(), s, session.ApprovalPrompt{Tool: tool, Paths: []string{"/srv/x"}}); !r.Allowed {
					t.Fatalf("%s not approved", tool)
				}
			}
			ask("a")
			ask("a")
			if got := tty.n() == 1; got != tc.sameTool {
				t.Fatalf("asked %d times for the same tool; want a pass: %v", tty.n(), tc.sameTool)
			}
			before := tty.n()
			ask("b")
			if got := tty.n() == before; got != tc.otherTool {
				t.Fatalf("another tool asked: %v; want a pass: %v", !got, tc.otherTool)
			}
			if projects.Authorized(ws) != tc.project {
				t.Fatalf("project authorized = %v, want %v", projects.Authorized(ws), tc.project)
			}
		})
	}
}

type countingAnswerer struct {
	mu    sync.Mutex
	count int
	ans   session.ApprovalAnswer
}

func (c *countingAnswerer) Approve(context.Context, session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	return c.ans, nil
}

func (c *countingAnswerer) Help(context.Context, string) (string, error) { return "", nil }

func (c *countingAnswerer) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

func TestApprover_SessionPathsSkipRootAndWorkspaceHolders(t *testing.T) {
	t.Parallel()
	ap := NewApprover(ApproverOptions{Passes: &Passes{Workspace: "/w/ws"}})
	s := session.New("s")
	s.SetAnswerer(&countingAnswerer{ans: session.ApprovalAnswer{Approved: true, Scope: session.ScopeSession}})
	ap.ask(t.Context(), s, session.ApprovalPrompt{Tool: "t", Paths: []string{"/", "/w", "/w/ws", "/srv/data", "/w/ws2", "/dev/sda", "/dev"}})
	if got := s.ApprovedPaths(); !slices.Equal(got, []string{"/srv/data", "/w/ws2"}) {
		t.Fatalf("ApprovedPaths = %v; want the root, the folders holding the workspace and the devices left out", got)
	}
}

// TestApprover_PassesAllowWithPaths: the passes are the approver's alone. A
// pass (YOLO, the session's) turns the guard's ask into allow without a
// question and keeps the ask's outside paths on the approval, so the plugin
// may open them; with no pass and nobody to ask the call fails closed.
func TestApprover_PassesAllowWithPaths(t *testing.T) {
	t.Parallel()
	d := adapter.Decision{Action: adapter.Ask, Reason: "outside", Paths: []string{"/srv/secret"}}
	granted := session.New("g")
	granted.GrantTool("write_it")
	for _, tc := range []struct {
		name   string
		passes *Passes
		sess   *session.Session
		want   bool
	}{
		{"no pass", &Passes{}, session.New("s"), false},
		{"yolo", &Passes{Yolo: true}, session.New("s"), true},
		{"session pass", &Passes{}, granted, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ap := NewApprover(ApproverOptions{Passes: tc.passes})
			r := ap.Authorize(t.Context(), tc.sess, sdk.Spec{Name: "write_it", Effect: sdk.EffectWrite}, d)
			if r.Allowed != tc.want || (tc.want && !slices.Equal(r.Paths, d.Paths)) || (!tc.want && !r.Unanswered) {
				t.Fatalf("Authorize = %+v, want allowed %v with paths %v", r, tc.want, d.Paths)
			}
		})
	}
}
