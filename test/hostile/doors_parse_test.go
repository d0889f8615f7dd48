package hostile

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 29, "the wall's doors": the parsers the host runs on what a model
// sends. A run_bash command of 200,000 nested ( overflowed the stack of
// the shell parser the guard runs in the host: "fatal error: stack
// overflow", which no recover catches, ended `yagent serve` and every
// session it held.

// doorsCommand is a run_bash command built to end the host.
type doorsCommand struct{ name, cmd string }

// doorsCommands are refused by the guard's bounds. Before them the nested
// ones and the pipeline each ended `yagent serve`; the command over 1 MiB
// was parsed and judged (seconds of the guard's time), and the word of
// braces is kept small so that a host without the bound says yes to it
// rather than run out of memory (8,000 unclosed braces took 1.5 GB).
func doorsCommands() []doorsCommand {
	return []doorsCommand{
		{"200,000 nested (", strings.Repeat("(", 200_000)},
		{"400,000 nested $(", "echo " + strings.Repeat("$(", 400_000)},
		{"400,000 $( in backquotes", "echo `" + strings.Repeat("$(", 400_000)},
		{"500,000 nested {", strings.Repeat("{ ", 500_000)},
		{"bash -c of 200,000 nested (", "bash -c '" + strings.Repeat("(", 200_000) + "'"},
		{"eval of 150,000 nested $((", "eval '" + strings.Repeat("$((", 150_000) + "'"},
		{"a here-document of 400,000 nested $(", "cat <<EOF\n" + strings.Repeat("$(", 400_000) + "\nEOF\n"},
		{"a flat pipeline of 450,000 commands", strings.Repeat("a|", 450_000) + "a"},
		{"a flat command over 1 MiB", strings.Repeat("echo a; ", 140_000)},
		{"a word of 129 braces", "echo " + strings.Repeat("{a,", 129)},
	}
}

// TestDoorsParse_HostileCommands: each command is refused naming the
// guard's bound and telling the model what to do instead; the host
// answers the next call.
func TestDoorsParse_HostileCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a.txt", "still up\n")
	c := e.serve()
	for _, tc := range doorsCommands() {
		t.Run(tc.name, func(t *testing.T) {
			r := c.call(t, "run_bash", map[string]any{"command": tc.cmd})
			denied(t, r)
			if !strings.Contains(r.Text, "past the guard's bound") || !strings.Contains(r.Text, "split it into smaller commands") {
				t.Errorf("the refusal names no bound: %.400s", r.Text)
			}
			allowed(t, c.call(t, "read_file", map[string]any{"path": "a.txt"}), "still up")
		})
	}
}

// TestDoorsParse_DeepArguments: on stdio, arguments nested deeper than
// any tool takes are answered -32602 at the front, which bounds a
// message's nesting at 128 (encoding/json stops at 10,000), and the
// session goes on.
func TestDoorsParse_DeepArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a.txt", "the front is still up\n")
	s := mcpfrontStart(t, e)
	for _, n := range []int{200, 9_000, 100_000} {
		s.send(mcpfrontCall(7, `{"path":"a.txt","x":`+mcpfrontNested(n)+`}`))
		if r := s.recv(); r["id"] != float64(7) || r["error"] == nil {
			t.Errorf("arguments nested %d deep: %.300v", n, r)
		}
		s.send(mcpfrontCall(100, `{"path":"a.txt"}`))
		if r := s.recv(); r["id"] != float64(100) || !strings.Contains(string(mustMarshal(r["result"])), "the front is still up") {
			t.Fatalf("the call after arguments nested %d deep: %.300v", n, r)
		}
	}
}

// TestDoorsParse_DeepProjectConfig: a project's .yagent/config.yaml nested
// as deep as YAML allows, or deeper, is refused at start-up naming the
// file; nothing overflows.
func TestDoorsParse_DeepProjectConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body string }{
		{"a flow sequence 9,999 deep", "deny: " + strings.Repeat("[", 9_999) + strings.Repeat("]", 9_999) + "\n"},
		{"a flow mapping 9,999 deep", "tiers: " + strings.Repeat("{a: ", 9_999) + "x" + strings.Repeat("}", 9_999) + "\n"},
		{"a flow sequence 200,000 deep", "deny: " + strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) + "\n"},
		{"block mappings 5,000 deep", "plugins:\n" + doorsBlockYAML(5_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.write(filepath.Join(".yagent", "config.yaml"), tc.body)
			out, err := e.cli("", "tools")
			if err == nil {
				t.Fatalf("yagent tools started with the project config:\n%.400s", out)
			}
			if !strings.Contains(out, cfg) || strings.Contains(out, "goroutine ") || strings.Contains(out, "fatal error") {
				t.Fatalf("want a refusal naming %s, got:\n%.600s", cfg, out)
			}
		})
	}
}

func doorsBlockYAML(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	return b.String()
}

// TestDoorsParse_BenignLongCommands: commands far longer than usual still
// pass the guard: a long script and a here-document run, and a 200 KB
// here-document is not refused (bash -c takes at most 128 KiB, Linux's
// MAX_ARG_STRLEN: past it the plugin, not the guard, fails it).
func TestDoorsParse_BenignLongCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.serve()
	var script strings.Builder
	script.WriteString("count() { n=$((n + 1)); }\nn=0\n")
	for i := range 200 {
		script.WriteString("if [ -d . ]; then count; fi; case x" + itoa(i) + " in x*) count ;; esac; for w in a b; do : \"${w:-$(printf '%s' x)}\"; done\n")
	}
	script.WriteString("echo \"counted $n\"\n")
	allowed(t, c.call(t, "run_bash", map[string]any{"command": script.String(), "timeout_ms": 120000}), "counted 400")

	line := "func f(x []int) (int, error) { if x[0] > (1+2)*3 { return g(h(x)), nil }; return 0, nil } // ($\n"
	body := strings.Repeat(line, 100_000/len(line))
	allowed(t, c.call(t, "run_bash", map[string]any{"command": "cat > mid.go <<'EOF'\n" + body + "EOF\nwc -c < mid.go"}), itoa(len(body)))

	big := strings.Repeat(line, 200_000/len(line))
	r := c.call(t, "run_bash", map[string]any{"command": "cat > big.go <<'EOF'\n" + big + "EOF\n"})
	if r.Code == "denied" || r.Code == "needs_auth" || strings.Contains(r.Text, "guard's bound") {
		t.Errorf("a 200 KB here-document was stopped by the guard: %.400s", r.Text)
	}
}

// doorsHTTP is a `yagent serve --http` process.
type doorsHTTP struct {
	base, url, token string
	stderr           *syncBuffer
}

var (
	doorsServing = regexp.MustCompile(`serving MCP over HTTP at (https?://\S+/mcp)`)
	doorsBanner  = regexp.MustCompile(`^yagent \S+: \d+ tools`)
)

// serveDoorsHTTP starts `yagent serve --http` and returns once it prints
// its banner, which it does once the plugins are described (/readyz).
func serveDoorsHTTP(t *testing.T, e *env) *doorsHTTP {
	t.Helper()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := &doorsHTTP{token: hex.EncodeToString(b), stderr: &syncBuffer{}}
	cmd := exec.Command(yagent, append([]string{"serve", "--http", "127.0.0.1:0"}, e.args()...)...)
	cmd.Env = append(e.environ(), "YAGENT_TOKEN="+h.token)
	cmd.Dir = e.workspace
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(h.stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		pw.Close()
	})
	url, ready := make(chan string, 1), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := doorsServing.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
			if doorsBanner.MatchString(sc.Text()) {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case <-ready:
		h.url = <-url
	case <-time.After(60 * time.Second):
		t.Fatalf("yagent serve --http printed no banner:\n%s", h.stderr.String())
	}
	h.base = strings.TrimSuffix(h.url, "/mcp")
	return h
}

type doorsBearer struct{ token string }

func (b doorsBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// session opens an MCP session over Streamable HTTP.
func (h *doorsHTTP) session(t *testing.T) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mc := mcp.NewClient(&mcp.Implementation{Name: "hostile-doors", Version: "0"}, nil)
	cs, err := mc.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   h.url,
		HTTPClient: &http.Client{Transport: doorsBearer{h.token}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v\nstderr:\n%s", h.url, err, h.stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{ClientSession: cs, stderr: h.stderr}
}

// post sends one JSON-RPC message on session c's behalf, as a client
// with no JSON library of its own limits would, and returns the status.
func (h *doorsHTTP) post(t *testing.T, c *client, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Mcp-Session-Id", c.ID())
	req.Header.Set("Mcp-Protocol-Version", c.InitializeResult().ProtocolVersion)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v\nstderr:\n%s", h.url, err, h.stderr.String())
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func doorsText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// healthy fails t unless /healthz answers 200.
func (h *doorsHTTP) healthy(t *testing.T) {
	t.Helper()
	resp, err := http.Get(h.base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v\nstderr:\n%s", err, h.stderr.String())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
}

// TestDoorsParse_ServeHTTPSurvives: one `yagent serve --http`, two MCP
// sessions. One sends every hostile input in turn; after each the other
// still gets its answers and /healthz answers. Before the bounds the first
// command ended the server: the other session got ECONNRESET and /healthz
// was refused.
func TestDoorsParse_ServeHTTPSurvives(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a.txt", "still up\n")
	h := serveDoorsHTTP(t, e)
	attacker, bystander := h.session(t), h.session(t)
	h.healthy(t)
	allowed(t, bystander.call(t, "read_file", map[string]any{"path": "a.txt"}), "still up")
	for _, tc := range doorsCommands() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := attacker.CallTool(ctx, &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{"command": tc.cmd}})
		cancel()
		switch {
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !res.IsError || !strings.Contains(doorsText(res), "past the guard's bound"):
			t.Errorf("%s: want a refusal naming the bound, got %.300s", tc.name, doorsText(res))
		}
		h.healthy(t)
		allowed(t, bystander.call(t, "read_file", map[string]any{"path": "a.txt"}), "still up")
	}
	// Arguments nested 994 deep reach the host (the SDK's decoder refuses
	// a message nested past 1,000 with 400).
	for _, n := range []int{994, 9_000, 100_000} {
		body := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"run_bash","arguments":{"command":"ls","x":` + mcpfrontNested(n) + `}}}`
		if code := h.post(t, attacker, body); code != http.StatusOK && code != http.StatusBadRequest {
			t.Errorf("arguments nested %d deep: %d", n, code)
		}
		h.healthy(t)
		allowed(t, bystander.call(t, "read_file", map[string]any{"path": "a.txt"}), "still up")
	}
}
