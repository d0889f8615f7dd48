package e2e

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
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
// origin, or opens a WebSocket to it, gets nothing back, while its own
// origin's requests work; a
// navigation to a host the profile does not name asks, and once approved
// that origin's page loads its own script. The audit trail has the refusals.
// Red on the browser that reached
// the network directly: the script read the loopback server's secret.
func TestServe_BrowserThroughTheSessionsProxy(t *testing.T) {
	t.Parallel()
	if _, err := chrome.Find(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the browser tests: %v", err)
		}
		t.Skipf("no browser: %v", err)
	}
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ws" {
			serveOneMessage(w, r, "SECRET-OF-THIS-MACHINE")
			return
		}
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
	secretURL, secretWS, devURL := secret.URL+"/secret", "ws"+strings.TrimPrefix(secret.URL, "http")+"/ws", dev.URL+"/"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/own":
			fmt.Fprint(w, "own origin answered")
		default:
			fmt.Fprintf(w, `<html><title>site</title><body><p id="own">waiting</p><p id="other">waiting</p><p id="ws">waiting</p><script>
const say = (id, t) => { document.getElementById(id).textContent = t };
fetch("/own").then(r => r.text()).then(t => say("own", "own: " + t)).catch(e => say("own", "own failed: " + e));
fetch(%q).then(r => r.text()).then(t => say("other", "loopback: " + t)).catch(e => say("other", "loopback refused"));
const ws = new WebSocket(%q);
ws.onmessage = m => say("ws", "socket: " + m.data);
ws.onerror = () => say("ws", "socket refused");
</script></body></html>`, secretURL, secretWS)
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
	for _, what := range []string{"loopback", "socket"} {
		if r := c.call(t, "browser_wait_for", map[string]any{"text": what}); r.IsError {
			t.Fatalf("the page's %s request to the loopback server did not end: %s", what, text(r))
		}
	}
	got := text(c.call(t, "browser_snapshot", map[string]any{}))
	if strings.Contains(got, "SECRET-OF-THIS-MACHINE") || !strings.Contains(got, "loopback refused") || !strings.Contains(got, "socket refused") {
		t.Errorf("the page's script reached the loopback server:\n%s", got)
	}

	// The refused requests are in the audit trail, answered by the page
	// rule.
	secretHost := strings.TrimPrefix(secret.URL, "http://")
	eventually(t, "the page's refused requests in the audit trail", func() bool {
		out, err := e.cli("audit", "--kind", "network", "--by", "page")
		return err == nil && strings.Contains(out, secretHost) && strings.Contains(out, "ask no by page")
	})

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

// serveOneMessage answers a WebSocket handshake and sends msg as one text
// frame, then closes.
func serveOneMessage(w http.ResponseWriter, r *http.Request, msg string) {
	sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
	buf.Write([]byte{0x81, byte(len(msg))})
	buf.WriteString(msg)
	buf.Flush()
	// Held open until the page goes: a close now could race the message.
	_, _ = io.Copy(io.Discard, conn)
}
