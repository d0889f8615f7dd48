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
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/plugins/browser/chrome"
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
	alternateBash(b, `p=${HTTPS_PROXY:-}; for i in $(seq 20); do curl -sSk --noproxy '' ${p:+-x $p} -o /dev/null `+up.URL+`/ || exit 1; done; echo done`)
}

// BenchmarkServeRunBash_TrueUnderProxy: run_bash true under proxy (the
// command enters the session's namespace) and under on, in turn.
func BenchmarkServeRunBash_TrueUnderProxy(b *testing.B) {
	alternateBash(b, "true; echo done")
}

// BenchmarkServeBrowser_PageThroughTheProxy: browser_navigate to a local
// page that loads 20 scripts and 20 images from its own origin, under
// sandbox.network: proxy (every request through the session's proxy for
// pages, judged by the table) and under on (direct), in turn. The page is
// served with no-store, so each navigation fetches all 41 again.
func BenchmarkServeBrowser_PageThroughTheProxy(b *testing.B) {
	if _, err := chrome.Find(""); err != nil {
		b.Skipf("no browser: %v", err)
	}
	var page strings.Builder
	page.WriteString("<html><title>bench</title><body><p>page</p>")
	for i := range 20 {
		fmt.Fprintf(&page, `<script src="/s%d.js"></script><img src="/i%d.svg">`, i, i)
	}
	page.WriteString("</body></html>")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "application/javascript")
			_, _ = w.Write([]byte("window.n = (window.n || 0) + 1;"))
		case strings.HasSuffix(r.URL.Path, ".svg"):
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`))
		default:
			_, _ = w.Write([]byte(page.String()))
		}
	}))
	b.Cleanup(site.Close)
	alternateNetworks(b, false, "browser_navigate", map[string]any{"url": site.URL + "/"}, func(out string) bool {
		return strings.Contains(out, "page")
	}, "--profile", "full")
}

// alternateBash calls run_bash of command on two hosts, under on and under
// proxy, in turn (see alternateNetworks).
func alternateBash(b *testing.B, command string) {
	b.Helper()
	alternateNetworks(b, true, "run_bash", map[string]any{"command": command}, func(out string) bool { return out == "done\n" })
}

// alternateNetworks calls tool with args on two hosts, one under
// sandbox.network: on and one under proxy, in turn, and reports each
// median and the median of the turns' ratios; ok judges each answer's
// text. netns says the figures mean something only with network
// namespaces (commands enter the session's).
func alternateNetworks(b *testing.B, netns bool, tool string, args map[string]any, ok func(string) bool, flags ...string) {
	b.Helper()
	if netns && !sandbox.Probe().NetNS {
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
		cmd := exec.Command(yagent, append([]string{"serve", "--workspace", b.TempDir(), "--plugin-dir", pluginsDir}, flags...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "HTTPS_PROXY=", "https_proxy=", "HTTP_PROXY=", "http_proxy=", "ALL_PROXY=", "all_proxy=")
		mc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
		cs, err := mc.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
		if err != nil {
			b.Fatalf("connect (%s): %v", network, err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	hosts := map[string]*mcp.ClientSession{"on": connect("on"), "proxy": connect("proxy")}
	call := func(name string) time.Duration {
		start := time.Now()
		r, err := hosts[name].CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		d := time.Since(start)
		if err != nil || r.IsError || !ok(text(r)) {
			b.Fatalf("%s under %s: %v %q", tool, name, err, text(r))
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
