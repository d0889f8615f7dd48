package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/plugins/browser/chrome"
)

// TestServe_BrowserThroughTheSessionsProxy: under sandbox.network: proxy
// every request of the browser goes through the session's proxy. A page on
// an allowed host whose script fetches a loopback server that answers any
// origin gets nothing back, while its own origin's requests work; a
// navigation to a host the profile does not name asks, and once approved
// that origin's page loads its own script. Red on the browser that reached
// the network directly: the script read the loopback server's secret.
func TestServe_BrowserThroughTheSessionsProxy(t *testing.T) {
	t.Parallel()
	if _, err := chrome.Find(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the browser tests: %v", err)
		}
		t.Skipf("no browser: %v", err)
	}
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "SECRET-OF-THIS-MACHINE")
	}))
	t.Cleanup(secret.Close)
	dev := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app.js" {
			w.Header().Set("Content-Type", "application/javascript")
			fmt.Fprint(w, `document.getElementById("app").textContent = "dev server script ran"`)
			return
		}
		fmt.Fprint(w, `<html><title>dev</title><body><p id="app">waiting</p><script src="/app.js"></script></body></html>`)
	}))
	t.Cleanup(dev.Close)
	secretURL, devURL := secret.URL+"/secret", dev.URL+"/"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/own":
			fmt.Fprint(w, "own origin answered")
		default:
			fmt.Fprintf(w, `<html><title>site</title><body><p id="own">waiting</p><p id="other">waiting</p><script>
fetch("/own").then(r => r.text()).then(t => { document.getElementById("own").textContent = "own: " + t })
  .catch(e => { document.getElementById("own").textContent = "own failed: " + e });
fetch(%q).then(r => r.text()).then(t => { document.getElementById("other").textContent = "loopback: " + t })
  .catch(e => { document.getElementById("other").textContent = "loopback refused" });
</script></body></html>`, secretURL)
		}
	}))
	t.Cleanup(site.Close)
	su, err := url.Parse(site.URL)
	if err != nil {
		t.Fatal(err)
	}
	page := "http://localhost:" + su.Port() + "/"

	e := newEnv(t)
	e.userConfig("sandbox: {network: proxy}\nnetwork: {allow: [localhost]}\n")
	el := &elicitor{action: "accept", scope: "once"}
	c := e.serveWith(&mcp.ClientOptions{ElicitationHandler: el.handle}, elicitingProtocol, "--profile", "full")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("yagent serve's stderr:\n%s", c.stderr.String())
		}
	})

	if r := c.call(t, "browser_navigate", map[string]any{"url": page}); r.IsError {
		t.Fatalf("navigate to the allowed host: %s", text(r))
	}
	if q := el.questions(); len(q) != 0 {
		t.Errorf("the allowed host asked: %q", q)
	}
	r := c.call(t, "browser_wait_for", map[string]any{"text": "own origin answered"})
	if r.IsError {
		t.Fatalf("the page's request to its own origin: %s", text(r))
	}
	if r := c.call(t, "browser_wait_for", map[string]any{"text": "loopback"}); r.IsError {
		t.Fatalf("the page's request to the loopback server did not end: %s", text(r))
	}
	got := text(c.call(t, "browser_snapshot", map[string]any{}))
	if strings.Contains(got, "SECRET-OF-THIS-MACHINE") || !strings.Contains(got, "loopback refused") {
		t.Errorf("the page's script fetched the loopback server:\n%s", got)
	}

	// A host the profile does not name asks; approved, its page loads its
	// own script through the proxy.
	r = c.call(t, "browser_navigate", map[string]any{"url": devURL})
	if r.IsError {
		t.Fatalf("the approved navigation: %s", text(r))
	}
	if q := el.questions(); len(q) != 1 || !strings.Contains(q[0], "127.0.0.1") {
		t.Errorf("questions %q, want one naming 127.0.0.1", q)
	}
	if r := c.call(t, "browser_wait_for", map[string]any{"text": "dev server script ran"}); r.IsError {
		t.Errorf("the approved origin's own script: %s\n%s", text(r), text(c.call(t, "browser_snapshot", map[string]any{})))
	}
}
