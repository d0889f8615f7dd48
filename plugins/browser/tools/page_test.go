package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

func TestDialogsAreAnsweredAndReported(t *testing.T) {
	c := browser(t)
	page := c.open("/dialogs").Text
	cases := []struct {
		button string
		event  string
		after  string
	}{
		{"Alert", `alert dialog "Hello from alert" was accepted`, "alert done"},
		{"Confirm", `confirm dialog "Really?" was accepted`, "confirmed"},
		{"Prompt", `prompt dialog "Your name?" was accepted with "Ada"`, "prompt: Ada"},
	}
	for _, tc := range cases {
		res := c.ok(ClickName, map[string]any{"ref": refOf(t, page, `button "`+tc.button+`"`)})
		if !strings.Contains(res.Text, "### Events") || !strings.Contains(res.Text, tc.event) {
			t.Fatalf("%s: the dialog is not reported (%q) in:\n%s", tc.button, tc.event, res.Text)
		}
		if !strings.Contains(res.Text, tc.after) {
			t.Fatalf("%s: the page did not go on after the dialog (want %q):\n%s", tc.button, tc.after, res.Text)
		}
	}
	// Reported once: the next call has no event left.
	if res := c.ok(SnapshotName, nil); strings.Contains(res.Text, "### Events") {
		t.Fatalf("a dialog was reported twice:\n%s", res.Text)
	}
}

func TestConsoleMessagesPerTab(t *testing.T) {
	c := browser(t)
	c.open("/console")
	want := []string{"[log] hello 42 {a: 1}", "[warning] careful now", "[error] it broke", "[exception] Uncaught Error: late boom"}
	var text string
	// The exception is thrown from a timer; poll until it is in.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		text = c.ok(ConsoleMessagesName, nil).Text
		if strings.Contains(text, "late boom") || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Fatalf("console: missing %q in:\n%s", w, text)
		}
	}
	c.ok(TabsName, map[string]any{"action": "new", "url": site.URL + "/second"})
	if text := c.ok(ConsoleMessagesName, nil).Text; strings.Contains(text, "hello") {
		t.Fatalf("the new tab shows another tab's console:\n%s", text)
	}
	c.ok(TabsName, map[string]any{"action": "close"})
	if text := c.ok(ConsoleMessagesName, nil).Text; !strings.Contains(text, "hello 42") {
		t.Fatalf("back on the first tab, its console is gone:\n%s", text)
	}
}

func TestPopupsBecomeTabs(t *testing.T) {
	c := browser(t)
	home := c.open("/").Text
	res := c.ok(ClickName, map[string]any{"ref": refOf(t, home, `button "Open popup"`)})
	if !strings.Contains(res.Text, "The page opened a new tab 1") {
		t.Fatalf("window.open is not reported:\n%s", res.Text)
	}
	list := c.ok(TabsName, map[string]any{"action": "list"}).Text
	if !strings.Contains(list, "- 0: (current) [Home]") || !strings.Contains(list, "/popup") {
		t.Fatalf("tabs after the popup:\n%s", list)
	}
	sel := c.ok(TabsName, map[string]any{"action": "select", "index": 1}).Text
	if !strings.Contains(sel, `heading "Popup window"`) {
		t.Fatalf("select the popup:\n%s", sel)
	}
	c.ok(TabsName, map[string]any{"action": "close", "index": 1})
	// A target=_blank tab may open a moment after the click returns; it is
	// reported by the call that first sees it.
	res = c.ok(ClickName, map[string]any{"ref": refOf(t, home, `link "Open in a new tab"`)})
	if seen := res.Text + c.ok(TabsName, map[string]any{"action": "list"}).Text; !strings.Contains(seen, "The page opened a new tab 1") || !strings.Contains(seen, "- 1:") {
		t.Fatalf("target=_blank is not reported:\n%s", seen)
	}
	closed := c.ok(TabsName, map[string]any{"action": "close", "index": 1}).Text
	if strings.Contains(closed, "- 1:") {
		t.Fatalf("close left the tab:\n%s", closed)
	}
}

func TestTabs(t *testing.T) {
	c := browser(t)
	c.open("/")
	res := c.ok(TabsName, map[string]any{"action": "new", "url": site.URL + "/second"})
	if !strings.Contains(res.Text, "Opened tab 1") || !strings.Contains(res.Text, `heading "Second page"`) {
		t.Fatalf("new tab:\n%s", res.Text)
	}
	list := c.ok(TabsName, map[string]any{"action": "list"}).Text
	if !strings.Contains(list, "- 0: [Home]") || !strings.Contains(list, "- 1: (current) [Second]") {
		t.Fatalf("list:\n%s", list)
	}
	if res := c.ok(TabsName, map[string]any{"action": "select", "index": 0}).Text; !strings.Contains(res, "- Page Title: Home") {
		t.Fatalf("select 0:\n%s", res)
	}
	c.fails(TabsName, map[string]any{"action": "select", "index": 7}, sdk.CodeInvalidInput)
	c.fails(TabsName, map[string]any{"action": "select"}, sdk.CodeInvalidInput)
	c.fails(TabsName, map[string]any{"action": "new", "url": "file:///etc/passwd"}, sdk.CodeInvalidInput)
	// Closing the first tab (the one the browser started with) keeps the browser.
	res = c.ok(TabsName, map[string]any{"action": "close", "index": 0})
	if !strings.Contains(res.Text, "- 0: (current) [Second]") {
		t.Fatalf("close 0:\n%s", res.Text)
	}
	if snap := c.ok(SnapshotName, nil).Text; !strings.Contains(snap, `heading "Second page"`) {
		t.Fatalf("after closing the first tab:\n%s", snap)
	}
	te := c.fails(TabsName, map[string]any{"action": "close"}, sdk.CodeInvalidInput)
	if !strings.Contains(te.Message, "browser_close") {
		t.Fatalf("closing the last tab: %q does not point at browser_close", te.Message)
	}
}

func TestEvaluate(t *testing.T) {
	c := browser(t)
	c.open("/")
	cases := []struct{ expr, want string }{
		{"document.title", `"Home"`},
		{"() => 6 * 7", "42"},
		{"const a = 20; a + 2", "22"},
		{"await new Promise(r => setTimeout(() => r('later'), 5))", `"later"`},
		{"({n: 1, list: [1, 2]})", `"list": [`},
		{"undefined", "undefined"},
		{"document.body", "body"},
	}
	for _, tc := range cases {
		res := c.ok(EvaluateName, map[string]any{"expression": tc.expr})
		if !strings.Contains(res.Text, tc.want) {
			t.Errorf("evaluate %q = %q, want it to contain %q", tc.expr, res.Text, tc.want)
		}
	}
	te := c.fails(EvaluateName, map[string]any{"expression": "throw new Error('nope')"}, session.CodeScriptError)
	if !strings.Contains(te.Message, "nope") {
		t.Fatalf("a throw: %q", te.Message)
	}
	c.fails(EvaluateName, map[string]any{"expression": "  "}, sdk.CodeInvalidInput)
}

func TestWaitFor(t *testing.T) {
	c := browser(t)
	c.open("/later")
	res := c.ok(WaitForName, map[string]any{"text": "Ready now"})
	if !strings.Contains(res.Text, `"Ready now" appeared`) || !strings.Contains(res.Text, "Ready now") {
		t.Fatalf("wait for text:\n%s", res.Text)
	}
	c.open("/later")
	if res := c.ok(WaitForName, map[string]any{"text_gone": "Loading"}); !strings.Contains(res.Text, `"Loading" is gone`) {
		t.Fatalf("wait for text_gone:\n%s", res.Text)
	}
	te := c.fails(WaitForName, map[string]any{"text": "never there", "time_ms": 200}, sdk.CodeTimeout)
	if !strings.Contains(te.Message, "never there") {
		t.Fatalf("timeout message %q", te.Message)
	}
	start := time.Now()
	c.ok(WaitForName, map[string]any{"time_ms": 30})
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("time_ms 30 returned after %v", d)
	}
	c.fails(WaitForName, map[string]any{}, sdk.CodeInvalidInput)
}

func TestHoverPressKeySelect(t *testing.T) {
	c := browser(t)
	page := c.open("/hover").Text
	c.ok(HoverName, map[string]any{"ref": refOf(t, page, `button "Hover me"`)})
	if snap := c.ok(SnapshotName, nil).Text; !strings.Contains(snap, "tip shown") {
		t.Fatalf("hover did not fire mouseover:\n%s", snap)
	}

	c.open("/keys")
	for _, tc := range []struct{ key, want string }{
		{"ArrowDown", "key ArrowDown"},
		{"Control+a", "key a ctrl"},
		{"Shift+Tab", "key Tab shift"},
		{"x", "key x"},
	} {
		c.ok(ClickName, map[string]any{"selector": "#f"})
		if res := c.ok(PressKeyName, map[string]any{"key": tc.key}); !strings.Contains(res.Text, tc.want) {
			t.Errorf("press %q: want %q in:\n%s", tc.key, tc.want, res.Text)
		}
	}
	c.fails(PressKeyName, map[string]any{"key": "Hyperdrive"}, sdk.CodeInvalidInput)

	form := c.open("/form").Text
	combo := refOf(t, form, `combobox "Color"`)
	if res := c.ok(SelectOptionName, map[string]any{"ref": combo, "values": []string{"g"}}); !strings.Contains(res.Text, `combobox "Color"`) || !strings.Contains(res.Text, ": Green") {
		t.Fatalf("select by value:\n%s", res.Text)
	}
	te := c.fails(SelectOptionName, map[string]any{"ref": combo, "values": []string{"Purple"}}, sdk.CodeInvalidInput)
	if !strings.Contains(te.Message, `"Red"`) {
		t.Fatalf("a missing option does not list the options: %q", te.Message)
	}
	c.fails(SelectOptionName, map[string]any{"ref": refOf(t, form, `button "Send"`), "values": []string{"x"}}, sdk.CodeInvalidInput)
	if te := c.fails(ClickName, map[string]any{"ref": refOf(t, form, `option "Blue"`)}, sdk.CodeInvalidInput); !strings.Contains(te.Message, SelectOptionName) {
		t.Fatalf("a click on an option does not point at %s: %q", SelectOptionName, te.Message)
	}
	// Typing with submit sends the form.
	res := c.ok(TypeName, map[string]any{"ref": refOf(t, form, `textbox "Name"`), "text": "Grace", "submit": true})
	if !strings.Contains(res.Text, "Thanks Grace") {
		t.Fatalf("type with submit:\n%s", res.Text)
	}
}

func TestNavigateErrorsAndSchemes(t *testing.T) {
	c := browser(t)
	te := c.fails(NavigateName, map[string]any{"url": closedPortURL(t)}, session.CodeNavigationFailed)
	if !strings.Contains(te.Message, "ERR_CONNECTION_REFUSED") {
		t.Fatalf("refused connection: %q", te.Message)
	}
	// What reaches the plugin was judged by the host's guard: about: and
	// data: open.
	if res := c.ok(NavigateName, map[string]any{"url": "data:text/html,<h1>Inline</h1>"}); !strings.Contains(res.Text, `heading "Inline"`) {
		t.Fatalf("data URL:\n%s", res.Text)
	}
	if res := c.ok(NavigateName, map[string]any{"url": "about:blank"}); !strings.Contains(res.Text, "about:blank") {
		t.Fatalf("about:blank:\n%s", res.Text)
	}
	c.fails(NavigateName, map[string]any{"url": " "}, sdk.CodeInvalidInput)
	res := c.ok(NavigateBackName, nil) // back to the data: page
	if !strings.Contains(res.Text, "Inline") {
		t.Fatalf("back:\n%s", res.Text)
	}
}

// TestSameSiteFramesAreInTheSnapshot: the elements of a same-site iframe
// are listed under it with refs that work.
func TestSameSiteFramesAreInTheSnapshot(t *testing.T) {
	c := browser(t)
	page := c.open("/frames").Text
	if !strings.Contains(page, `heading "Outer"`) || !strings.Contains(page, "inner idle") {
		t.Fatalf("the frame's content is not in the snapshot:\n%s", page)
	}
	res := c.ok(ClickName, map[string]any{"ref": refOf(t, page, `button "Inner button"`)})
	if !strings.Contains(res.Text, "inner clicked") {
		t.Fatalf("a click in the frame did not reach its button:\n%s", res.Text)
	}
}
