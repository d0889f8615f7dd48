package tools

import (
	"regexp"
	"strings"
	"testing"
)

// TestCrossSiteFrame: a frame of another site (the test server under
// localhost inside a page of 127.0.0.1), which Chromium renders in a
// process of its own, is snapshotted with refs like the page's own
// elements, and a click by such a ref acts inside it; after a navigation
// its refs are stale. Red on the snapshot that showed the iframe empty.
func TestCrossSiteFrame(t *testing.T) {
	c := browser(t)
	full := c.open("/xframe").Text
	ref := regexp.MustCompile(`iframe "Cross-site frame" \[ref=e\d+\]:\n  - button "Inner button" \[ref=(e\d+)\]`).FindStringSubmatch(full)
	if ref == nil {
		t.Fatalf("the cross-site frame's button is not in the snapshot:\n%s", full)
	}
	got := c.ok(ClickName, map[string]any{"ref": ref[1]}).Text
	if !regexp.MustCompile(`\n~ +- paragraph \[ref=e\d+\]: inner clicked\n`).MatchString(got) {
		t.Errorf("clicking the frame's button:\n%s", got)
	}
	if snap := c.ok(SnapshotName, map[string]any{}).Text; !strings.Contains(snap, "outer idle") || !strings.Contains(snap, "inner clicked") {
		t.Errorf("the page after the click:\n%s", snap)
	}
	c.open("/second")
	c.fails(ClickName, map[string]any{"ref": ref[1]}, "stale_ref")
}
