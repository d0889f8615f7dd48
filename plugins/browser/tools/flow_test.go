package tools

import (
	"strings"
	"testing"
)

func TestNavigateSnapshotClickBack(t *testing.T) {
	c := browser(t)
	res := c.open("/")
	for _, want := range []string{"- Page URL: " + site.URL + "/", "- Page Title: Home", `heading "Welcome" [level=1]`, `link "Next page" [ref=`} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("navigate: missing %q in:\n%s", want, res.Text)
		}
	}
	res = c.ok(ClickName, map[string]any{"ref": refOf(t, res.Text, `link "Next page"`)})
	if !strings.Contains(res.Text, "- Page Title: Second") || !strings.Contains(res.Text, `heading "Second page"`) {
		t.Fatalf("click on the link: not on the second page:\n%s", res.Text)
	}
	res = c.ok(NavigateBackName, nil)
	if !strings.Contains(res.Text, "- Page Title: Home") {
		t.Fatalf("back: not home:\n%s", res.Text)
	}
	snap := c.ok(SnapshotName, nil)
	if !strings.Contains(snap.Text, `heading "Welcome"`) {
		t.Fatalf("snapshot after back:\n%s", snap.Text)
	}
}
