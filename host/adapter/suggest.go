package adapter

import (
	"slices"
	"strings"
)

// Suggest returns up to three names of known close to name (edit distance,
// or one containing the other), closest first: the "did you mean" of an
// unknown tool or field.
func Suggest(name string, known []string) []string {
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
		d := levenshtein(lname, lk)
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

func levenshtein(a, b string) int {
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
