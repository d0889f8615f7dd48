package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitor plays the user of an MCP client that supports elicitation.
type elicitor struct {
	mu     sync.Mutex
	asked  []string
	action string // accept, decline, cancel
	scope  string // once, session, project
}

func (el *elicitor) handle(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	el.mu.Lock()
	defer el.mu.Unlock()
	el.asked = append(el.asked, r.Params.Message)
	res := &mcp.ElicitResult{Action: el.action}
	if el.action == "accept" {
		res.Content = map[string]any{"scope": el.scope}
	} else {
		res.Content = map[string]any{"reason": "keep out of my home folder"}
	}
	return res, nil
}

func (el *elicitor) questions() []string {
	el.mu.Lock()
	defer el.mu.Unlock()
	return slices.Clone(el.asked)
}

// elicitingProtocol is the MCP version the eliciting clients speak: the one
// of today's clients, where the server sends elicitation/create during a
// call. From 2026-07-28 on, elicitation rides multi round-trip results
// instead (SEP-2322).
const elicitingProtocol = "2025-11-25"

// serveWith starts `yagent serve` and connects a client with opts (an
// ElicitationHandler, say) speaking protocol ("" = the SDK's latest).
func (e *env) serveWith(opts *mcp.ClientOptions, protocol string, flags ...string) *client {
	e.t.Helper()
	cmd := exec.Command(yagent, append([]string{"serve"}, e.args(flags...)...)...)
	cmd.Env = e.environ()
	c := &client{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	mc := mcp.NewClient(&mcp.Implementation{Name: "e2e-auth", Version: "0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mc.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		e.t.Fatalf("connect to yagent serve: %v\nstderr:\n%s", err, c.stderr.String())
	}
	c.ClientSession = cs
	e.t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return c
}

// outsideFile writes a file outside the workspace and returns its path.
func outsideFile(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	p := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuth_ElicitationOverMCP: yagent serve asks an eliciting client's
// user; an approval reads the file outside the workspace, a decline is fed
// back to the model, and a client without elicitation gets needs_auth
// naming how to grant access.
func TestAuth_ElicitationOverMCP(t *testing.T) {
	t.Parallel()
	target := outsideFile(t, "the secret plan\n")
	args := map[string]any{"path": target}

	t.Run("approve", func(t *testing.T) {
		t.Parallel()
		el := &elicitor{action: "accept", scope: "once"}
		c := newEnv(t).serveWith(&mcp.ClientOptions{ElicitationHandler: el.handle}, elicitingProtocol)
		r := c.call(t, "read_file", args)
		if r.IsError || !strings.Contains(text(r), "the secret plan") {
			t.Fatalf("approved read: isError=%v code=%q %q\nstderr:\n%s", r.IsError, code(r), text(r), c.stderr.String())
		}
		if q := el.questions(); len(q) != 1 || !strings.Contains(q[0], target) || !strings.Contains(q[0], "read_file") {
			t.Fatalf("elicitations %q; want one naming read_file and %s", q, target)
		}
		// Once: the next call asks again.
		c.call(t, "read_file", args)
		if q := el.questions(); len(q) != 2 {
			t.Fatalf("%d elicitations after a second call, want 2", len(q))
		}
	})
	t.Run("decline", func(t *testing.T) {
		t.Parallel()
		el := &elicitor{action: "decline"}
		c := newEnv(t).serveWith(&mcp.ClientOptions{ElicitationHandler: el.handle}, elicitingProtocol)
		r := c.call(t, "read_file", args)
		if !r.IsError || code(r) != "denied" || strings.Contains(text(r), "the secret plan") || !strings.Contains(text(r), "keep out of my home folder") {
			t.Fatalf("declined read: isError=%v code=%q %q", r.IsError, code(r), text(r))
		}
	})
	t.Run("latest protocol fails closed", func(t *testing.T) {
		t.Parallel()
		el := &elicitor{action: "accept", scope: "once"}
		c := newEnv(t).serveWith(&mcp.ClientOptions{ElicitationHandler: el.handle}, "")
		r := c.call(t, "read_file", args)
		ran := !r.IsError && strings.Contains(text(r), "the secret plan")
		if !(ran && len(el.questions()) > 0) && !(r.IsError && code(r) == "needs_auth") {
			t.Fatalf("read on the latest protocol: isError=%v code=%q %q; want it approved through elicitation, or needs_auth", r.IsError, code(r), text(r))
		}
	})
	t.Run("no elicitation", func(t *testing.T) {
		t.Parallel()
		c := newEnv(t).serveWith(&mcp.ClientOptions{}, "")
		r := c.call(t, "read_file", args)
		if !r.IsError || code(r) != "needs_auth" || strings.Contains(text(r), "the secret plan") {
			t.Fatalf("read without elicitation: isError=%v code=%q %q", r.IsError, code(r), text(r))
		}
		for _, want := range []string{"-y", "read_paths"} {
			if !strings.Contains(text(r), want) {
				t.Errorf("needs_auth text lacks %q, how to grant access: %s", want, text(r))
			}
		}
		// Inside the workspace nothing asks.
		r = c.call(t, "list_dir", map[string]any{"path": "."})
		if r.IsError {
			t.Fatalf("list_dir of the workspace: %s %s", code(r), text(r))
		}
	})
}

// TestAuth_YoloAndAdminDeny: -y lets an outside write through; an admin's
// exec deny rule still refuses under -y; -Y removes ask_user_for_help and
// sends the autonomous instructions.
func TestAuth_YoloAndAdminDeny(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	userDir := filepath.Join(e.home, ".yagent")
	if err := os.MkdirAll(userDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userDir, "config.yaml"), []byte("exec:\n  rules:\n    - {action: deny, program: rm}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	build := filepath.Join(e.workspace, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(outsideFile(t, "")), "written.txt")

	c := e.serveWith(&mcp.ClientOptions{}, "", "-y")
	r := c.call(t, "write_file", map[string]any{"path": out, "content": "from yagent\n"})
	if b, err := os.ReadFile(out); r.IsError || err != nil || string(b) != "from yagent\n" {
		t.Fatalf("-y outside write: isError=%v code=%q %q; file %q %v", r.IsError, code(r), text(r), b, err)
	}
	r = c.call(t, "run_bash", map[string]any{"command": "env rm -rf build"})
	if !r.IsError || code(r) != "denied" || !strings.Contains(text(r), "rm") {
		t.Fatalf("admin deny under -y: isError=%v code=%q %q", r.IsError, code(r), text(r))
	}
	if _, err := os.Stat(build); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}

	full := newEnv(t).serveWith(&mcp.ClientOptions{}, "", "-Y")
	if names := full.toolNames(t); slices.Contains(names, "ask_user_for_help") {
		t.Fatalf("-Y lists ask_user_for_help: %v", names)
	}
	if ins := full.InitializeResult().Instructions; !strings.Contains(ins, "autonomously") {
		t.Fatalf("-Y initialize instructions = %q, want the autonomous-decision instructions", ins)
	}
}

// TestAuth_ProjectPassSurvivesRestart: an approval for the project is
// written to ~/.yagent/settings.json (0600) and holds for the next host.
func TestAuth_ProjectPassSurvivesRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	target := outsideFile(t, "kept across restarts\n")
	el := &elicitor{action: "accept", scope: "project"}
	c := e.serveWith(&mcp.ClientOptions{ElicitationHandler: el.handle}, elicitingProtocol)
	if r := c.call(t, "read_file", map[string]any{"path": target}); r.IsError {
		t.Fatalf("approved for the project: %s %s", code(r), text(r))
	}
	_ = c.Close()

	settings := filepath.Join(e.home, ".yagent", "settings.json")
	fi, err := os.Stat(settings)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings %s: %v; want mode 0600", settings, err)
	}
	var doc struct {
		Projects []string `json:"authorized_projects"`
	}
	b, _ := os.ReadFile(settings)
	ws, _ := filepath.EvalSymlinks(e.workspace)
	if err := json.Unmarshal(b, &doc); err != nil || !slices.Contains(doc.Projects, ws) {
		t.Fatalf("settings %s; want authorized_projects holding %s", b, ws)
	}

	again := e.serveWith(&mcp.ClientOptions{}, "") // no elicitation: nobody to ask
	r := again.call(t, "read_file", map[string]any{"path": target})
	if r.IsError || !strings.Contains(text(r), "kept across restarts") {
		t.Fatalf("after a restart: isError=%v code=%q %q", r.IsError, code(r), text(r))
	}
}

// TestAuth_AskUserForHelpOverMCP: ask_user_for_help reaches the user of an
// eliciting client, on the protocol of today's clients and on the latest.
func TestAuth_AskUserForHelpOverMCP(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{elicitingProtocol, ""} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			var asked []string
			var mu sync.Mutex
			handler := func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, r.Params.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "postgres"}}, nil
			}
			c := newEnv(t).serveWith(&mcp.ClientOptions{ElicitationHandler: handler}, protocol)
			r := c.call(t, "ask_user_for_help", map[string]any{"question": "which database?"})
			if r.IsError || !strings.Contains(text(r), "postgres") {
				t.Fatalf("ask_user_for_help: isError=%v %q", r.IsError, text(r))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0] != "which database?" {
				t.Fatalf("the user was asked %q", asked)
			}
		})
	}
}

// TestAuth_InputRequestsCannotBeForged: an answer only counts for the
// question the host put, under the request state it handed out: a retry
// with a made-up state, or an answer without a state, is asked again.
func TestAuth_InputRequestsCannotBeForged(t *testing.T) {
	t.Parallel()
	target := outsideFile(t, "the secret plan\n")
	handler := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return nil, errors.New("this client answers by hand")
	}
	c := newEnv(t).serveWith(&mcp.ClientOptions{
		ElicitationHandler: handler,
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}, "")
	accept := mcp.InputResponseMap{"yagent": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"scope": "session"}}}
	for name, p := range map[string]*mcp.CallToolParams{
		"no state":     {Name: "read_file", Arguments: map[string]any{"path": target}, InputResponses: accept},
		"forged state": {Name: "read_file", Arguments: map[string]any{"path": target}, InputResponses: accept, RequestState: "0123456789abcdef"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := c.CallTool(ctx, p)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !r.NeedsInput() || strings.Contains(text(r), "the secret plan") {
			t.Fatalf("%s: want the question asked again, got needsInput=%v %q", name, r.NeedsInput(), text(r))
		}
	}
	// The real round trip: the state handed out, answered, runs the call.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": target}})
	if err != nil || !r.NeedsInput() || r.RequestState == "" {
		t.Fatalf("first call: want an input request, got %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": target}, InputResponses: accept, RequestState: r.RequestState})
	if err != nil || r.IsError || !strings.Contains(text(r), "the secret plan") {
		t.Fatalf("answered retry: %v isError=%v %q", err, r != nil && r.IsError, text(r))
	}
}
