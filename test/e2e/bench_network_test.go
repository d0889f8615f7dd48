package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/sdk/sandbox"
)

// BenchmarkServeRunBash_HTTPSThroughTheProxy: run_bash of a command making
// 20 HTTPS requests (curl, each a new connection) to a local upstream,
// under sandbox.network: proxy (each through a CONNECT tunnel of the
// session's proxy, judged by the table) and under on (direct), the two
// hosts called in turn. Reports each median and proxy/on, the median of
// the turns' ratios.
func BenchmarkServeRunBash_HTTPSThroughTheProxy(b *testing.B) {
	if _, err := exec.LookPath("curl"); err != nil {
		b.Skip("no curl")
	}
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	b.Cleanup(up.Close)
	// Through the proxy where one is set (NO_PROXY names the upstream's
	// loopback address, so it is named explicitly), direct otherwise.
	alternateNetworks(b, `p=${HTTPS_PROXY:-}; for i in $(seq 20); do curl -sSk --noproxy '' ${p:+-x $p} -o /dev/null `+up.URL+`/ || exit 1; done; echo done`)
}

// BenchmarkServeRunBash_TrueUnderProxy: run_bash true under proxy (the
// command enters the session's namespace) and under on, in turn.
func BenchmarkServeRunBash_TrueUnderProxy(b *testing.B) {
	alternateNetworks(b, "true; echo done")
}

// alternateNetworks calls run_bash of command on two hosts, one under
// sandbox.network: on and one under proxy, in turn, and reports each
// median and the median of the turns' ratios.
func alternateNetworks(b *testing.B, command string) {
	b.Helper()
	if !sandbox.Probe().NetNS {
		b.Skip("no network namespaces here")
	}
	connect := func(network string) *mcp.ClientSession {
		home := b.TempDir()
		if err := os.MkdirAll(filepath.Join(home, ".yagent"), 0o700); err != nil {
			b.Fatal(err)
		}
		cfg := fmt.Sprintf("sandbox: {network: %s}\nnetwork: {allow: [\"127.0.0.1\"]}\n", network)
		if err := os.WriteFile(filepath.Join(home, ".yagent", "config.yaml"), []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(yagent, "serve", "--workspace", b.TempDir(), "--plugin-dir", pluginsDir)
		cmd.Env = append(os.Environ(), "HOME="+home, "HTTPS_PROXY=", "https_proxy=", "HTTP_PROXY=", "http_proxy=", "ALL_PROXY=", "all_proxy=")
		mc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		cs, err := mc.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
		if err != nil {
			b.Fatalf("connect (%s): %v", network, err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	args := map[string]any{"command": command}
	hosts := map[string]*mcp.ClientSession{"on": connect("on"), "proxy": connect("proxy")}
	call := func(name string) time.Duration {
		start := time.Now()
		r, err := hosts[name].CallTool(context.Background(), &mcp.CallToolParams{Name: "run_bash", Arguments: args})
		d := time.Since(start)
		if err != nil || r.IsError || text(r) != "done\n" {
			b.Fatalf("run_bash under %s: %v %q", name, err, text(r))
		}
		return d
	}
	call("on")
	call("proxy")
	var on, proxy, ratios []float64
	for b.Loop() {
		o, p := call("on"), call("proxy")
		on, proxy = append(on, o.Seconds()*1000), append(proxy, p.Seconds()*1000)
		ratios = append(ratios, p.Seconds()/o.Seconds())
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(on), "on-ms")
	b.ReportMetric(median(proxy), "proxy-ms")
	b.ReportMetric(median(ratios), "proxy/on")
}
