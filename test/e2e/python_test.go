package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/internal/wire"
	"github.com/yagent/yagent/sdk"
)

// systemPython is the interpreter the Python example's shebang names:
// Debian's, whose python3-grpcio, python3-protobuf and
// python3-cryptography it imports.
const systemPython = "/usr/bin/python3"

// pythonMissing says what the Python example lacks on this machine, ""
// when nothing; it asks the interpreter once.
var pythonMissing = sync.OnceValue(func() string {
	out, err := exec.Command(systemPython, "-I", "-c", "import grpc, google.protobuf, cryptography").CombinedOutput()
	if err != nil {
		return "the Python example plugin needs " + systemPython + " with python3-grpcio, python3-protobuf and python3-cryptography (apt-get install them): " +
			err.Error() + "\n" + string(out)
	}
	return ""
})

// pythonPlugin installs examples/python's plugin, its script and the
// generated module beside it, into a fresh folder under binDir (outside
// the temp folders, where the host would refuse it unpinned) and returns
// the folder. Without the system Python and its packages it skips, and
// under CI (CI set: .ci/run installs them) it fails.
func pythonPlugin(t *testing.T) string {
	t.Helper()
	if msg := pythonMissing(); msg != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; CI must run it: .ci/run installs them", msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp(binDir, "python-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{"yagent-plugin-pyhello", 0o755}, {"plugin_pb2.py", 0o644}} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "python", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPythonPlugin: a plugin written in Python, run by the real host. It
// describes itself to `yagent tools` (its tools Cold, exec until it is
// pinned, their declared Effects after), and `yagent serve` calls its
// tools over MCP: a result with its text and data, one shaped by the
// plugin's setting, a file the guard resolved, and the plugin's own
// invalid_input and not_found errors. The host gets no call channel nor
// Ed25519 identity from it and goes on with gRPC Call streams and the
// certificate of go-plugin's handshake line.
func TestPythonPlugin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.dirs = []string{pythonPlugin(t)} // the first-party families are not needed

	effects := func(out string) map[string]string {
		got := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 4 && f[2] == "pyhello" {
				if f[1] != "cold" {
					t.Errorf("%s is %s, want cold (a custom plugin's tool):\n%s", f[0], f[1], out)
				}
				got[f[0]] = f[3]
			}
		}
		return got
	}
	out, err := e.cli("tools", "--all")
	if err != nil {
		t.Fatalf("yagent tools --all: %v\n%s", err, out)
	}
	if got := effects(out); got["py_word_count"] != "exec" || got["py_file_stats"] != "exec" {
		t.Errorf("unpinned, the Python plugin's tools: want both exec, got %v\n%s", got, out)
	}
	if out, err := e.cli("plugins", "pin", "pyhello"); err != nil {
		t.Fatalf("pin pyhello: %v\n%s", err, out)
	}
	out, err = e.cli("tools", "--all")
	if err != nil {
		t.Fatalf("yagent tools --all: %v\n%s", err, out)
	}
	if got := effects(out); got["py_word_count"] != "none" || got["py_file_stats"] != "read" {
		t.Errorf("pinned, the Python plugin's tools: want py_word_count none and py_file_stats read, got %v\n%s", got, out)
	}

	if err := os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("the cat\nand the hat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The plugin's settings reach it in YAGENT_PLUGIN_SETTINGS.
	e.userConfig("plugins:\n  pyhello:\n    default_top: \"1\"\n")
	c := e.serve(nil)

	r := c.call(t, "py_word_count", map[string]any{"text": "The cat and the hat. The end!", "top": 2})
	if r.IsError {
		t.Fatalf("py_word_count: code=%q %s\nstderr:\n%s", code(r), text(r), c.stderr.String())
	}
	if want := "7 words (5 distinct), 1 line, 29 characters. Most frequent: the ×3, cat ×1"; !strings.Contains(text(r), want) {
		t.Errorf("py_word_count: got %q, want it to hold %q", text(r), want)
	}
	var counts struct {
		Words, Distinct, Lines, Characters int
		Top                                []struct {
			Word  string
			Count int
		}
	}
	dataOf(t, r, &counts)
	if counts.Words != 7 || counts.Distinct != 5 || len(counts.Top) != 2 || counts.Top[0].Word != "the" || counts.Top[0].Count != 3 {
		t.Errorf("py_word_count's data: %+v", counts)
	}

	r = c.call(t, "py_word_count", map[string]any{"text": "b a c a"})
	if got := text(r); r.IsError || !strings.HasSuffix(got, "Most frequent: a ×2") {
		t.Errorf("py_word_count with no top, under the setting default_top 1: got %q, want the one most frequent word", got)
	}

	// Input the schema allows but the tool refuses: the plugin's own
	// ToolError reaches the model, telling it what to send instead.
	r = c.call(t, "py_word_count", map[string]any{"text": "  \n "})
	if !r.IsError || code(r) != "invalid_input" || !strings.Contains(text(r), "text is empty: pass the words to count") {
		t.Errorf("py_word_count of blanks: want the plugin's invalid_input, got isError=%v code=%q %q", r.IsError, code(r), text(r))
	}

	// A path_read argument: the guard resolves it in the workspace and the
	// plugin opens what it is sent.
	r = c.call(t, "py_file_stats", map[string]any{"path": "notes.txt"})
	if r.IsError || !strings.Contains(text(r), "notes.txt: 5 words (4 distinct), 2 lines") {
		t.Errorf("py_file_stats notes.txt: code=%q %q", code(r), text(r))
	}
	r = c.call(t, "py_file_stats", map[string]any{"path": "missing.txt"})
	if !r.IsError || code(r) != "not_found" || !strings.Contains(text(r), "there is no file missing.txt") {
		t.Errorf("py_file_stats of a missing file: want not_found, got isError=%v code=%q %q", r.IsError, code(r), text(r))
	}

	if err := c.Close(); err != nil {
		t.Errorf("close the MCP session: %v", err)
	}
	// What the host's go-plugin logs when the plugin lacks a service it
	// leans on: no broker stream to offer its callbacks on, no controller to
	// stop the process with.
	for _, bad := range []string{"acceptAndServe", "failed to exit gracefully"} {
		if strings.Contains(c.stderr.String(), bad) {
			t.Errorf("yagent serve's stderr tells of %q:\n%s", bad, c.stderr.String())
		}
	}
}

// TestPythonPlugin_GoPluginHandshake: the Python plugin served to a bare
// go-plugin client with AutoMTLS, the host's way where it cannot hand a
// plugin an identity of its own (P-521 certificates, in the handshake
// line and PLUGIN_CLIENT_CERT). Its health service answers SERVING for
// "plugin" (and SERVICE_UNKNOWN for others), it holds the broker stream
// open, it describes itself as protocol 2 and runs a call, its socket
// refuses a client without the host's key, and it exits by itself when
// go-plugin stops it (GRPCController/Shutdown), with no kill, leaving no
// socket behind.
func TestPythonPlugin_GoPluginHandshake(t *testing.T) {
	t.Parallel()
	dir := pythonPlugin(t)
	log := &syncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "host", Output: log, Level: hclog.Debug})
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: remote.PluginSet(nil),
		Cmd:              exec.Command(filepath.Join(dir, "yagent-plugin-pyhello")),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     30 * time.Second,
		Logger:           logger,
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start the Python plugin: %v\n%s", err, log.String())
	}
	if err := rpc.Ping(); err != nil {
		t.Errorf("go-plugin's Ping (grpc.health.v1 Check of \"plugin\"): %v", err)
	}
	conn := rpc.(*plugin.GRPCClient).Conn
	if resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "tools"}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVICE_UNKNOWN {
		t.Errorf("health of a service the plugin does not serve: %v, %v; want SERVICE_UNKNOWN", resp.GetStatus(), err)
	}
	if err := brokerStreamHolds(conn); err != nil {
		t.Errorf("the broker stream, which the host offers its callbacks on: %v", err)
	}
	r, err := remote.Dispense(rpc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := r.Describe(ctx)
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if d.Name != "pyhello" || d.ProtocolVersion != sdk.ProtocolVersion || len(d.Specs) != 2 {
		t.Errorf("describe: %+v", d)
	}
	res, err := r.Call(ctx, sdk.CallInfo{Tool: "py_word_count"}, []byte(`{"text":"a b a"}`), nil)
	if err != nil || !strings.HasPrefix(res.Text, "3 words (2 distinct)") {
		t.Errorf("py_word_count over a Call stream: %+v, %v", res, err)
	}

	rc := client.ReattachConfig()
	if rc == nil || rc.Addr == nil {
		t.Fatal("no address for the Python plugin")
	}
	target := rc.Addr.Network() + ":" + rc.Addr.String()
	for name, creds := range map[string]credentials.TransportCredentials{
		"plaintext":        insecure.NewCredentials(),
		"no certificate":   credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}),
		"a key of its own": credentials.NewTLS(strangerTLS(t)),
	} {
		conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "plugin"})
		cancel()
		conn.Close()
		if err == nil {
			t.Errorf("%s: the Python plugin answered a stranger: %v", name, resp.GetStatus())
		}
	}

	client.Kill()
	if !client.Exited() {
		t.Error("the Python plugin still runs after Kill")
	}
	if strings.Contains(log.String(), "failed to exit gracefully") {
		t.Errorf("the Python plugin did not exit on GRPCController/Shutdown; go-plugin killed it:\n%s", log.String())
	}
	if sock := rc.Addr.String(); rc.Addr.Network() == "unix" {
		if _, err := os.Stat(filepath.Dir(sock)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the folder of the plugin's socket %s is left behind: %v", sock, err)
		}
	}
}

// brokerStreamHolds opens go-plugin's broker stream on conn, as the host
// does, and reports an error when it ends within a moment (a plugin without
// the service answers Unimplemented at once; the host's broker then closes,
// and go-plugin logs on its stderr that it could not offer its callbacks).
func brokerStreamHolds(conn *grpc.ClientConn) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, "/plugin.GRPCBroker/StartStream")
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- stream.RecvMsg(&emptypb.Empty{}) }()
	select {
	case err := <-ended:
		return fmt.Errorf("it ended at once: %v", err)
	case <-time.After(300 * time.Millisecond):
		return nil
	}
}

// strangerTLS is a client identity the plugin never saw, trusting whatever
// answers.
func strangerTLS(t *testing.T) *tls.Config {
	t.Helper()
	cert, key, err := wire.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := wire.MutualTLS(cert, key, cert)
	if err != nil {
		t.Fatal(err)
	}
	cfg.InsecureSkipVerify = true
	return cfg
}
