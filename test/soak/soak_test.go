package soak

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/internal/proctest"
)

// The run: warmUp calls, then measured calls in chunks, inFlight at a time.
// YAGENT_SOAK_CALLS lowers measured for a quick try; the figures only mean
// something at the full count.
const (
	warmUp   = 500
	measured = 10_000
	chunks   = 4
	inFlight = 8
)

// Growth allowed from the sample after the warm-up to the last one, per
// process. A leak of one descriptor or one thread per thousand calls, or of
// more than about 6 KiB per call of the most-called tool, goes past these;
// the run-to-run noise of a Go process (a thread started under load, a heap
// that settles a few MiB higher) stays within them.
const (
	maxFDGrowth      = 5
	maxThreadGrowth  = 8
	minRSSGrowthMiB  = 16.0 // RSS may grow by this much ...
	maxRSSGrowthFrac = 0.25 // ... or by this fraction, whichever is larger
)

// TestSoak_MixedCallsDoNotGrowTheProcesses: ten thousand calls (read_file,
// search_replace_in_file, write_file, run_bash echo, think, and some that
// must fail) through one `yagent serve`, eight in flight. Every call gets the
// answer it should, every file ends as the calls left it, and the host and
// each plugin keep their threads, descriptors and resident memory within
// the limits above.
func TestSoak_MixedCallsDoNotGrowTheProcesses(t *testing.T) {
	if os.Getenv("YAGENT_SOAK") != "1" {
		t.Skip("set YAGENT_SOAK=1 (make soak) to run 10,000 calls through bin/yagent serve")
	}
	total := measured
	if s := os.Getenv("YAGENT_SOAK_CALLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < chunks {
			t.Fatalf("YAGENT_SOAK_CALLS=%q: want a number of calls, at least %d", s, chunks)
		}
		total = n
	}
	s := start(t)
	workers := make([]*worker, inFlight)
	for i := range workers {
		workers[i] = newWorker(t, s, i)
	}

	s.run(workers, warmUp)
	s.lat.reset() // latencies and refusals of the measured calls only
	s.refusals.Store(0)
	samples := []sample{s.sample(t, "after warm-up", nil)}
	begin := time.Now()
	for c := 1; c <= chunks; c++ {
		s.run(workers, total/chunks)
		samples = append(samples, s.sample(t, fmt.Sprintf("after %d", c*(total/chunks)), &samples[0]))
	}
	elapsed := time.Since(begin)

	for _, w := range workers {
		w.verifyFiles(t)
	}
	if n := s.failures.Load(); n > 0 {
		t.Errorf("%d of %d calls failed that were meant to succeed, or did not fail as meant; first ones:\n%s",
			n, s.calls.Load(), strings.Join(s.firstFailures(), "\n"))
	}
	if s.connect != nil {
		// The live sessions' states are the most there may be; the ended
		// ones' went with them (removal may trail the DELETE by a moment).
		deadline := time.Now().Add(10 * time.Second)
		for s.sessionStates(t) > len(s.sessions) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := s.sessionStates(t); n > len(s.sessions) {
			t.Errorf("%d sessions ended and %d are live, yet %d session states are saved: ended sessions' todos were kept", s.renewed.Load(), len(s.sessions), n)
		}
		t.Logf("%d sessions ended and renewed; %d session states saved at the end", s.renewed.Load(), s.sessionStates(t))
	}
	limits := checkGrowth(t, samples)
	report(t, s, samples, limits, total, elapsed)
}

// server is one `yagent serve` process and its MCP client: one session
// over stdio, or, with YAGENT_SOAK_FRONT=http, one Streamable HTTP session
// per worker, which ends it and opens another every renewEvery calls.
type server struct {
	cmd       *exec.Cmd
	front     string // stdio or http
	sessions  []*mcp.ClientSession
	workspace string
	home      string
	stderr    *lockedBuffer
	// connect opens one more session (HTTP only), for the workers' renewals.
	connect func() (*mcp.ClientSession, error)
	renewed atomic.Int64

	next     atomic.Int64 // call sequence, shared by the workers
	calls    atomic.Int64
	refusals atomic.Int64 // calls meant to fail, which did
	failures atomic.Int64
	failMu   sync.Mutex
	failText []string
	lat      latencies
}

func start(t *testing.T) *server {
	t.Helper()
	yagent := os.Getenv("YAGENT_BIN")
	if yagent == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		yagent = filepath.Join(wd, "..", "..", "bin", "yagent")
	}
	if _, err := os.Stat(yagent); err != nil {
		t.Fatalf("no yagent binary at %s (run make build, or set YAGENT_BIN): %v", yagent, err)
	}
	s := &server{workspace: t.TempDir(), stderr: &lockedBuffer{}}
	for i := range 16 {
		var b strings.Builder
		fmt.Fprintf(&b, "marker %d\n", i)
		for b.Len() < 2048 {
			fmt.Fprintf(&b, "line %04d of the shared file %d, read over and over\n", b.Len(), i)
		}
		writeFile(t, filepath.Join(s.workspace, "shared", fmt.Sprintf("read-%d.txt", i)), b.String())
	}
	home := t.TempDir()
	s.home = home
	if cfg := os.Getenv("YAGENT_SOAK_CONFIG"); cfg != "" {
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatalf("YAGENT_SOAK_CONFIG: %v", err)
		}
		writeFile(t, filepath.Join(home, ".yagent", "config.yaml"), string(b))
	}
	s.front = os.Getenv("YAGENT_SOAK_FRONT")
	switch s.front {
	case "", "stdio":
		s.front = "stdio"
		s.startStdio(t, yagent, home)
	case "http":
		s.startHTTP(t, yagent, home)
	default:
		t.Fatalf("YAGENT_SOAK_FRONT=%q: want stdio or http", s.front)
	}
	return s
}

func (s *server) startStdio(t *testing.T, yagent, home string) {
	t.Helper()
	s.cmd = exec.Command(yagent, "serve", "--workspace", s.workspace)
	s.cmd.Env = append(environ(), "HOME="+home)
	s.cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: s.cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to %s serve: %v\nstderr:\n%s", yagent, err, s.stderr.String())
	}
	s.sessions = []*mcp.ClientSession{cs}
	t.Cleanup(func() {
		_ = cs.Close()
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
	})
}

const soakToken = "soak-token-0123456789"

type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+soakToken)
	return b.base.RoundTrip(r)
}

// startHTTP starts `serve --http` and opens one session per worker.
func (s *server) startHTTP(t *testing.T, yagent, home string) {
	t.Helper()
	s.cmd = exec.Command(yagent, "serve", "--workspace", s.workspace, "--http", "127.0.0.1:0")
	s.cmd.Env = append(environ(), "HOME="+home, "YAGENT_TOKEN="+soakToken)
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		pw.Close()
	})
	found := proctest.ServingURL(pr)
	var url string
	select {
	case url = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("no serving line from serve --http within 60s:\n%s", s.stderr.String())
	}
	ready := strings.TrimSuffix(url, "/mcp") + "/readyz"
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not 200 within 60s:\n%s", ready, s.stderr.String())
		}
	}
	hc := &http.Client{Transport: bearer{&http.Transport{MaxIdleConnsPerHost: 2 * inFlight}}}
	client := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, nil)
	s.connect = func() (*mcp.ClientSession, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	}
	for range inFlight {
		cs, err := s.connect()
		if err != nil {
			t.Fatalf("connect to %s: %v\nstderr:\n%s", url, err, s.stderr.String())
		}
		s.sessions = append(s.sessions, cs)
	}
	t.Cleanup(func() {
		for _, cs := range s.sessions {
			_ = cs.Close()
		}
	})
}

// environ is the test's environment without HOME and YAGENT_* settings.
func environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "YAGENT_") {
			out = append(out, kv)
		}
	}
	return out
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run makes n calls with every worker busy until the sequence reaches n.
func (s *server) run(workers []*worker, n int) {
	end := s.next.Load() + int64(n)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := s.next.Add(1) - 1
				if i >= end {
					return
				}
				w.step(i)
			}
		}()
	}
	wg.Wait()
	s.next.Store(end)
}

func (s *server) fail(format string, args ...any) {
	s.failures.Add(1)
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if len(s.failText) < 10 {
		s.failText = append(s.failText, fmt.Sprintf(format, args...))
	}
}

func (s *server) firstFailures() []string {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return slices.Clone(s.failText)
}

// call makes one tool call on the worker's session; want is "" for a call that must succeed, else
// the code it must fail with. It returns the result text.
func (w *worker) call(tool string, args map[string]any, want string) string {
	s := w.s
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	begin := time.Now()
	res, err := s.sessions[w.id%len(s.sessions)].CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	s.lat.add(tool, time.Since(begin))
	s.calls.Add(1)
	if err != nil {
		s.fail("%s %v: %v", tool, args, err)
		return ""
	}
	text := resultText(res)
	switch got := resultCode(res); {
	case want == "" && res.IsError:
		s.fail("%s %v: failed with %q: %s", tool, args, got, text)
	case want != "" && !res.IsError:
		s.fail("%s %v: succeeded, want code %s", tool, args, want)
	case want != "" && got != want:
		s.fail("%s %v: code %q, want %s: %s", tool, args, got, want, text)
	case want != "":
		s.refusals.Add(1)
	}
	return text
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func resultCode(r *mcp.CallToolResult) string {
	m, _ := r.StructuredContent.(map[string]any)
	code, _ := m["code"].(string)
	return code
}

// worker owns a folder of the workspace, so that its edits and writes never
// race another worker's and it always knows what its files hold.
type worker struct {
	s       *server
	id      int
	dir     string // relative to the workspace
	value   int    // what edit.txt says now
	written map[string]string
}

func newWorker(t *testing.T, s *server, id int) *worker {
	w := &worker{s: s, id: id, dir: fmt.Sprintf("w%d", id), written: map[string]string{}}
	writeFile(t, filepath.Join(s.workspace, w.dir, "edit.txt"), w.editText(0))
	return w
}

func (w *worker) editText(v int) string {
	return fmt.Sprintf("// worker %d\nvalue = %d\n// end\n", w.id, v)
}

// step makes call number i; its kind follows from i, one in twenty being a
// call that must fail.
func (w *worker) step(i int64) {
	s := w.s
	if s.connect != nil && i%renewEvery == 0 {
		w.renew()
	}
	switch i % 20 {
	case 0, 4, 8, 12, 16:
		n := i % 16
		text := w.call("read_file", map[string]any{"path": fmt.Sprintf("shared/read-%d.txt", n)}, "")
		if !strings.Contains(text, fmt.Sprintf("marker %d\n", n)) {
			s.fail("read_file shared/read-%d.txt: the text lacks its marker: %.200q", n, text)
		}
	case 1, 5, 9, 13:
		w.call("search_replace_in_file", map[string]any{
			"path":       w.dir + "/edit.txt",
			"old_string": fmt.Sprintf("value = %d\n", w.value),
			"new_string": fmt.Sprintf("value = %d\n", w.value+1),
		}, "")
		w.value++
	case 2, 10, 17:
		path := fmt.Sprintf("%s/out-%d.txt", w.dir, i%7)
		content := fmt.Sprintf("written by call %d\n", i)
		w.call("write_file", map[string]any{"path": path, "content": content}, "")
		w.written[path] = content
	case 3, 7, 11, 15:
		text := w.call("run_bash", map[string]any{"command": fmt.Sprintf("echo soak-%d", i)}, "")
		if !strings.Contains(text, fmt.Sprintf("soak-%d", i)) {
			s.fail("run_bash echo soak-%d: output %.200q", i, text)
		}
	case 6, 14, 18:
		w.call("think", map[string]any{"thought": fmt.Sprintf("call %d: nothing to decide", i)}, "")
	case 19:
		if i%40 == 19 {
			w.call("read_file", map[string]any{"path": w.dir + "/missing.txt"}, "not_found")
		} else {
			w.call("search_replace_in_file", map[string]any{
				"path": w.dir + "/edit.txt", "old_string": "value = -1\n", "new_string": "value = -2\n",
			}, "search_not_found")
		}
	}
}

// renewEvery is how often, in calls, an HTTP worker ends its session
// (DELETE) and opens a new one, which it gives a todo: the plugins must
// release what each ended session held.
const renewEvery = 50

// renew ends the worker's session and opens another, with a todo.
func (w *worker) renew() {
	s := w.s
	idx := w.id % len(s.sessions)
	if err := s.sessions[idx].Close(); err != nil {
		s.fail("end session %d: %v", idx, err)
	}
	cs, err := s.connect()
	if err != nil {
		s.fail("open a session: %v", err)
		return
	}
	s.sessions[idx] = cs
	s.renewed.Add(1)
	w.call("todo_write", map[string]any{"todos": []map[string]any{{"id": "1", "content": "a todo of a short-lived session", "status": "pending"}}}, "")
}

// sessionStates counts the cognitive plugin's saved session states.
func (s *server) sessionStates(t *testing.T) int {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(s.home, ".yagent", "state", "sessions", "*", "cognitive.json"))
	if err != nil {
		t.Fatal(err)
	}
	return len(found)
}

// verifyFiles checks that the worker's files hold what its calls left.
func (w *worker) verifyFiles(t *testing.T) {
	t.Helper()
	check := func(rel, want string) {
		got, err := os.ReadFile(filepath.Join(w.s.workspace, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q (%v), want %q", rel, got, err, want)
		}
	}
	check(w.dir+"/edit.txt", w.editText(w.value))
	for rel, want := range w.written {
		check(rel, want)
	}
}

// latencies keeps every call's duration by tool.
type latencies struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

func (l *latencies) add(tool string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string][]time.Duration{}
	}
	l.by[tool] = append(l.by[tool], d)
}

func (l *latencies) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.by = nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
