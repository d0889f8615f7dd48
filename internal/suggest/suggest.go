package suggest

import (
	"slices"
	"strings"
)

// Close returns up to three of known close to name (case-insensitive edit
// distance within max(2, len(name)/3), or one containing the other),
// closest first, ties by name.
func Close(name string, known []string) []string {
	type cand struct {
		name string
		dist int
	}
	lname := strings.ToLower(name)
	limit := max(2, len(name)/3)
	var cands []cand
	for _, k := range known {
		lk := strings.ToLower(k)
		if k == name {
			continue
		}
		d := Distance(lname, lk)
		if d > limit && !(len(lname) >= 3 && (strings.Contains(lk, lname) || strings.Contains(lname, lk) && len(lk) >= 3)) {
			continue
		}
		cands = append(cands, cand{k, d})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, 3)
	for _, c := range cands {
		if len(out) == 3 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// Closest returns the candidate nearest to word by edit distance, or ""
// when none is within max(2, len(word)/3): too far to be a likely typo.
func Closest(word string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := Distance(word, c)
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(word)/3) {
		return ""
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
