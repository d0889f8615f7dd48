package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestView: a snapshot's lines cut to the budget (at least one line), the
// window from an offset with its next call, one element's subtree, and a
// query's matches with their ancestors.
func TestView(t *testing.T) {
	t.Parallel()
	snap := &snapshot{lines: []string{
		`- navigation "Main" [ref=e1]:`,
		`  - link "Home" [ref=e2]`,
		`  - link "Docs" [ref=e3]`,
		`- main [ref=e4]:`,
		`  - heading "Install" [ref=e5]`,
		`  - list [ref=e6]:`,
		`    - listitem [ref=e7]: Download the archive`,
		`    - listitem [ref=e8]: Run make install`,
		`  - button "Copy" [ref=e9]`,
		`- contentinfo: Made here`,
	}}
	all, _ := snap.scope(View{})
	w := cut(all, View{}, 79) // the first three lines take 80
	if len(w.lines) != 2 || w.next != 3 || w.left != 8 || w.leftRefs != 7 {
		t.Errorf("cut at 79 bytes: %d lines, next %d, left %d (%d refs); want 2, 3, 8 (7)", len(w.lines), w.next, w.left, w.leftRefs)
	}
	if got, want := cutLine(w, View{Query: "x"}), `Shown: lines 1–2 of 10. 8 more lines (7 elements with refs) below: browser_snapshot {"offset":3,"query":"x"}`; got != want {
		t.Errorf("cutLine = %q, want %q", got, want)
	}
	if w := cut(all, View{}, 1); len(w.lines) != 1 {
		t.Errorf("a budget under one line shows %d lines, want the one", len(w.lines))
	}
	if w := cut(all, View{Offset: 9, Limit: 5}, 1<<20); len(w.lines) != 2 || w.next != 0 || w.lines[0] != snap.lines[8] {
		t.Errorf("offset 9: %q next %d, want the last two lines and no next", w.lines, w.next)
	}
	if w := cut(all, View{Offset: 4, Limit: 2}, 1<<20); w.next != 6 || w.first != 4 {
		t.Errorf("offset 4 limit 2: first %d next %d, want 4 and 6", w.first, w.next)
	}
	sub, err := snap.scope(View{Ref: "e6"})
	if want := snap.lines[5:8]; err != nil || !slices.Equal(sub, want) {
		t.Errorf("ref e6: %q %v, want %q", sub, err, want)
	}
	if _, err := snap.scope(View{Ref: "e99"}); err == nil || !strings.Contains(err.Error(), "not in this page's snapshot") {
		t.Errorf("a ref not in the snapshot: %v", err)
	}
	q, _ := snap.scope(View{Query: "INSTALL"})
	if want := []string{snap.lines[3], snap.lines[4], snap.lines[5], snap.lines[7]}; !slices.Equal(q, want) {
		t.Errorf("query install:\n%s\nwant\n%s", strings.Join(q, "\n"), strings.Join(want, "\n"))
	}
	if q, _ := snap.scope(View{Query: "ref"}); len(q) != 0 {
		t.Errorf("query ref matched the refs themselves: %q", q)
	}
	if q, _ := snap.scope(View{Ref: "e4", Query: "copy"}); !slices.Equal(q, []string{snap.lines[3], snap.lines[8]}) {
		t.Errorf("ref e4 and query copy: %q", q)
	}
}

// TestView_ManyLines: paging through a long outline by the next calls
// reaches every line once, in order.
func TestView_ManyLines(t *testing.T) {
	t.Parallel()
	snap := &snapshot{}
	for i := range 5000 {
		snap.lines = append(snap.lines, fmt.Sprintf("- row %d [ref=e%d]", i, i+1))
	}
	all, _ := snap.scope(View{})
	var seen []string
	for v := (View{}); ; {
		w := cut(all, v, DefaultSnapshotBudget)
		seen = append(seen, w.lines...)
		if w.next == 0 {
			break
		}
		v.Offset = w.next
	}
	if !slices.Equal(seen, snap.lines) {
		t.Errorf("paging showed %d lines, want the %d in order", len(seen), len(snap.lines))
	}
}

// TestDiffLines: what changed between two snapshots of one document,
// element by element: added with their texts, changed (its line or its
// texts), moved (off the longest run kept in order), removed; nothing for
// the same lines.
func TestDiffLines(t *testing.T) {
	t.Parallel()
	old := []string{
		`- heading "Rows" [ref=e1]`,
		`- list [ref=e2]:`,
		`  - listitem [ref=e3]: one`,
		`  - listitem [ref=e4]: two`,
		`  - listitem [ref=e5]: three`,
		`- textbox "Name" [ref=e6]`,
		`- paragraph [ref=e7]:`,
		`  - text: idle`,
	}
	now := []string{
		`- heading "Rows" [ref=e1]`,
		`- list [ref=e2]:`,
		`  - listitem [ref=e5]: three`,
		`  - listitem [ref=e3]: one`,
		`  - listitem [ref=e8]: four`,
		`- textbox "Name" [ref=e6]: Ada`,
		`- paragraph [ref=e7]:`,
		`  - text: busy`,
	}
	got := diffLines(old, now)
	want := []string{
		`* - listitem [ref=e5]: three`,
		`+   - listitem [ref=e8]: four`,
		`~ - textbox "Name" [ref=e6]: Ada`,
		`~ - paragraph [ref=e7]:`,
		`~   - text: busy`,
		`-   - listitem [ref=e4]: two`,
	}
	// The moved line keeps its own indentation after the mark.
	want[0] = `*   - listitem [ref=e5]: three`
	if !slices.Equal(got, want) {
		t.Errorf("diffLines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := diffLines(old, old); d != nil {
		t.Errorf("the same lines: %q, want nothing", d)
	}
	if got := longestIncreasing([]int{3, 1, 2, 5, 4, 6}); !slices.Equal(got, []int{1, 2, 4, 5}) && !slices.Equal(got, []int{1, 2, 3, 5}) {
		t.Errorf("longestIncreasing = %v", got)
	}
}
