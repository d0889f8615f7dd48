package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/internal/proctest"
	"github.com/yagent/yagent/internal/testbuild"
)

// Paths shared by the tests, set by TestMain.
var (
	repoRoot   string
	binDir     string // a fresh build: yagent, plugins/, examples/
	yagent     string // binDir/yagent
	probeDir   string // folder holding yagent-plugin-probe
	pluginsDir string // binDir/plugins
)

func TestMain(m *testing.M) {
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	if code == 0 {
		code = m.Run()
	}
	os.RemoveAll(binDir)
	os.Exit(code)
}

// setup builds the host and every plugin from the source under test into a
// temporary folder, so the tests never run a stale binary.
func setup() (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	// Outside the temp folders: the host refuses a custom plugin there
	// that nothing vouches for, and the probe and hello are unpinned.
	binDir, err = testbuild.BinDir("yagent-e2e-bin-")
	if err != nil {
		return 1, err
	}
	yagent = filepath.Join(binDir, "yagent")
	pluginsDir = filepath.Join(binDir, "plugins")
	probeDir = filepath.Join(binDir, "probe")
	builds := append([]testbuild.Target{
		testbuild.Host(binDir),
		{Pkg: "./test/e2e/testplugin", Out: filepath.Join(probeDir, "yagent-plugin-probe")},
		{Pkg: "./examples/hello", Out: filepath.Join(binDir, "examples", "yagent-plugin-hello")},
		{Pkg: "./test/e2e/testdata/clash", Out: filepath.Join(binDir, "examples", "yagent-plugin-clash")},
	}, testbuild.Plugins(pluginsDir)...)
	if err := testbuild.Build(builds...); err != nil {
		return 1, err
	}
	return 0, nil
}

// env is one isolated host: its own home (spec cache, lock file) and workspace.
type env struct {
	t         *testing.T
	home      string
	workspace string
	dirs      []string
	// extraEnv is added to the environment of every process the env runs.
	extraEnv []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		t:         t,
		home:      t.TempDir(),
		workspace: t.TempDir(),
		dirs: []string{
			pluginsDir,
			filepath.Join(binDir, "examples"),
			probeDir,
		},
	}
	return e
}

func (e *env) args(extra ...string) []string {
	a := []string{"--workspace", e.workspace}
	for _, d := range e.dirs {
		a = append(a, "--plugin-dir", d)
	}
	return append(a, extra...)
}

func (e *env) environ(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "YAGENT_") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+e.home)
	out = append(out, e.extraEnv...)
	return append(out, extra...)
}

// userConfig writes the user's ~/.yagent/config.yaml.
func (e *env) userConfig(content string) {
	e.t.Helper()
	dir := filepath.Join(e.home, ".yagent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// cli runs bin/yagent to completion.
func (e *env) cli(args ...string) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, yagent, append(args, e.args()...)...)
	cmd.Env = e.environ()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// client is an MCP client connected to a `yagent serve` process.
type client struct {
	*mcp.ClientSession
	cmd         *exec.Cmd
	stderr      *syncBuffer
	listChanged chan struct{}
	progress    chan string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve starts `yagent serve` with extra flags and connects to it.
func (e *env) serve(extraEnv []string, flags ...string) *client {
	e.t.Helper()
	cmd := exec.Command(yagent, append([]string{"serve"}, e.args(flags...)...)...)
	cmd.Env = e.environ(extraEnv...)
	c := &client{cmd: cmd, stderr: &syncBuffer{}, listChanged: make(chan struct{}, 16), progress: make(chan string, 16)}
	cmd.Stderr = c.stderr
	mc := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.listChanged <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case c.progress <- r.Params.Message:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mc.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
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

func (c *client) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v\nstderr:\n%s", name, err, c.stderr.String())
	}
	return res
}

// tools lists the session's tools, in the order the server sent them.
func (c *client) tools(t *testing.T) []*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	return res.Tools
}

func (c *client) toolNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, tl := range c.tools(t) {
		names = append(names, tl.Name)
	}
	return names
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func code(r *mcp.CallToolResult) string {
	m, ok := r.StructuredContent.(map[string]any)
	if !ok {
		return ""
	}
	s, _ := m["code"].(string)
	return s
}

func dataOf(t *testing.T, r *mcp.CallToolResult, into any) {
	t.Helper()
	m, _ := r.StructuredContent.(map[string]any)
	b, err := json.Marshal(m["data"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("decode data %s: %v", b, err)
	}
}

// children and alive read the process table; the tests count only their
// own processes.
var (
	children = proctest.Children
	alive    = proctest.Alive
)

// eventually polls cond every 10 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("gave up after 10s waiting for %s", what)
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

func callWithArgs(c *client, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func callWithProgress(c *client, name string) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}
	p.SetProgressToken("e2e-" + name)
	return c.CallTool(ctx, p)
}
