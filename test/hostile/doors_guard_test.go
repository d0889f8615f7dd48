package hostile

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// doorsConfig writes the user's config: body is YAML, one key a line.
func doorsConfig(e *env, body ...string) {
	e.t.Helper()
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), strings.Join(body, "\n")+"\n")
}

// doorsNoBrowser is the key of a config whose browser plugin finds no
// Chromium, so that no navigation can leave this machine whatever the
// guard lets through: for the targets that must never get a packet.
const doorsNoBrowser = "plugins:\n  browser:\n    chromium: /nonexistent/chromium"

// doorsBrowserRan reports whether r came from a browser that started,
// skipping t where none is usable here.
func doorsBrowserRan(t *testing.T, r result) {
	t.Helper()
	if r.Code != "" && r.Code != "needs_auth" && r.Code != "denied" {
		t.Skipf("no usable browser here: %s", r)
	}
}

// TestDoorsBrowserNavigation: with the full profile and nobody to ask,
// the browser opens no host of this machine or its networks, in any
// spelling, through browser_navigate or a new tab, the network of
// commands off or not; web_fetch asks alike. Loopback targets are served
// here and a browser reaching them would show the page's marker; private
// and link-local targets get a browser that cannot start, so that no
// packet is sent whatever the guard decides. The subtests run one after
// the other: each starts a browser. Red on the code before the browser's
// URLs were judged like web_fetch's.
func TestDoorsBrowserNavigation(t *testing.T) {
	t.Parallel()
	marker := "DOORS-PAGE-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	port := resolveServePage(t, marker)
	loopback := []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/",
		"http://LOCALHOST.:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://0x7f.1:" + port + "/",
		"http://2130706433:" + port + "/",
		"http://0177.0.0.1:" + port + "/",
		"http://127.1:" + port + "/",
		"localhost:" + port,
	}
	for _, network := range []string{"on", "off"} {
		t.Run("loopback, sandbox network "+network, func(t *testing.T) {
			e := newEnv(t)
			doorsConfig(e, "sandbox: {network: "+network+"}")
			c := e.serve("--profile", "full")
			for _, u := range loopback {
				blocked(t, c.call(t, "browser_navigate", map[string]any{"url": u}), marker)
				blocked(t, c.call(t, "browser_tabs", map[string]any{"action": "new", "url": u}), marker)
				blocked(t, c.call(t, "web_fetch", map[string]any{"url": u}), marker)
			}
		})
	}
	t.Run("private and link-local, no browser", func(t *testing.T) {
		e := newEnv(t)
		doorsConfig(e, doorsNoBrowser, "network:\n  allow: [\"*\", \"*.*\"]")
		c := e.serve("--profile", "full")
		for _, u := range []string{
			"http://10.0.0.1/", "http://10.255.1.2:8080/x", "http://172.16.0.1/", "http://192.168.1.1/",
			"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://[fd00::1]/",
			"http://0xa9fea9fe/", "http://[::ffff:169.254.169.254]/", "http://0.0.0.0:" + port + "/",
		} {
			blocked(t, c.call(t, "browser_navigate", map[string]any{"url": u}))
			blocked(t, c.call(t, "browser_tabs", map[string]any{"action": "new", "url": u}))
		}
	})
	t.Run("a glob grants no loopback host", func(t *testing.T) {
		e := newEnv(t)
		doorsConfig(e, "network:\n  allow: [\"*\", \"*.*\", \"*.localhost\"]")
		c := e.serve("--profile", "full")
		for _, u := range loopback[:3] {
			blocked(t, c.call(t, "browser_navigate", map[string]any{"url": u}), marker)
			blocked(t, c.call(t, "web_fetch", map[string]any{"url": u}), marker)
		}
	})
}

// TestDoorsBrowserGranted: what the profile grants, or -y approves, the
// browser still opens, and web_fetch still fetches.
func TestDoorsBrowserGranted(t *testing.T) {
	t.Parallel()
	marker := "DOORS-GRANTED-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	port := resolveServePage(t, marker)
	t.Run("network.allow names the host", func(t *testing.T) {
		e := newEnv(t)
		doorsConfig(e, "network:\n  allow: [127.0.0.1, localhost]")
		c := e.serve("--profile", "full")
		allowed(t, c.call(t, "web_fetch", map[string]any{"url": "http://127.0.0.1:" + port + "/"}), marker)
		r := c.call(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1:" + port + "/"})
		doorsBrowserRan(t, r)
		allowed(t, r, marker)
		allowed(t, c.call(t, "browser_navigate", map[string]any{"url": "localhost:" + port}), marker)
		allowed(t, c.call(t, "browser_tabs", map[string]any{"action": "new", "url": "http://localhost:" + port + "/"}), marker)
	})
	t.Run("-y approves a loopback host", func(t *testing.T) {
		e := newEnv(t)
		c := e.serve("--profile", "full", "-y")
		r := c.call(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1:" + port + "/"})
		doorsBrowserRan(t, r)
		allowed(t, r, marker)
		allowed(t, c.call(t, "web_fetch", map[string]any{"url": "http://localhost:" + port + "/"}), marker)
	})
}
