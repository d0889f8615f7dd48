package session

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// DefaultSnapshotBudget is how many bytes of snapshot text one answer
// holds when the setting leaves it out: about 10,000 tokens.
const DefaultSnapshotBudget = 40_000

// View selects what of a page's snapshot an answer shows, in the shape
// read_file has: a window of lines, optionally of one element's subtree or
// of the lines a query matches.
type View struct {
	// Offset is the first line shown, 1-based; 0 is 1. An offset past 1
	// pages through the snapshot already taken of the same document, so
	// that lines do not shift between pages.
	Offset int
	// Limit is how many lines at most; 0 is as many as the budget holds.
	Limit int
	// Ref keeps the subtree of one element (its line and those under it).
	Ref string
	// Query keeps the lines whose text contains it, case-insensitively,
	// with the lines of their ancestors for context.
	Query string
}

// snapshot is one rendering of a tab's page, kept for paging through it.
type snapshot struct {
	gen   uint64
	lines []string
	refs  int
	// url and title are the page's when it was taken.
	url, title string
}

// window is what an answer shows of a snapshot.
type window struct {
	lines []string
	// first is the 1-based number of lines[0] among the selected lines;
	// total how many lines the view selects.
	first, total int
	// next is the offset of the next page, 0 when none is left; left the
	// lines and leftRefs the elements with refs after this page.
	next, left, leftRefs int
}

// scope returns the lines of snap v selects, before paging: all, one
// element's subtree, or the query's matches with their ancestors.
func (snap *snapshot) scope(v View) ([]string, error) {
	lines := snap.lines
	if v.Ref != "" {
		mark := "[ref=" + strings.TrimSpace(v.Ref) + "]"
		at := -1
		for i, l := range lines {
			if strings.Contains(l, mark) {
				at = i
				break
			}
		}
		if at < 0 {
			return nil, staleRef("ref %s is not in this page's snapshot now (the element is gone, or the ref is of another page). Call browser_snapshot and use a ref from it", v.Ref)
		}
		end := at + 1
		for end < len(lines) && indent(lines[end]) > indent(lines[at]) {
			end++
		}
		lines = lines[at:end]
	}
	if q := strings.ToLower(strings.TrimSpace(v.Query)); q != "" {
		lines = withAncestors(lines, func(l string) bool { return strings.Contains(strings.ToLower(withoutRef(l)), q) })
	}
	return lines, nil
}

// cut cuts lines to v's window and the budget in bytes: at least one line,
// however long.
func cut(lines []string, v View, budget int) window {
	w := window{total: len(lines), first: max(v.Offset, 1)}
	start := min(w.first-1, len(lines))
	size := 0
	end := start
	for end < len(lines) {
		if v.Limit > 0 && end-start >= v.Limit {
			break
		}
		n := len(lines[end]) + 1
		if end > start && size+n > budget {
			break
		}
		size += n
		end++
	}
	w.lines = lines[start:end]
	if end < len(lines) {
		w.next = end + 1
		w.left = len(lines) - end
		for _, l := range lines[end:] {
			if strings.Contains(l, "[ref=") {
				w.leftRefs++
			}
		}
	}
	return w
}

// nextCall is the exact call that shows the page after w.
func nextCall(w window, v View) string {
	args := map[string]any{"offset": w.next}
	if v.Limit > 0 {
		args["limit"] = v.Limit
	}
	if v.Ref != "" {
		args["ref"] = v.Ref
	}
	if v.Query != "" {
		args["query"] = v.Query
	}
	b, _ := json.Marshal(args)
	return "browser_snapshot " + string(b)
}

// indent is a line's depth in the outline: two spaces a level.
func indent(l string) int {
	return (len(l) - len(strings.TrimLeft(l, " "))) / 2
}

// withoutRef is a line without its " [ref=eN]", for matching a query
// against what the page says.
func withoutRef(l string) string {
	i := strings.Index(l, " [ref=")
	if i < 0 {
		return l
	}
	j := strings.IndexByte(l[i+1:], ']')
	if j < 0 {
		return l
	}
	return l[:i] + l[i+1+j+1:]
}

// withAncestors keeps the lines match accepts and, before each, the lines
// of its ancestors, in the outline's order.
func withAncestors(lines []string, match func(string) bool) []string {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if !match(l) {
			continue
		}
		keep[i] = true
		depth := indent(l)
		for j := i - 1; j >= 0 && depth > 0; j-- {
			if d := indent(lines[j]); d < depth {
				if keep[j] {
					break // its own ancestors are kept already
				}
				keep[j] = true
				depth = d
			}
		}
	}
	var out []string
	for i, k := range keep {
		if k {
			out = append(out, lines[i])
		}
	}
	return out
}

// cutLine says where the window stopped and names the next call.
func cutLine(w window, v View) string {
	return fmt.Sprintf("Shown: lines %d–%d of %d. %d more lines (%d elements with refs) below: %s",
		w.first, w.first+len(w.lines)-1, w.total, w.left, w.leftRefs, nextCall(w, v))
}

// badView says what is wrong with a view, nil when nothing is.
func badView(v View) error {
	switch {
	case v.Offset < 0:
		return sdk.Errorf(sdk.CodeInvalidInput, "offset %d is negative: lines count from 1", v.Offset)
	case v.Limit < 0:
		return sdk.Errorf(sdk.CodeInvalidInput, "limit %d is negative; leave it out to fill the answer", v.Limit)
	}
	return nil
}
