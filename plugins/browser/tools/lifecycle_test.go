package tools

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/browser/chrome"
	"github.com/yagent/yagent/plugins/browser/session"
)

// TestBrowserLifecycle runs one browser of its own, with dialogs=dismiss,
// through its whole life. It runs in a process group of its own that the
// host hears of (so the host can kill it if the plugin dies);
// browser_close kills the group, tells the host and forgets the tabs; the
// next call starts a fresh browser; the plugin's OnShutdown leaves no
// browser process behind and refuses later calls.
func TestBrowserLifecycle(t *testing.T) {
	needBrowser(t)
	m := session.NewManager(session.Options{StateDir: t.TempDir(), DismissDialogs: true})
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	c := newClient(t, m, "lifecycle")

	page := c.ok(NavigateName, map[string]any{"url": site.URL + "/dialogs"}).Text
	res := c.ok(ClickName, map[string]any{"ref": refOf(t, page, `button "Confirm"`)})
	if !strings.Contains(res.Text, `confirm dialog "Really?" was dismissed`) || !strings.Contains(res.Text, "refused") {
		t.Fatalf("confirm with dialogs=dismiss:\n%s", res.Text)
	}
	res = c.ok(ClickName, map[string]any{"ref": refOf(t, page, `button "Alert"`)})
	if !strings.Contains(res.Text, `alert dialog "Hello from alert" was accepted`) {
		t.Fatalf("an alert is accepted whatever the setting:\n%s", res.Text)
	}
	c.ok(TabsName, map[string]any{"action": "new", "url": site.URL + "/second"})

	live := c.c.Host.LiveGroups()
	if len(live) != 1 {
		t.Fatalf("live process groups reported: %v, want one", live)
	}
	pgid := live[0]
	if got, err := syscall.Getpgid(pgid); err != nil || got != pgid {
		t.Fatalf("process %d leads group %d (%v), want its own group", pgid, got, err)
	}

	res = c.ok(CloseName, nil)
	if !strings.Contains(res.Text, "Closed the browser") {
		t.Fatalf("close: %q", res.Text)
	}
	if live := c.c.Host.LiveGroups(); len(live) != 0 {
		t.Fatalf("groups still reported live after browser_close: %v", live)
	}
	waitGroupGone(t, pgid)
	if res := c.ok(CloseName, nil); !strings.Contains(res.Text, "No browser was open") {
		t.Fatalf("close with no browser: %q", res.Text)
	}

	// A fresh browser with one blank tab: nothing is reopened.
	list := c.ok(TabsName, map[string]any{"action": "list"}).Text
	if strings.Contains(list, "- 1:") || strings.Contains(list, "Reopened") || strings.Contains(list, site.URL) {
		t.Fatalf("after browser_close the tabs came back:\n%s", list)
	}
	groups := c.c.Host.LiveGroups()
	if len(groups) != 1 || groups[0] == pgid {
		t.Fatalf("after a restart the groups reported live are %v (the old one was %d)", groups, pgid)
	}

	// The browser dies under the plugin: the next call starts another one,
	// says so, and reopens the tabs.
	c.ok(NavigateName, map[string]any{"url": site.URL + "/second"})
	if err := chrome.KillGroup(groups[0]); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, groups[0])
	list = c.ok(TabsName, map[string]any{"action": "list"}).Text
	for _, want := range []string{"The browser had stopped", "Reopened 1 tab(s)", "- 0: (current) [Second] (" + site.URL + "/second)"} {
		if !strings.Contains(list, want) {
			t.Fatalf("after the browser died: missing %q in:\n%s", want, list)
		}
	}
	crashed := groups[0]
	groups = c.c.Host.LiveGroups()
	if len(groups) != 1 || groups[0] == crashed {
		t.Fatalf("after the restart the groups reported live are %v (the dead one was %d)", groups, crashed)
	}

	if err := m.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, groups[0])
	if _, err := c.call(SnapshotName, nil); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("a call after Shutdown: %v", err)
	}
}

func TestMissingBrowserSaysWhatToInstall(t *testing.T) {
	t.Parallel()
	m := session.NewManager(session.Options{Chromium: "/nonexistent/chromium"})
	c := newClient(t, m, "missing")
	te := c.fails(NavigateName, map[string]any{"url": "https://example.com"}, session.CodeBrowserMissing)
	for _, want := range []string{"/nonexistent/chromium", "apt-get install chromium", chrome.SettingChromium} {
		if !strings.Contains(te.Message, want) {
			t.Fatalf("message %q does not say %q", te.Message, want)
		}
	}
}

// waitGroupGone polls, with a generous bound, until no process of group
// pgid is left.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d is still alive (kill -0: %v)", pgid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
