package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// TestRefFromOlderSnapshotIsRefused: a ref names an element of the
// document its snapshot saw. After a navigation the same number must not
// reach whatever now sits at that node: the model is told to snapshot
// again.
func TestRefFromOlderSnapshotIsRefused(t *testing.T) {
	c := browser(t)
	home := c.open("/")
	old := refOf(t, home.Text, `link "Next page"`)
	c.open("/second")
	te := c.fails(ClickName, map[string]any{"ref": old}, session.CodeStaleRef)
	if !strings.Contains(te.Message, "older snapshot") || !strings.Contains(te.Message, "browser_snapshot") {
		t.Fatalf("stale ref: message %q does not say to snapshot again", te.Message)
	}
	// Coming back to the same URL is a new document: the old ref stays refused.
	c.open("/")
	c.fails(ClickName, map[string]any{"ref": old}, session.CodeStaleRef)
	c.fails(HoverName, map[string]any{"ref": old}, session.CodeStaleRef)
	c.fails(TypeName, map[string]any{"ref": old, "text": "x"}, session.CodeStaleRef)

	// The page navigates on its own, with no snapshot since: the ref of the
	// last snapshot points into a document that is gone.
	last := refOf(t, c.ok(SnapshotName, nil).Text, `link "Next page"`)
	c.ok(EvaluateName, map[string]any{"expression": "setTimeout(() => { location.href = '/second'; }, 0); 1"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res := c.ok(EvaluateName, map[string]any{"expression": "document.readyState === 'complete' && location.pathname"})
		if res.Text == `"/second"` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not navigate: %s", res.Text)
		}
	}
	te = c.fails(HoverName, map[string]any{"ref": last}, session.CodeStaleRef)
	if !strings.Contains(te.Message, "older snapshot") {
		t.Fatalf("a ref from before the page navigated by itself: %q", te.Message)
	}
}

// TestRefsHoldWithinOneDocument: within one document an element keeps its
// ref across snapshots, so a form can be filled from one snapshot.
func TestRefsHoldWithinOneDocument(t *testing.T) {
	c := browser(t)
	first := c.open("/form").Text
	second := c.ok(SnapshotName, nil).Text
	for _, what := range []string{`textbox "Name"`, `combobox "Color"`, `button "Send"`} {
		if a, b := refOf(t, first, what), refOf(t, second, what); a != b {
			t.Fatalf("%s: ref %s in the first snapshot, %s in the second", what, a, b)
		}
	}
	c.ok(TypeName, map[string]any{"ref": refOf(t, first, `textbox "Name"`), "text": "Ada Lovelace"})
	c.ok(SelectOptionName, map[string]any{"ref": refOf(t, first, `combobox "Color"`), "values": []string{"Blue"}})
	c.ok(TypeName, map[string]any{"ref": refOf(t, first, `textbox "Notes"`), "text": "line one"})
	res := c.ok(ClickName, map[string]any{"ref": refOf(t, first, `button "Send"`)})
	for _, want := range []string{"- Page Title: Thanks", "Thanks Ada Lovelace", "color=b notes=line one"} {
		if !strings.Contains(res.Text, want) {
			t.Fatalf("submitted form: missing %q in:\n%s\nnow:\n%s", want, res.Text, c.ok(SnapshotName, nil).Text)
		}
	}
}

func TestElementArgumentsAreChecked(t *testing.T) {
	c := browser(t)
	c.open("/dup")
	cases := []struct {
		name  string
		input map[string]any
		code  string
		says  string
	}{
		{"no element", map[string]any{}, sdk.CodeInvalidInput, "ref"},
		{"both ref and selector", map[string]any{"ref": "e1", "selector": "button"}, sdk.CodeInvalidInput, "not both"},
		{"not a ref", map[string]any{"ref": "Submit"}, sdk.CodeInvalidInput, "e12"},
		{"ref never handed out", map[string]any{"ref": "e999999"}, session.CodeStaleRef, "never handed out"},
		{"selector matches nothing", map[string]any{"selector": "#nope"}, sdk.CodeNotFound, "no element matches"},
		{"selector matches two", map[string]any{"selector": "button.b"}, sdk.CodeInvalidInput, "matches 2 elements"},
		{"invalid selector", map[string]any{"selector": "button[["}, sdk.CodeInvalidInput, "not valid CSS"},
		{"hidden element", map[string]any{"selector": "#hidden"}, sdk.CodeNotFound, "no box"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			te := c.fails(ClickName, tc.input, tc.code)
			if !strings.Contains(te.Message, tc.says) {
				t.Fatalf("message %q does not say %q", te.Message, tc.says)
			}
		})
	}
	// A unique selector works.
	c.ok(ClickName, map[string]any{"selector": "button.b:nth-of-type(2)"})
	// Focus alone is no change the answer reports: the snapshot shows it.
	res := c.ok(SnapshotName, map[string]any{})
	if !strings.Contains(res.Text, `button "Two" [focused]`) {
		t.Fatalf("click by selector did not focus the second button:\n%s", res.Text)
	}
}
