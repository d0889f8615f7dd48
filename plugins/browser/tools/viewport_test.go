package tools

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/browser/session"
)

// TestViewport: pages lay out at the viewport the options name, 1280×720
// by default, in the first tab and in a new one alike (headless Chromium's
// window at that size left pages 577 px high).
func TestViewport(t *testing.T) {
	c := browser(t)
	c.open("/")
	size := func() string {
		t.Helper()
		return c.ok(EvaluateName, map[string]any{"expression": `innerWidth + "x" + innerHeight`}).Text
	}
	if got := size(); !strings.Contains(got, "1280x720") {
		t.Errorf("the first tab's viewport: %q, want 1280x720", got)
	}
	c.ok(TabsName, map[string]any{"action": "new", "url": site.URL + "/second"})
	if got := size(); !strings.Contains(got, "1280x720") {
		t.Errorf("a new tab's viewport: %q, want 1280x720", got)
	}
	c.ok(TabsName, map[string]any{"action": "close"})
}

// TestOptionsFrom_Viewport: the viewport setting is WIDTHxHEIGHT; anything
// else keeps the default.
func TestOptionsFrom_Viewport(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]int{"1024x768": {1024, 768}, " 800 X 600 ": {800, 600}, "wide": {}, "0x5": {}, "20000x10": {}} {
		o := session.OptionsFrom(map[string]string{session.SettingViewport: in})
		if o.Width != want[0] || o.Height != want[1] {
			t.Errorf("viewport %q: %dx%d, want %dx%d", in, o.Width, o.Height, want[0], want[1])
		}
	}
}
