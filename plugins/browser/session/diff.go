package session

import (
	"fmt"
	"slices"
	"strings"
)

// Marks of a change line: the element's line as it is now (added,
// changed, moved) or was (removed).
const (
	markAdded   = "+"
	markRemoved = "-"
	markChanged = "~"
	markMoved   = "*"
)

// block is one element of a snapshot: its line with its ref, and the lines
// without a ref under it (its texts), which change with it. A line without
// a ref that is no element's child is a block of its own, known by its
// text and how many such lines came before it.
type block struct {
	ref   string
	lines []string
}

// blocks splits lines into elements, in order.
func blocks(lines []string) []block {
	var out []block
	seen := map[string]int{}
	for _, l := range lines {
		if ref := refOf(l); ref != "" {
			out = append(out, block{ref: ref, lines: []string{l}})
			continue
		}
		if n := len(out); n > 0 && out[n-1].ref[0] != '#' && indent(l) > indent(out[n-1].lines[0]) {
			out[n-1].lines = append(out[n-1].lines, l)
			continue
		}
		seen[l]++
		out = append(out, block{ref: fmt.Sprintf("#%d %s", seen[l], l), lines: []string{l}})
	}
	return out
}

// refOf is the ref a line names ("e12"), "" for none.
func refOf(l string) string {
	i := strings.Index(l, " [ref=")
	if i < 0 {
		return ""
	}
	rest := l[i+len(" [ref="):]
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return ""
	}
	return rest[:j]
}

// diffLines is what changed from old to now, element by element (an
// element keeps its ref while its document lives): each line marked added,
// changed, moved (its place among the others is new) or removed, in the
// order of the page now, the removed ones last. Unchanged elements are left
// out; nil when nothing changed.
func diffLines(old, now []string) []string {
	ob, nb := blocks(old), blocks(now)
	before := make(map[string]*block, len(ob))
	for i := range ob {
		before[ob[i].ref] = &ob[i]
	}
	after := make(map[string]bool, len(nb))
	// The elements kept, in the order they were; those off the longest
	// run kept in order have moved.
	oldPos := make(map[string]int, len(ob))
	for i, b := range ob {
		oldPos[b.ref] = i
	}
	var kept []int
	var keptRefs []string
	for _, b := range nb {
		after[b.ref] = true
		if _, ok := before[b.ref]; ok {
			kept = append(kept, oldPos[b.ref])
			keptRefs = append(keptRefs, b.ref)
		}
	}
	inOrder := map[string]bool{}
	for _, i := range longestIncreasing(kept) {
		inOrder[keptRefs[i]] = true
	}
	var out []string
	for _, b := range nb {
		o, ok := before[b.ref]
		switch {
		case !ok:
			out = appendMarked(out, markAdded, b.lines)
		case !slices.EqualFunc(o.lines, b.lines, sameButFocus):
			out = appendMarked(out, markChanged, b.lines)
		case !inOrder[b.ref]:
			out = appendMarked(out, markMoved, b.lines[:1])
		}
	}
	for _, b := range ob {
		if !after[b.ref] {
			out = appendMarked(out, markRemoved, b.lines[:1])
		}
	}
	return out
}

func appendMarked(out []string, mark string, lines []string) []string {
	for _, l := range lines {
		out = append(out, mark+" "+l)
	}
	return out
}

// longestIncreasing returns the indexes into seq of one longest strictly
// increasing subsequence (patience sorting, n log n).
func longestIncreasing(seq []int) []int {
	var tails []int // tails[k]: index in seq of the smallest tail of a run of k+1
	prev := make([]int, len(seq))
	for i, v := range seq {
		k, _ := slices.BinarySearchFunc(tails, v, func(t, v int) int { return seq[t] - v })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	if len(tails) == 0 {
		return nil
	}
	out := make([]int, len(tails))
	for i, k := len(tails)-1, tails[len(tails)-1]; i >= 0; i, k = i-1, prev[k] {
		out[i] = k
	}
	return out
}

// sameButFocus reports whether two lines differ in focus alone: the
// element an action focused is the one the model acted on, and the one it
// left is no news either.
func sameButFocus(a, b string) bool {
	return a == b || strings.Replace(a, " [focused]", "", 1) == strings.Replace(b, " [focused]", "", 1)
}
