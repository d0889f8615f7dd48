package tools

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/browser/session"
)

var (
	nextCallRE = regexp.MustCompile(`browser_snapshot \{"offset":(\d+)\}$`)
	linkRE     = regexp.MustCompile(`link "Link (\d{4})" \[ref=(e\d+)\]`)
)

// TestSnapshot_PagesThroughALongPage: a page of 2,000 links is cut to the
// answer's budget, the cut naming the exact next call; following the
// calls reaches every link once and the last button, and a page read
// after the document changed in place still continues the snapshot the
// first page came from (lines do not shift). ref shows one element's
// subtree, query the lines naming a text with their ancestors.
func TestSnapshot_PagesThroughALongPage(t *testing.T) {
	c := browser(t)
	res := c.open("/many")
	if len(res.Text) > session.DefaultSnapshotBudget+2000 {
		t.Errorf("the navigation's answer is %d bytes, over the budget of %d", len(res.Text), session.DefaultSnapshotBudget)
	}
	seen := map[string]bool{}
	last := -1
	text := res.Text
	for pages := 1; ; pages++ {
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			n := 0
			fmt.Sscanf(m[1], "%d", &n)
			if n != last+1 {
				t.Fatalf("page %d: link %d follows link %d: lines shifted or were skipped", pages, n, last)
			}
			last = n
			seen[m[2]] = true
		}
		next := nextCallRE.FindStringSubmatch(text)
		if next == nil {
			if !strings.Contains(text, `button "Last button"`) {
				t.Fatalf("the last page does not end with the page's end:\n%s", text)
			}
			if pages < 3 {
				t.Errorf("the page came in %d parts, want it cut", pages)
			}
			break
		}
		if pages == 1 {
			// The document changes in place: the next page still reads
			// the snapshot the first one came from.
			c.ok(EvaluateName, map[string]any{"expression": `document.getElementById("links").insertAdjacentHTML("afterbegin", "<li><a href='/x'>Link 9999</a></li>"); 1`})
		}
		var off int
		fmt.Sscanf(next[1], "%d", &off)
		text = c.ok(SnapshotName, map[string]any{"offset": off}).Text
	}
	if last != 1999 || len(seen) != 2000 {
		t.Errorf("paging reached links up to %d, %d refs; want all 2000", last, len(seen))
	}

	// ref: the subtree of the list alone; query: a link and its ancestors.
	fresh := c.ok(SnapshotName, map[string]any{"query": "link 1234"}).Text
	m := regexp.MustCompile(`- list \[ref=(e\d+)\]`).FindStringSubmatch(fresh)
	if m == nil || !strings.Contains(fresh, `link "Link 1234"`) || strings.Contains(fresh, "Link 1235") || strings.Contains(fresh, "Last button") {
		t.Fatalf("query link 1234:\n%s", fresh)
	}
	sub := c.ok(SnapshotName, map[string]any{"ref": m[1], "offset": 1, "limit": 3}).Text
	if !strings.Contains(sub, "- list [ref="+m[1]+"]") || strings.Contains(sub, "Index") || !strings.Contains(sub, `browser_snapshot {"limit":3,"offset":4,"ref":"`+m[1]+`"}`) {
		t.Errorf("ref %s, 3 lines:\n%s", m[1], sub)
	}
}

// TestSnapshot_LinkTargets: a link shows where it leads, relative on the
// page's own origin and whole elsewhere.
func TestSnapshot_LinkTargets(t *testing.T) {
	c := browser(t)
	c.open("/")
	c.ok(EvaluateName, map[string]any{"expression": `document.body.insertAdjacentHTML("beforeend", "<a href='https://example.org/docs?q=1'>Elsewhere</a>"); 1`})
	text := c.ok(SnapshotName, map[string]any{"query": "page"}).Text + c.ok(SnapshotName, map[string]any{"query": "elsewhere"}).Text
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`link "Next page" \[ref=e\d+\] → /second\n`),
		regexp.MustCompile(`link "Elsewhere" \[ref=e\d+\] → https://example.org/docs\?q=1\n`),
	} {
		if !want.MatchString(text) {
			t.Errorf("no line matching %s in:\n%s", want, text)
		}
	}
}

// TestSnapshot_PagingSaysTheDocumentChanged: a page past the first of a
// snapshot whose document has since been replaced (a script navigated)
// is taken from a new snapshot, and the answer says so.
func TestSnapshot_PagingSaysTheDocumentChanged(t *testing.T) {
	c := browser(t)
	c.open("/many")
	c.ok(EvaluateName, map[string]any{"expression": `location.href = "/second"; 1`})
	for i := 0; !strings.Contains(c.ok(EvaluateName, map[string]any{"expression": `location.pathname + document.readyState`}).Text, "/secondcomplete"); i++ {
		if i == 200 {
			t.Fatal("the script's navigation did not complete")
		}
	}
	got := c.ok(SnapshotName, map[string]any{"offset": 2}).Text
	if !strings.Contains(got, "a new document since the snapshot you were paging through") {
		t.Errorf("paging after the document changed:\n%s", got)
	}
}
