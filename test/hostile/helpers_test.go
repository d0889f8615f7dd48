package hostile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/yagent/yagent/internal/testbuild"
)

// managedDirEnv names the variable through which a test build of yagent
// finds its managed layer instead of /etc/yagent. Only binaries built with
// the ldflag below read it; a release build never does.
const managedDirEnv = "YAGENT_TEST_MANAGED_DIR"

// managedSeamFlag turns the seam on in the test build.
const managedSeamFlag = "-X github.com/yagent/yagent/host/config.managedDirEnv=" + managedDirEnv

// Paths shared by the tests, set by TestMain.
var (
	repoRoot string
	binDir   string // yagent, plugins/, hostile/
	yagent   string
	baseDir  string // holds every env; outside /tmp, which commands may name freely
)

// TestMain builds the host, the first-party plugins and the naive test
// plugin from the source under test. YAGENT_HOSTILE_BIN names a folder
// holding a build made elsewhere (yagent, plugins/, hostile/), to replay
// the suite against another commit.
func TestMain(m *testing.M) {
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile setup:", err)
		os.Exit(1)
	}
	if code == 0 {
		code = m.Run()
	}
	if os.Getenv("YAGENT_HOSTILE_BIN") == "" {
		os.RemoveAll(binDir)
	}
	unmountUnder(baseDir)
	os.RemoveAll(baseDir)
	os.Exit(code)
}

func setup() (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	// /var/tmp, not /tmp: a command may name anything under /tmp without
	// asking, so an outside file there would prove nothing.
	if baseDir, err = os.MkdirTemp("/var/tmp", "yagent-hostile-"); err != nil {
		return 1, err
	}
	if dir := os.Getenv("YAGENT_HOSTILE_BIN"); dir != "" {
		binDir = dir
		yagent = filepath.Join(binDir, "yagent")
		return 0, nil
	}
	// Outside the temp folders: the host refuses a custom plugin there
	// that nothing vouches for, and the naive plugin is unpinned.
	if binDir, err = testbuild.BinDir("yagent-hostile-bin-"); err != nil {
		return 1, err
	}
	yagent = filepath.Join(binDir, "yagent")
	builds := append([]testbuild.Target{
		testbuild.Host(binDir, "-ldflags", managedSeamFlag),
		{Pkg: "./test/hostile/testplugin", Out: filepath.Join(binDir, "hostile", "yagent-plugin-naive")},
	}, testbuild.Plugins(filepath.Join(binDir, "plugins"))...)
	if err := testbuild.Build(builds...); err != nil {
		return 1, err
	}
	return 0, nil
}

// env is one isolated host: its own home, workspace, temp folder, managed
// layer and a folder outside all of them holding the attacker's targets.
type env struct {
	t         *testing.T
	root      string
	home      string
	workspace string
	outside   string // outside the workspace, the home and every read root
	managed   string // the managed layer (/etc/yagent in a release build)
	tmp       string
	extraEnv  []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := os.MkdirTemp(baseDir, "env-")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{
		t:         t,
		root:      root,
		home:      filepath.Join(root, "home"),
		workspace: filepath.Join(root, "ws"),
		outside:   filepath.Join(root, "outside"),
		managed:   filepath.Join(root, "managed"),
		tmp:       filepath.Join(root, "tmp"),
	}
	for _, d := range []string{e.home, e.workspace, e.outside, e.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	return e
}

// ws returns the absolute path of rel inside the workspace.
func (e *env) ws(rel string) string { return filepath.Join(e.workspace, rel) }

// write writes content to path (absolute, or relative to the workspace),
// making its folders.
func (e *env) write(path, content string) string {
	e.t.Helper()
	if !filepath.IsAbs(path) {
		path = e.ws(path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// symlink makes link (absolute, or relative to the workspace) point at target.
func (e *env) symlink(target, link string) {
	e.t.Helper()
	if !filepath.IsAbs(link) {
		link = e.ws(link)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		e.t.Fatal(err)
	}
}

// secret writes a file at path (absolute, or relative to the outside
// folder) holding a fresh marker, and returns the marker: any result that
// shows it has read the file.
func (e *env) secret(path string) string {
	e.t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.outside, path)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	marker := "SECRET-" + hex.EncodeToString(b)
	e.write(path, marker+"\n")
	return marker
}

func (e *env) pluginDirs() []string {
	return []string{filepath.Join(binDir, "plugins"), filepath.Join(binDir, "hostile")}
}

func (e *env) args(extra ...string) []string {
	a := []string{"--workspace", e.workspace}
	for _, d := range e.pluginDirs() {
		a = append(a, "--plugin-dir", d)
	}
	return append(a, extra...)
}

func (e *env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "YAGENT_") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+e.home, "TMPDIR="+e.tmp, managedDirEnv+"="+e.managed)
	return append(out, e.extraEnv...)
}

// cli runs yagent with args (the env's workspace and plugin folders
// appended) from dir ("" = the workspace) and returns its combined output.
func (e *env) cli(dir string, args ...string) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, yagent, append(args, e.args()...)...)
	cmd.Env = e.environ()
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = e.workspace
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// pin pins the named plugins in the env's lock file.
func (e *env) pin(names ...string) {
	e.t.Helper()
	if out, err := e.cli("", append([]string{"plugins", "pin"}, names...)...); err != nil {
		e.t.Fatalf("yagent plugins pin %v: %v\n%s", names, err, out)
	}
}

// client is an MCP client connected to a `yagent serve` process.
type client struct {
	*mcp.ClientSession
	stderr *syncBuffer
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

// serve starts `yagent serve` with flags (-y, --profile readonly, ...) and
// connects a client that cannot be asked: every ask fails closed with
// needs_auth.
func (e *env) serve(flags ...string) *client {
	e.t.Helper()
	return e.serveWith(nil, flags...)
}

// serveWith is serve with client options (an elicitation handler, say).
func (e *env) serveWith(opts *mcp.ClientOptions, flags ...string) *client {
	e.t.Helper()
	cmd := exec.Command(yagent, append([]string{"serve"}, e.args(flags...)...)...)
	cmd.Env = e.environ()
	cmd.Dir = e.workspace
	c := &client{stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	mc := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "0"}, opts)
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

// result is one tool result as the model sees it.
type result struct {
	Code string
	Text string
	Data json.RawMessage
}

func (r result) String() string { return fmt.Sprintf("code=%q text=%q", r.Code, r.Text) }

// call calls tool with args and returns the result.
func (c *client) call(t *testing.T, tool string, args any) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v\nstderr:\n%s", tool, err, c.stderr.String())
	}
	var r result
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			r.Text += tc.Text
		}
	}
	if m, ok := res.StructuredContent.(map[string]any); ok {
		r.Code, _ = m["code"].(string)
		if d, ok := m["data"]; ok {
			r.Data, _ = json.Marshal(d)
		}
	}
	if res.IsError && r.Code == "" {
		r.Code = "error"
	}
	return r
}

// blocked fails t unless r was stopped before it ran (asked with nobody to
// answer, or refused) and shows none of the secrets.
func blocked(t *testing.T, r result, secrets ...string) {
	t.Helper()
	leaked(t, r, secrets...)
	if r.Code != "needs_auth" && r.Code != "denied" {
		t.Errorf("want needs_auth or denied, got %s", r)
	}
}

// denied fails t unless r was refused by a rule (denied) and shows none of
// the secrets: what must hold under -y.
func denied(t *testing.T, r result, secrets ...string) {
	t.Helper()
	leaked(t, r, secrets...)
	if r.Code != "denied" {
		t.Errorf("want denied, got %s", r)
	}
}

// leaked fails t if r shows any of the secrets.
func leaked(t *testing.T, r result, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && (strings.Contains(r.Text, s) || strings.Contains(string(r.Data), s)) {
			t.Errorf("the result shows the secret %s: %s", s, r)
		}
	}
}

// allowed fails t unless r ran without an ask and shows every want.
func allowed(t *testing.T, r result, wants ...string) {
	t.Helper()
	if r.Code != "" {
		t.Errorf("want the call to run without an ask, got %s", r)
		return
	}
	for _, w := range wants {
		if !strings.Contains(r.Text, w) && !strings.Contains(string(r.Data), w) {
			t.Errorf("the result lacks %q: %s", w, r)
		}
	}
}
