package tools

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/browser/chrome"
	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// The package shares one browser: the tests that drive it use one session
// and run one after another, as the host runs Serial tools. Set by
// TestMain.
var (
	shared    *session.Manager // nil when no browser is installed
	site      *httptest.Server
	stateDir  string
	noBrowser error // why browser tests skip
)

// sharedSession is the session id of the tests that share the browser.
const sharedSession = "tools-test"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	site = httptest.NewServer(testSite())
	defer site.Close()
	dir, err := os.MkdirTemp("", "browser-tools-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stateDir = dir
	if _, err := chrome.Find(""); err != nil {
		noBrowser = err
	} else {
		shared = session.NewManager(session.Options{StateDir: dir, ActionTimeout: 20 * time.Second})
		defer shared.Shutdown(context.Background())
	}
	return m.Run()
}

// needBrowser skips t when no Chromium is installed, except in CI, where
// the browser tests must run.
func needBrowser(t testing.TB) {
	t.Helper()
	if noBrowser == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI must run the browser tests: %v", noBrowser)
	}
	t.Skipf("no browser: %v", noBrowser)
}

// client serves the browser tools over the shared manager through real
// gRPC, as the host sees them.
type client struct {
	t  *testing.T
	c  *plugintest.Client
	id string
}

func newClient(t *testing.T, m *session.Manager, sessionID string) *client {
	t.Helper()
	// The user approves what the host's guard asks about (browser_evaluate
	// asks before every call).
	c := plugintest.Start(t, sdk.Plugin{Name: "browser", Version: Version, Tools: All(m)},
		&plugintest.Options{Answer: func(plugintest.Decision) bool { return true }})
	return &client{t: t, c: c, id: sessionID}
}

// browser returns a client of the shared browser session.
func browser(t *testing.T) *client {
	t.Helper()
	needBrowser(t)
	return newClient(t, shared, sharedSession)
}

func (c *client) call(tool string, input any) (*sdk.Result, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c.c.Call(ctx, tool, sdk.CallInfo{SessionID: c.id}, input)
}

// ok calls tool and fails the test on an error.
func (c *client) ok(tool string, input any) *sdk.Result {
	c.t.Helper()
	res, err := c.call(tool, input)
	if err != nil {
		c.t.Fatalf("%s(%v): %v", tool, input, err)
	}
	return res
}

// fails calls tool and returns its error, failing the test on success or
// on an error that is not a tool error with code.
func (c *client) fails(tool string, input any, code string) *sdk.ToolError {
	c.t.Helper()
	res, err := c.call(tool, input)
	if err == nil {
		c.t.Fatalf("%s(%v) succeeded, want %s error; got:\n%s", tool, input, code, res.Text)
	}
	te, ok := sdk.AsToolError(err)
	if !ok || te.Code != code {
		c.t.Fatalf("%s(%v): error %v, want code %s", tool, input, err, code)
	}
	return te
}

// open navigates the shared session's current tab to path on the test site.
func (c *client) open(path string) *sdk.Result {
	c.t.Helper()
	return c.ok(NavigateName, map[string]any{"url": site.URL + path})
}

// closedPortURL returns an http URL on a loopback port nothing listens on.
func closedPortURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

var refLine = regexp.MustCompile(`\[ref=(e[0-9]+)\]`)

// refOf returns the ref on the snapshot line that contains what.
func refOf(t testing.TB, snapshot, what string) string {
	t.Helper()
	for _, line := range strings.Split(snapshot, "\n") {
		if strings.Contains(line, what) {
			if m := refLine.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref on a line with %q in:\n%s", what, snapshot)
	return ""
}

// testSite serves the pages the tests drive.
func testSite() http.Handler {
	mux := http.NewServeMux()
	page := func(title, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
		}
	}
	mux.HandleFunc("/{$}", page("Home", `
		<h1>Welcome</h1>
		<a href="/second">Next page</a>
		<a href="/second" target="_blank">Open in a new tab</a>
		<button onclick="window.open('/popup', 'pop')">Open popup</button>
		<p id="status">idle</p>`))
	mux.HandleFunc("/second", page("Second", `<h1>Second page</h1><p>You made it.</p>`))
	mux.HandleFunc("/popup", page("Popup", `<h1>Popup window</h1>`))
	mux.HandleFunc("/form", page("Form", `
		<form action="/submitted" method="get">
			<label>Name <input name="name" value="old"></label>
			<label>Color <select name="color"><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select></label>
			<label>Notes <textarea name="notes"></textarea></label>
			<button type="submit">Send</button>
		</form>`))
	mux.HandleFunc("/submitted", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Thanks</title><h1>Thanks %s</h1><p>color=%s notes=%s</p>",
			html.EscapeString(r.FormValue("name")), html.EscapeString(r.FormValue("color")), html.EscapeString(r.FormValue("notes")))
	})
	mux.HandleFunc("/dialogs", page("Dialogs", `
		<button onclick="alert('Hello from alert'); document.getElementById('after').textContent = 'alert done'">Alert</button>
		<button onclick="document.getElementById('after').textContent = confirm('Really?') ? 'confirmed' : 'refused'">Confirm</button>
		<button onclick="document.getElementById('after').textContent = 'prompt: ' + prompt('Your name?', 'Ada')">Prompt</button>
		<p id="after">nothing yet</p>`))
	mux.HandleFunc("/console", page("Console", `
		<script>
			console.log('hello', 42, {a: 1});
			console.warn('careful %s', 'now');
			console.error('it broke');
			setTimeout(() => { throw new Error('late boom'); }, 0);
		</script><p>console page</p>`))
	mux.HandleFunc("/later", page("Later", `
		<p id="gone">Loading…</p>
		<script>setTimeout(() => {
			document.getElementById('gone').remove();
			const p = document.createElement('p'); p.textContent = 'Ready now'; document.body.appendChild(p);
		}, 150);</script>`))
	mux.HandleFunc("/hover", page("Hover", `
		<button id="h" onmouseover="document.getElementById('tip').textContent = 'tip shown'">Hover me</button>
		<p id="tip">no tip</p>`))
	mux.HandleFunc("/keys", page("Keys", `
		<input aria-label="Field" id="f" autofocus>
		<p id="last">none</p>
		<script>document.getElementById('f').addEventListener('keydown', e => {
			document.getElementById('last').textContent = 'key ' + e.key + (e.ctrlKey ? ' ctrl' : '') + (e.shiftKey ? ' shift' : '');
		});</script>`))
	mux.HandleFunc("/frames", page("Frames", `
		<h1>Outer</h1>
		<iframe src="/inner" title="Inner frame" width="400" height="200" style="margin-top: 50px"></iframe>`))
	mux.HandleFunc("/inner", page("Inner", `
		<button onclick="document.getElementById('in').textContent = 'inner clicked'">Inner button</button>
		<p id="in">inner idle</p>`))
	mux.HandleFunc("/long", page("Long", `<div style="height: 3000px">top</div><p>bottom</p>`))
	mux.HandleFunc("/picks", page("Picks", `
		<form action="/submitted-picks" method="get">
			<label>Birthday <input type="date" name="dob"></label>
			<label>Alarm <input type="time" name="alarm"></label>
			<label>Meeting <input type="datetime-local" name="meet"></label>
			<label>Month <input type="month" name="month"></label>
			<label>Week <input type="week" name="week"></label>
			<label>Color <input type="color" name="color"></label>
			<label>Volume <input type="range" name="vol" min="0" max="10"></label>
			<fieldset><legend>Contact</legend><label>Email <input name="email"></label></fieldset>
			<p id="events">none</p>
			<button type="submit">Send</button>
		</form>
		<script>
			const seen = [];
			document.querySelectorAll("input").forEach(i => i.addEventListener("change", () => { seen.push(i.name); document.getElementById("events").textContent = "changed: " + seen.join(","); }));
		</script>`))
	mux.HandleFunc("/submitted-picks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Picked</title><p>%s</p>", html.EscapeString(r.URL.RawQuery))
	})
	mux.HandleFunc("/table", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Table</title></head><body>
			<button onclick="const b = document.getElementById('rows'); [...b.rows].reverse().forEach(r => b.appendChild(r))">Sort by ID</button>
			<button onclick="document.getElementById('rows').insertAdjacentHTML('beforeend', '<tr><td>new</td><td>Added row</td></tr>')">Add row</button>
			<label>Filter <input name="filter"></label>
			<a href="/second">Leave</a>
			<table><thead><tr><th>ID</th><th>Name</th></tr></thead><tbody id="rows">`)
		for i := range 300 {
			fmt.Fprintf(w, `<tr><td>%d</td><td>Row number %d</td></tr>`, i, i)
		}
		fmt.Fprint(w, `</tbody></table></body></html>`)
	})
	mux.HandleFunc("/xframe", func(w http.ResponseWriter, r *http.Request) {
		// The same server under its other name: another site, so Chromium
		// runs the frame in another process.
		other := "http://" + strings.Replace(r.Host, "127.0.0.1", "localhost", 1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Frames</title><h1>Outer</h1><p id="out">outer idle</p>
			<iframe src="%s/inner" title="Cross-site frame" width="400" height="200" style="margin: 40px"></iframe>`, other)
	})
	mux.HandleFunc("/many", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Many</title></head><body><h1>Index</h1><ul id="links">`)
		for i := range 2000 {
			fmt.Fprintf(w, `<li><a href="/second?n=%d">Link %04d</a></li>`, i, i)
		}
		fmt.Fprint(w, `</ul><button>Last button</button></body></html>`)
	})
	mux.HandleFunc("/dup", page("Dup", `<button class="b">One</button><button class="b">Two</button><div style="display:none"><button id="hidden">Hidden</button></div>`))
	return mux
}
