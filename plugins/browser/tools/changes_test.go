package tools

import (
	"regexp"
	"strings"
	"testing"
)

// TestActions_AnswerWithWhatChanged: on a page of 300 table rows an
// action answers with the elements it changed, not the page: a row added,
// a field typed into; the refs of the rest stay valid (a button found
// before is clicked by its ref after). Sorting every row would take more
// room as changes than as the page, so the snapshot comes instead, and a
// navigation gets the new page's snapshot.
func TestActions_AnswerWithWhatChanged(t *testing.T) {
	c := browser(t)
	full := c.open("/table").Text
	sortRef := regexp.MustCompile(`button "Sort by ID" \[ref=(e\d+)\]`).FindStringSubmatch(full)
	addRef := regexp.MustCompile(`button "Add row" \[ref=(e\d+)\]`).FindStringSubmatch(full)
	if sortRef == nil || addRef == nil || len(full) < 10_000 {
		t.Fatalf("the table page (%d bytes):\n%s", len(full), full)
	}

	added := c.ok(ClickName, map[string]any{"ref": addRef[1]}).Text
	if !regexp.MustCompile(`\n\+ +- cell "Added row" \[ref=e\d+\]\n`).MatchString(added) || strings.Contains(added, "Row number 7") || len(added) > 1000 {
		t.Errorf("adding a row answered %d bytes:\n%s", len(added), added)
	}
	typed := c.ok(TypeName, map[string]any{"selector": "input[name=filter]", "text": "Ada"}).Text
	if !regexp.MustCompile(`\n~ - textbox "Filter" \[[^\n]*ref=e\d+\]: Ada\n`).MatchString(typed) || len(typed) > 1000 {
		t.Errorf("typing answered %d bytes:\n%s", len(typed), typed)
	}
	// Nothing changes: said in a line.
	if same := c.ok(WaitForName, map[string]any{"text": "Added row"}).Text; !strings.Contains(same, "Page changes: none") {
		t.Errorf("a wait that changed nothing:\n%s", same)
	}
	// Every row moves: the snapshot, first row last.
	sorted := c.ok(ClickName, map[string]any{"ref": sortRef[1]}).Text
	if strings.Contains(sorted, "```diff") || !strings.Contains(sorted, "```yaml") || strings.Index(sorted, "Row number 299") > strings.Index(sorted, "Row number 0") {
		t.Errorf("sorting every row:\n%.600s", sorted)
	}
	left := c.ok(ClickName, map[string]any{"selector": "a"}).Text
	if !strings.Contains(left, "- Page Title: Second") || !strings.Contains(left, "```yaml") {
		t.Errorf("a navigation by a click:\n%s", left)
	}
}
