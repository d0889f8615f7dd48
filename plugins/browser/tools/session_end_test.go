package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// TestEndSession_ClosesOnlyThatSessionsBrowser: the host's EndSession,
// over gRPC, kills the ended session's browser, tells the host its group
// ended and removes its saved tabs; another session's browser runs on.
func TestEndSession_ClosesOnlyThatSessionsBrowser(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	m := session.NewManager(session.Options{StateDir: dir})
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	// The test site is on loopback, which the profile has to grant.
	c := plugintest.Start(t, sdk.Plugin{Name: "browser", Version: Version, Tools: All(m), OnSessionEnd: m.EndSession},
		&plugintest.Options{Policy: &policy.Rules{Network: policy.NetworkRules{Allow: []string{"127.0.0.1"}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	groups := map[string]int{}
	for _, s := range []string{"ended", "other"} {
		before := c.Host.LiveGroups()
		if _, err := c.Call(ctx, NavigateName, sdk.CallInfo{SessionID: s}, map[string]any{"url": site.URL + "/second"}); err != nil {
			t.Fatalf("navigate in %s: %v", s, err)
		}
		for _, g := range c.Host.LiveGroups() {
			if !slices.Contains(before, g) {
				groups[s] = g
			}
		}
		if groups[s] == 0 {
			t.Fatalf("no browser group reported for session %s", s)
		}
	}
	tabs := filepath.Join(sdk.SessionDir(dir, "ended"), "browser", "tabs.json")
	if _, err := os.Stat(tabs); err != nil {
		t.Fatalf("the ended session's tabs were never saved: %v", err)
	}

	if err := c.EndSession(ctx, "ended"); err != nil {
		t.Fatalf("EndSession: %v", err)
	}
	waitGroupGone(t, groups["ended"])
	if live := c.Host.LiveGroups(); slices.Contains(live, groups["ended"]) || !slices.Contains(live, groups["other"]) {
		t.Errorf("groups reported live after EndSession: %v; want the other's %d only", live, groups["other"])
	}
	if err := syscall.Kill(-groups["other"], 0); err != nil {
		t.Errorf("the other session's browser (group %d) is gone: %v", groups["other"], err)
	}
	if _, err := os.Stat(tabs); !os.IsNotExist(err) {
		t.Errorf("the ended session's saved tabs are still there (stat: %v)", err)
	}
}
