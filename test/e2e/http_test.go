package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/internal/proctest"
)

// httpHost is a `yagent serve --http 127.0.0.1:0` process.
type httpHost struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	url    string // http://127.0.0.1:PORT/mcp
	base   string // http://127.0.0.1:PORT
	token  string
	client *http.Client // trusts the host's certificate under TLS
}

// serveHTTP starts `yagent serve --http` with YAGENT_TOKEN=token and waits
// until /readyz answers 200.
func (e *env) serveHTTP(token string, flags ...string) *httpHost {
	e.t.Helper()
	return e.serveHTTPWith(http.DefaultClient, token, flags...)
}

func (e *env) serveHTTPWith(client *http.Client, token string, flags ...string) *httpHost {
	e.t.Helper()
	h := e.startHTTP(client, token, flags...)
	eventually(e.t, "/readyz to answer 200", func() bool {
		resp, err := h.client.Get(h.base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return h
}

// startHTTP starts `yagent serve --http` and returns once it listens,
// its plugins perhaps not described yet.
func (e *env) startHTTP(client *http.Client, token string, flags ...string) *httpHost {
	e.t.Helper()
	cmd := exec.Command(yagent, append([]string{"serve", "--http", "127.0.0.1:0"}, e.args(flags...)...)...)
	cmd.Env = e.environ("YAGENT_TOKEN=" + token)
	h := &httpHost{cmd: cmd, stderr: &syncBuffer{}, token: token, client: client}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(h.stderr, pw)
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
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
	found := proctest.ServingURL(pr)
	select {
	case h.url = <-found:
	case <-time.After(30 * time.Second):
		e.t.Fatalf("no serving line on stderr within 30s:\n%s", h.stderr.String())
	}
	h.base = strings.TrimSuffix(h.url, "/mcp")
	return h
}

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.base == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return b.base.RoundTrip(r)
}

// connect opens an MCP session over Streamable HTTP with the host's token.
func (h *httpHost) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	return h.connectWith(t, nil, "")
}

// connectWith opens a session whose client has opts (an
// ElicitationHandler, say) and speaks protocol ("" = the SDK's latest).
func (h *httpHost) connectWith(t *testing.T, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   h.url,
		HTTPClient: &http.Client{Transport: bearerTransport{token: h.token, base: h.client.Transport}},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect to %s: %v\nstderr:\n%s", h.url, err, h.stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callHTTP(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// post sends one raw JSON-RPC POST to /mcp and returns the status.
func (h *httpHost) post(t *testing.T, body io.Reader, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", h.url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// delete ends the session id with a raw DELETE and returns the status.
func (h *httpHost) delete(t *testing.T, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("DELETE %s: %v", h.url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

const e2eToken = "e2e-token-0123456789"

func TestHTTP_ListCallAndTheTokenNotInherited(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("over http\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := e.serveHTTP(e2eToken)
	if !strings.Contains(h.stderr.String(), h.url) {
		t.Errorf("the start line does not name %s:\n%s", h.url, h.stderr.String())
	}
	if strings.Contains(h.stderr.String(), e2eToken) {
		t.Errorf("serve printed a token it was given:\n%s", h.stderr.String())
	}
	cs := h.connect(t)

	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"think", "read_file", "run_bash"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("tools/list over HTTP lacks %s: %v", want, names)
		}
	}
	if r := callHTTP(t, cs, "read_file", map[string]any{"path": "notes.txt"}); r.IsError || !strings.Contains(text(r), "over http") {
		t.Fatalf("read_file over HTTP: isError=%v %q", r.IsError, text(r))
	}
	// The token stays in the host: a command the model runs cannot read it
	// and call tools with the user's passes.
	r := callHTTP(t, cs, "run_bash", map[string]any{"command": "echo token=${YAGENT_TOKEN-unset}"})
	if r.IsError || !strings.Contains(text(r), "token=unset") {
		t.Fatalf("run_bash echo $YAGENT_TOKEN: want token=unset, got isError=%v %q", r.IsError, text(r))
	}
}

// TestHTTP_InitializeAsSoonAsServing: a client that sends its initialize
// the moment serve --http listens, before the plugins are described, gets
// it answered, once, without retrying (it got 503 before).
func TestHTTP_InitializeAsSoonAsServing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.startHTTP(http.DefaultClient, e2eToken)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	if got := h.post(t, strings.NewReader(body), map[string]string{"Authorization": "Bearer " + e2eToken}); got != http.StatusOK {
		t.Errorf("initialize as soon as serving: %d, want 200\nstderr:\n%s", got, h.stderr.String())
	}
}

func TestHTTP_RefusedRequests(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	auth := map[string]string{"Authorization": "Bearer " + e2eToken}

	if got := h.post(t, strings.NewReader(initialize), nil); got != http.StatusUnauthorized {
		t.Errorf("initialize without a token: got %d, want 401", got)
	}
	if got := h.post(t, strings.NewReader(initialize), map[string]string{"Authorization": "Bearer wrong"}); got != http.StatusUnauthorized {
		t.Errorf("initialize with a wrong token: got %d, want 401", got)
	}
	if got := h.post(t, strings.NewReader(initialize), map[string]string{"Authorization": "Bearer " + e2eToken, "Origin": "https://evil.example.com"}); got != http.StatusForbidden {
		t.Errorf("initialize from a foreign Origin: got %d, want 403", got)
	}
	// A page served on the host's own loopback port is its own origin.
	if got := h.post(t, strings.NewReader(initialize), map[string]string{"Authorization": "Bearer " + e2eToken, "Origin": h.base}); got != http.StatusOK {
		t.Errorf("initialize from Origin %s: got %d, want 200", h.base, got)
	}
	oversized := bytes.Repeat([]byte(" "), 16<<20+1) // JSON whitespace: only the cap can refuse it
	if got := h.post(t, bytes.NewReader(oversized), auth); got != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of 16 MiB + 1: got %d, want 413", got)
	}
	if got := h.post(t, strings.NewReader(initialize), auth); got != http.StatusOK {
		t.Errorf("initialize with the token: got %d, want 200", got)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := h.client.Get(h.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: got %d, want 200", path, resp.StatusCode)
		}
	}
}

func TestHTTP_SessionsIsolatedAndDeleteEndsOne(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	a, b := h.connect(t), h.connect(t)
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("session ids %q and %q: want two distinct Mcp-Session-Id values", a.ID(), b.ID())
	}

	var wg sync.WaitGroup
	for i, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			todo := map[string]any{"todos": []map[string]any{{"id": "1", "content": "task of session " + string(rune('A'+i)), "status": "pending"}}}
			if r := callHTTP(t, cs, "todo_write", todo); r.IsError {
				t.Errorf("todo_write in session %c: %s", 'A'+i, text(r))
			}
		}()
	}
	wg.Wait()
	for i, cs := range []*mcp.ClientSession{a, b} {
		mine, other := "task of session "+string(rune('A'+i)), "task of session "+string(rune('B'-i))
		got := text(callHTTP(t, cs, "todo_read", map[string]any{}))
		if !strings.Contains(got, mine) || strings.Contains(got, other) {
			t.Errorf("todo_read in session %c: want only %q, got %q", 'A'+i, mine, got)
		}
	}

	id := a.ID()
	if err := a.Close(); err != nil { // DELETE
		t.Fatalf("close (DELETE) session A: %v", err)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if got := h.post(t, strings.NewReader(list), map[string]string{"Authorization": "Bearer " + e2eToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}); got != http.StatusNotFound {
		t.Errorf("tools/list with the ended session's Mcp-Session-Id: got %d, want 404", got)
	}
	if got := text(callHTTP(t, b, "todo_read", map[string]any{})); !strings.Contains(got, "task of session B") {
		t.Errorf("session B after A's DELETE: todo_read %q", got)
	}
}

func TestHTTP_GeneratedTokenPrintedWithAClientConfiguration(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP("")
	m := regexp.MustCompile(`"Authorization": "Bearer ([A-Za-z0-9_-]{43})"`).FindStringSubmatch(h.stderr.String())
	if m == nil || !strings.Contains(h.stderr.String(), `"url": "`+h.url+`"`) {
		t.Fatalf("no client configuration with the URL and a generated bearer token on stderr:\n%s", h.stderr.String())
	}
	h.token = m[1]
	cs := h.connect(t)
	if r := callHTTP(t, cs, "think", map[string]any{"thought": "the generated token works"}); r.IsError {
		t.Fatalf("think with the generated token: %s", text(r))
	}
}

// TestHTTP_DeleteMidCallKillsTheForegroundCommand: ending a session ends
// the call it has in flight, and with it the command; a background command
// was handed to the user and lives on.
func TestHTTP_DeleteMidCallKillsTheForegroundCommand(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	cs := h.connect(t)
	ws := e.workspace

	if r := callHTTP(t, cs, "run_bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 1000", "is_background": true}); r.IsError {
		t.Fatalf("background run_bash: %s", text(r))
	}
	bg := readPID(t, filepath.Join(ws, "bg.pid"))
	t.Cleanup(func() { _ = syscall.Kill(-bg, syscall.SIGKILL); _ = syscall.Kill(bg, syscall.SIGKILL) })

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{"command": "echo $$ > fg.pid; exec sleep 1000", "yield_time_ms": 600000}})
		done <- err
	}()
	fg := readPID(t, filepath.Join(ws, "fg.pid"))
	t.Cleanup(func() { _ = syscall.Kill(fg, syscall.SIGKILL) })

	// The Go client's Close waits for its calls before it sends DELETE,
	// so the DELETE is sent as another client would.
	if got := h.delete(t, cs.ID()); got != http.StatusNoContent {
		t.Fatalf("DELETE mid-call: got %d, want 204", got)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight did not end with its session")
	}
	eventually(t, "the foreground command to die with its session", func() bool { return !alive(fg) })
	time.Sleep(200 * time.Millisecond) // a negative check needs a moment
	if !alive(bg) {
		t.Fatalf("the background command (pid %d) died with the session", bg)
	}
}

// TestHTTP_TLS: with --tls-cert and --tls-key, serve speaks HTTPS.
func TestHTTP_TLS(t *testing.T) {
	e := newEnv(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	h := e.serveHTTPWith(client, e2eToken, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(h.url, "https://") {
		t.Fatalf("serving line names %s; want an https URL", h.url)
	}
	cs := h.connect(t)
	if r := callHTTP(t, cs, "think", map[string]any{"thought": "over TLS"}); r.IsError {
		t.Fatalf("think over HTTPS: %s", text(r))
	}
	if got := h.post(t, strings.NewReader(initialize), nil); got != http.StatusUnauthorized {
		t.Errorf("initialize over HTTPS without a token: got %d, want 401", got)
	}
}

// TestHTTP_ApprovalsPerSession: approvals are asked through elicitation
// over HTTP as over stdio, and a "for the session" answer in one session
// does not let another through.
func TestHTTP_ApprovalsPerSession(t *testing.T) {
	e := newEnv(t)
	target := outsideFile(t, "the secret plan\n")
	args := map[string]any{"path": target}
	h := e.serveHTTP(e2eToken)
	elA := &elicitor{action: "accept", scope: "session"}
	elB := &elicitor{action: "decline"}
	a := h.connectWith(t, &mcp.ClientOptions{ElicitationHandler: elA.handle}, elicitingProtocol)
	b := h.connectWith(t, &mcp.ClientOptions{ElicitationHandler: elB.handle}, elicitingProtocol)

	for i := range 2 {
		r := callHTTP(t, a, "read_file", args)
		if r.IsError || !strings.Contains(text(r), "the secret plan") {
			t.Fatalf("read %d in session A (approved for the session): isError=%v code=%q %q", i+1, r.IsError, code(r), text(r))
		}
	}
	if q := elA.questions(); len(q) != 1 || !strings.Contains(q[0], target) {
		t.Fatalf("session A was asked %q; want once, naming %s", q, target)
	}

	r := callHTTP(t, b, "read_file", args)
	if !r.IsError || code(r) != "denied" || strings.Contains(text(r), "the secret plan") {
		t.Fatalf("read in session B after A's session pass: isError=%v code=%q %q; want B asked and denied", r.IsError, code(r), text(r))
	}
	if q := elB.questions(); len(q) != 1 {
		t.Fatalf("session B was asked %d times, want once: A's pass must not reach B", len(q))
	}
}

// TestHTTP_SessionsDoNotLeak: sessions opened, used and ended leave the
// host with the descriptors and child processes it had.
func TestHTTP_SessionsDoNotLeak(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	pid := h.cmd.Process.Pid
	fds := func() int {
		ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	round := func(n int) {
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs := h.connect(t)
				if r := callHTTP(t, cs, "think", map[string]any{"thought": "x"}); r.IsError {
					t.Errorf("think: %s", text(r))
				}
				if err := cs.Close(); err != nil {
					t.Errorf("close (DELETE): %v", err)
				}
			}()
		}
		wg.Wait()
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	}
	round(1) // every plugin started, every lazy descriptor opened
	baseFDs, baseKids := fds(), len(children(pid))
	round(16)
	t.Logf("host descriptors: %d before, %d right after 16 sessions", baseFDs, fds())
	eventually(t, "the host's descriptors back to where they were", func() bool { return fds() <= baseFDs })
	if kids := len(children(pid)); kids != baseKids {
		t.Errorf("the host has %d children after 16 sessions, %d before", kids, baseKids)
	}
}

// TestHTTP_CancelledKillsTheForegroundCommand: notifications/cancelled
// ends its call and the command, and leaves the session usable.
func TestHTTP_CancelledKillsTheForegroundCommand(t *testing.T) {
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	cs := h.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{"command": "echo $$ > fg.pid; exec sleep 1000", "yield_time_ms": 600000}})
		done <- err
	}()
	fg := readPID(t, filepath.Join(e.workspace, "fg.pid"))
	t.Cleanup(func() { _ = syscall.Kill(fg, syscall.SIGKILL) })
	cancel() // the Go client sends notifications/cancelled
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	eventually(t, "the cancelled call's command to die", func() bool { return !alive(fg) })
	if r := callHTTP(t, cs, "think", map[string]any{"thought": "still here"}); r.IsError {
		t.Fatalf("the session after a cancelled call: %s", text(r))
	}
}

// TestHTTP_ProgressReachesTheClient: a plugin's progress report reaches an
// HTTP client that sent a progress token, during the call.
func TestHTTP_ProgressReachesTheClient(t *testing.T) {
	e := newEnv(t)
	if out, err := e.cli("plugins", "pin", "probe"); err != nil {
		t.Fatalf("pin probe: %v\n%s", err, out)
	}
	h := e.serveHTTP(e2eToken)
	progress := make(chan string, 16)
	cs := h.connectWith(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- r.Params.Message:
			default:
			}
		},
	}, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		p := &mcp.CallToolParams{Name: "probe_block", Arguments: map[string]any{}}
		p.SetProgressToken("http-progress")
		_, _ = cs.CallTool(ctx, p)
	}()
	select {
	case msg := <-progress:
		if msg != "blocking" {
			t.Errorf("progress message %q, want the plugin's \"blocking\"", msg)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no notifications/progress over HTTP within 20s")
	}
}

// tsClient runs the MCP TypeScript SDK's Streamable HTTP client
// (testdata/http_client.mjs) against one host, a node process per case.
type tsClient struct {
	node, sdkDir string
	e            *env
	h            *httpHost
}

// needTSClient finds node and the SDK bench/mcp installs. Locally a machine
// without them skips; under CI (CI set) it fails, for .ci/run installs both.
func needTSClient(t *testing.T) (node, sdkDir string) {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; CI must run the TypeScript client: .ci/run installs it", what)
		}
		t.Skip(what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed (apt-get install nodejs npm): the TypeScript client needs it")
	}
	sdkDir = filepath.Join(repoRoot, "bench", "mcp", "node_modules", "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(filepath.Join(sdkDir, "dist", "esm", "client", "streamableHttp.js")); err != nil {
		missing("the MCP TypeScript SDK is not installed under bench/mcp: npm ci --prefix bench/mcp")
	}
	return node, sdkDir
}

// run runs one case of the script with cfg and decodes the JSON object it
// prints last into out.
func (c *tsClient) run(t *testing.T, name string, cfg map[string]any, out any) {
	t.Helper()
	all := map[string]any{"sdkDir": c.sdkDir, "url": c.h.url, "token": c.h.token, "workspace": c.e.workspace}
	for k, v := range cfg {
		all[k] = v
	}
	arg, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.node, filepath.Join(repoRoot, "test", "e2e", "testdata", "http_client.mjs"), name, string(arg))
	cmd.Stderr = &stderr
	start := time.Now()
	stdout, err := cmd.Output()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("node http_client.mjs %s: %v\n%s%s\nserve stderr:\n%s", name, err, stdout, stderr.String(), c.h.stderr.String())
	}
	stdout = bytes.TrimSpace(stdout)
	if err := json.Unmarshal(stdout[bytes.LastIndexByte(stdout, '\n')+1:], out); err != nil {
		t.Fatalf("decode the %s case's report %q: %v", name, stdout, err)
	}
	t.Logf("%s (node ran %v): %s", name, took.Round(time.Millisecond), stdout[bytes.LastIndexByte(stdout, '\n')+1:])
}

// tsResult is a tool result as the script reports it.
type tsResult struct {
	IsError bool
	Text    string
	Code    string
	TaskID  string
}

// tsSettled is how a call the script did not simply await ended.
type tsSettled struct {
	Settled bool
	Value   *tsResult
	Error   string
}

// tsRefusal is what a refused connect saw.
type tsRefusal struct {
	Connected bool
	Status    int
	Error     string
	Seen      []struct {
		Method          string
		Status          int
		WWWAuthenticate string
	}
}

// descendants returns the processes under pid with their descriptor
// counts: the plugins, and whatever they run.
func descendants(t *testing.T, pid int) map[int]int {
	t.Helper()
	out := map[int]int{}
	var walk func(int)
	walk = func(p int) {
		for kid := range children(p) {
			ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(kid), "fd"))
			if err != nil {
				continue // gone between the two reads
			}
			out[kid] = len(ents)
			walk(kid)
		}
	}
	walk(pid)
	return out
}

// TestHTTP_TypeScriptClient: the MCP TypeScript SDK's Streamable HTTP
// client against one `yagent serve --http`: list and call, approve and
// decline through elicitation, progress during a 2 s command, two sessions
// isolated, the refusals (401, 403, 413), a cancel and a DELETE mid-call
// killing the command, and the host and its plugins left with the
// descriptors and processes they had.
func TestHTTP_TypeScriptClient(t *testing.T) {
	node, sdkDir := needTSClient(t)
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("read by typescript\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := outsideFile(t, "the secret plan\n")
	h := e.serveHTTP(e2eToken)
	ts := &tsClient{node: node, sdkDir: sdkDir, e: e, h: h}
	host := h.cmd.Process.Pid
	fds := func() int {
		ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(host), "fd"))
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}

	t.Run("list and call", func(t *testing.T) {
		var got struct {
			SessionID               string
			Tools                   []string
			Think, Read, Bash, Todo tsResult
		}
		ts.run(t, "basic", map[string]any{"file": "notes.txt"}, &got)
		for _, want := range []string{"think", "read_file", "run_bash"} {
			if !slices.Contains(got.Tools, want) {
				t.Errorf("tools/list lacks %s: %v", want, got.Tools)
			}
		}
		if got.SessionID == "" {
			t.Error("no Mcp-Session-Id")
		}
		if got.Think.IsError || got.Read.IsError || !strings.Contains(got.Read.Text, "read by typescript") || got.Bash.IsError || !strings.Contains(got.Bash.Text, "from bash") || got.Todo.IsError {
			t.Errorf("calls: think %+v, read_file %+v, run_bash %+v, todo_read %+v", got.Think, got.Read, got.Bash, got.Todo)
		}
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		if code := h.post(t, strings.NewReader(list), map[string]string{"Authorization": "Bearer " + e2eToken, "Mcp-Session-Id": got.SessionID, "Mcp-Protocol-Version": "2025-06-18"}); code != http.StatusNotFound {
			t.Errorf("tools/list on the session the TypeScript client ended: got %d, want 404", code)
		}
	})
	// Every plugin the cases use has started: what the host and they hold
	// now is what they must hold at the end.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	baseFDs, baseKids := fds(), descendants(t, host)

	t.Run("approve and decline through elicitation", func(t *testing.T) {
		var got struct {
			Approved, Declined tsResult
			Asked              []string
		}
		ts.run(t, "elicit", map[string]any{"outside": outside}, &got)
		if len(got.Asked) != 2 || !strings.Contains(got.Asked[0], outside) || !strings.Contains(got.Asked[0], "read_file") {
			t.Errorf("elicitations %q; want two (approved once, then asked again), naming read_file and %s", got.Asked, outside)
		}
		if got.Approved.IsError || !strings.Contains(got.Approved.Text, "the secret plan") {
			t.Errorf("approved read: %+v; want the file", got.Approved)
		}
		if !got.Declined.IsError || got.Declined.Code != "denied" || strings.Contains(got.Declined.Text, "the secret plan") || !strings.Contains(got.Declined.Text, "keep out of my home folder") {
			t.Errorf("declined read: %+v; want code denied with the user's reason", got.Declined)
		}
	})

	t.Run("progress during a 2s command", func(t *testing.T) {
		var got struct {
			Call     tsSettled
			Progress []struct {
				At       int // ms after the call was sent
				Message  string
				Progress float64
			}
			EndedAt int
		}
		ts.run(t, "progress", map[string]any{"tool": "run_bash", "args": map[string]any{
			"command": "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done", "yield_time_ms": 30000,
		}}, &got)
		if !got.Call.Settled || got.Call.Value == nil || got.Call.Value.IsError || !strings.Contains(got.Call.Value.Text, "line 5") {
			t.Fatalf("the 2s run_bash: %+v; want its five lines", got.Call)
		}
		// Two or more, the first a good while before the result: they came
		// during the command, not with its end.
		if len(got.Progress) < 2 || got.Progress[0].At > got.EndedAt-1000 {
			t.Fatalf("progress %+v, the result at %d ms; want two or more notifications, the first at least 1s before the result", got.Progress, got.EndedAt)
		}
		for i, p := range got.Progress {
			if !strings.Contains(p.Message, "line ") || i > 0 && p.Progress <= got.Progress[i-1].Progress {
				t.Errorf("notification %d: %+v; want it to name the last line, its progress growing", i, p)
			}
		}
	})

	t.Run("two sessions isolated", func(t *testing.T) {
		var got struct {
			IDs                                        []string
			WriteA, WriteB, ReadA, ReadB, OutsideB     tsResult
			OutsideA                                   []tsResult
			AskedA, AskedB                             []string
			TaskA, TasksA, TasksB, CancelFromB, AfterA tsResult
			TaskPID                                    int
			TaskGoneWithA                              bool
		}
		ts.run(t, "isolation", map[string]any{"outside": outside, "pidFile": "taskA.pid"}, &got)
		if len(got.IDs) != 2 || got.IDs[0] == "" || got.IDs[0] == got.IDs[1] {
			t.Errorf("session ids %q: want two distinct", got.IDs)
		}
		if got.WriteA.IsError || got.WriteB.IsError {
			t.Errorf("todo_write: A %+v, B %+v", got.WriteA, got.WriteB)
		}
		if !strings.Contains(got.ReadA.Text, "task of session A") || strings.Contains(got.ReadA.Text, "task of session B") {
			t.Errorf("todo_read in A: %q; want only A's task", got.ReadA.Text)
		}
		if !strings.Contains(got.ReadB.Text, "task of session B") || strings.Contains(got.ReadB.Text, "task of session A") {
			t.Errorf("todo_read in B: %q; want only B's task", got.ReadB.Text)
		}
		for i, r := range got.OutsideA {
			if r.IsError || !strings.Contains(r.Text, "the secret plan") {
				t.Errorf("read %d outside the workspace in A (approved for the session): %+v", i+1, r)
			}
		}
		if len(got.AskedA) != 1 {
			t.Errorf("A was asked %q; want once, the pass covering the second read", got.AskedA)
		}
		if len(got.AskedB) != 1 || !got.OutsideB.IsError || got.OutsideB.Code != "denied" || strings.Contains(got.OutsideB.Text, "the secret plan") {
			t.Errorf("B after A's pass for the session: asked %q, read %+v; want B asked and denied", got.AskedB, got.OutsideB)
		}
		if got.TaskA.TaskID == "" || got.TaskPID <= 0 {
			t.Fatalf("run_bash handed back in A: %+v, pid %d; want a task", got.TaskA, got.TaskPID)
		}
		t.Cleanup(func() { _ = syscall.Kill(got.TaskPID, syscall.SIGKILL) })
		if !strings.Contains(got.TasksA.Text, got.TaskA.TaskID) || strings.Contains(got.TasksB.Text, got.TaskA.TaskID) {
			t.Errorf("shell_tasks: A %q, B %q; want %s in A's only", got.TasksA.Text, got.TasksB.Text, got.TaskA.TaskID)
		}
		if !got.CancelFromB.IsError || got.CancelFromB.Code != "not_found" {
			t.Errorf("shell_cancel of A's %s from B: %+v; want not_found", got.TaskA.TaskID, got.CancelFromB)
		}
		if !got.TaskGoneWithA {
			t.Errorf("A's task (pid %d) still ran 10s after A's DELETE; want it ended with its session", got.TaskPID)
		}
		if !strings.Contains(got.AfterA.Text, "task of session B") {
			t.Errorf("todo_read in B after A's DELETE: %+v; want B's task", got.AfterA)
		}
	})

	t.Run("refused: 401, 403, 413", func(t *testing.T) {
		var got struct {
			NoToken, WrongToken, ForeignOrigin, OwnOrigin tsRefusal
			Oversized                                     struct {
				Status int
				Error  string
			}
			AfterOversized tsResult
		}
		ts.run(t, "refused", map[string]any{"cap": 16 << 20}, &got)
		for what, r := range map[string]tsRefusal{"no token": got.NoToken, "a wrong token": got.WrongToken} {
			if r.Connected || r.Status != http.StatusUnauthorized || len(r.Seen) == 0 || !strings.HasPrefix(r.Seen[0].WWWAuthenticate, "Bearer") {
				t.Errorf("connect with %s: %+v; want 401 with WWW-Authenticate: Bearer", what, r)
			}
		}
		if got.ForeignOrigin.Connected || got.ForeignOrigin.Status != http.StatusForbidden {
			t.Errorf("connect from a foreign Origin: %+v; want 403", got.ForeignOrigin)
		}
		if !got.OwnOrigin.Connected {
			t.Errorf("connect from the host's own origin: %+v; want it served", got.OwnOrigin)
		}
		if got.Oversized.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("a call of 16 MiB + 1: %+v; want 413", got.Oversized)
		}
		if got.AfterOversized.IsError {
			t.Errorf("the session after a refused body: %+v", got.AfterOversized)
		}
	})

	for _, how := range []string{"cancel", "delete"} {
		t.Run(how+" mid-call kills the command", func(t *testing.T) {
			var got struct {
				PID    int
				SentAt int64 // Unix ms
				Delete tsSettled
				Call   tsSettled
				After  *tsResult
			}
			ts.run(t, "midcall", map[string]any{"how": how, "pidFile": how + ".pid"}, &got)
			if got.PID <= 0 {
				t.Fatalf("no pid: %+v", got)
			}
			t.Cleanup(func() { _ = syscall.Kill(got.PID, syscall.SIGKILL) })
			if how == "delete" && (!got.Delete.Settled || got.Delete.Error != "") {
				t.Errorf("DELETE mid-call: %+v; want it answered within 20s", got.Delete)
			}
			eventually(t, "the foreground command to die after the "+how, func() bool { return !alive(got.PID) })
			t.Logf("the command was gone at most %v after the %s was sent", time.Since(time.UnixMilli(got.SentAt)).Round(time.Millisecond), how)
			if how == "cancel" && (!got.Call.Settled || got.Call.Value != nil) {
				t.Errorf("the cancelled call: %+v; want it rejected within 20s", got.Call)
			}
			if how == "cancel" && (got.After == nil || got.After.IsError) {
				t.Errorf("the session after a cancelled call: %+v", got.After)
			}
		})
	}

	t.Run("nothing leaked", func(t *testing.T) {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		eventually(t, "the host's descriptors back to where they were", func() bool { return fds() <= baseFDs })
		var now map[int]int
		back := func() bool {
			now = descendants(t, host)
			if len(now) != len(baseKids) {
				return false
			}
			for pid, n := range now {
				if base, ok := baseKids[pid]; !ok || n > base {
					return false
				}
			}
			return true
		}
		for deadline := time.Now().Add(10 * time.Second); !back() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if !back() {
			t.Fatalf("under the host (pid: descriptors) %v after the cases, %v after the first; want no process more and no descriptor more", now, baseKids)
		}
		t.Logf("host descriptors %d; under the host %v, after the first case %v", fds(), now, baseKids)
	})
}

// TestHTTP_IdleSessionEndsItsDroppedCall: a client that drops the stream
// of a call in flight ends nothing (it may come back for the answer); when
// the session then stays idle past --session-idle, it ends, and the call's
// foreground command with it.
func TestHTTP_IdleSessionEndsItsDroppedCall(t *testing.T) {
	e := newEnv(t)
	const idle = 2 * time.Second
	h := e.serveHTTP(e2eToken, "--session-idle", idle.String())
	auth := map[string]string{"Authorization": "Bearer " + e2eToken}

	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(initialize))
	id := h.raw(t, req, auth).Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	auth["Mcp-Session-Id"], auth["Mcp-Protocol-Version"] = id, "2025-06-18"
	req, _ = http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	h.raw(t, req, auth)

	ctx, drop := context.WithCancel(context.Background())
	defer drop()
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_bash","arguments":{"command":"echo $$ > fg.pid; exec sleep 1000","yield_time_ms":600000}}}`
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(call))
	go func() {
		for k, v := range auth {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if resp, err := h.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	fg := readPID(t, filepath.Join(e.workspace, "fg.pid"))
	t.Cleanup(func() { _ = syscall.Kill(fg, syscall.SIGKILL) })
	drop()
	dropped := time.Now()
	time.Sleep(idle / 2) // a negative check needs a moment
	if !alive(fg) {
		t.Fatal("the command died when its call's stream was dropped; a disconnect is not a cancel")
	}
	eventually(t, "the command to die with its idle session", func() bool { return !alive(fg) })
	if waited := time.Since(dropped); waited < idle {
		t.Errorf("the command died %v after the drop, before --session-idle %v", waited, idle)
	}
	req, _ = http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
	if code := h.raw(t, req, auth).StatusCode; code != http.StatusNotFound {
		t.Errorf("tools/list on the expired session: got %d, want 404", code)
	}
}

// raw sends req with hdr and the MCP content headers, and returns the
// answer with its body read.
func (h *httpHost) raw(t *testing.T, req *http.Request, hdr map[string]string) *http.Response {
	t.Helper()
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, h.url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, data string }

// readEvents sends the events of an SSE body to ch until it ends.
func readEvents(body io.ReadCloser, ch chan<- sseEvent) {
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" {
				ch <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id:"):
			ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
	close(ch)
}

// TestHTTP_ResumesADroppedStream: a client whose call stream dropped
// resumes it with Last-Event-ID and gets the call's answer there.
func TestHTTP_ResumesADroppedStream(t *testing.T) {
	e := newEnv(t)
	if out, err := e.cli("plugins", "pin", "probe"); err != nil {
		t.Fatalf("pin probe: %v\n%s", err, out)
	}
	h := e.serveHTTP(e2eToken)
	auth := map[string]string{"Authorization": "Bearer " + e2eToken}
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(initialize))
	id := h.raw(t, req, auth).Header.Get("Mcp-Session-Id")
	auth["Mcp-Session-Id"], auth["Mcp-Protocol-Version"] = id, "2025-06-18"
	req, _ = http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	h.raw(t, req, auth)

	// open returns an error rather than failing: it also runs off the
	// test's goroutine.
	open := func(req *http.Request) (chan sseEvent, error) {
		for k, v := range auth {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := h.client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			resp.Body.Close()
			return nil, fmt.Errorf("%s: status %d, %s; want an event stream", req.Method, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		ch := make(chan sseEvent, 16)
		go readEvents(resp.Body, ch)
		return ch, nil
	}
	next := func(ch chan sseEvent, what string) sseEvent {
		t.Helper()
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %s", what)
			}
			return ev
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s within 20s", what)
		}
		return sseEvent{}
	}

	ctx, drop := context.WithCancel(context.Background())
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"probe_block","arguments":{},"_meta":{"progressToken":"p"}}}`
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(call))
	stream, err := open(req)
	if err != nil {
		t.Fatal(err)
	}
	first := next(stream, "the progress event")
	if first.id == "" || !strings.Contains(first.data, "notifications/progress") {
		t.Fatalf("first event %+v; want a progress notification with an id", first)
	}
	drop()

	// The resumed stream answers once it has an event to send: open it
	// while the call is ended.
	get, _ := http.NewRequest(http.MethodGet, h.url, nil)
	get.Header.Set("Last-Event-ID", first.id)
	type result struct {
		ch  chan sseEvent
		err error
	}
	opened := make(chan result, 1)
	go func() {
		// 409 while the host has not yet seen the old stream go: a
		// client tries again.
		for i := 0; ; i++ {
			ch, err := open(get)
			if err != nil && strings.Contains(err.Error(), "status 409") && i < 100 {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			opened <- result{ch, err}
			return
		}
	}()
	time.Sleep(200 * time.Millisecond) // let the GET reach the host before the call ends
	req, _ = http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`))
	h.raw(t, req, auth)
	var resumed chan sseEvent
	select {
	case r := <-opened:
		if r.err != nil {
			t.Fatalf("resume with Last-Event-ID: %v", r.err)
		}
		resumed = r.ch
	case <-time.After(20 * time.Second):
		t.Fatal("the GET with Last-Event-ID did not answer within 20s")
	}
	for {
		ev := next(resumed, "the call's answer on the resumed stream")
		if strings.Contains(ev.data, `"id":2`) {
			if !strings.Contains(ev.data, "cancelled") {
				t.Errorf("the answer on the resumed stream: %s", ev.data)
			}
			return
		}
	}
}
