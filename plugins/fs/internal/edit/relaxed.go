package edit

import (
	"fmt"
	"strings"
)

// match is a place found by a relaxed level: the real bytes [start, end) of
// the text and what goes there.
type match struct {
	start, end int
	newText    string
	repairs    []Repair
}

// span is one line of a text: [start, end) without its "\n"; next is where
// the following line starts.
type span struct{ start, end, next int }

func splitSpans(s string) []span {
	var out []span
	for start := 0; start < len(s); {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 {
			out = append(out, span{start, len(s), len(s)})
			break
		}
		out = append(out, span{start, start + i, start + i + 1})
		start += i + 1
	}
	return out
}

// block is old_string cut into lines; endsNL says it ended with a break.
type block struct {
	lines  []string
	endsNL bool
}

// splitBlock cuts old into lines; ok is false for a block with no
// non-blank line, which whole-line matching would find everywhere.
func splitBlock(old string) (block, bool) {
	b := block{endsNL: strings.HasSuffix(old, "\n")}
	b.lines = strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	for _, l := range b.lines {
		if strings.Trim(l, " \t") != "" {
			return b, true
		}
	}
	return block{}, false
}

// Whole-line equality at each relaxed level. Only spaces and tabs are
// relaxed: a "\r" is a line ending, and docs/ARCHITECTURE.md#core-rules §18
// gives mixed-ending files no line-ending fallback.
func rstripEq(a, b string) bool { return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t") }
func trimEq(a, b string) bool   { return strings.Trim(a, " \t") == strings.Trim(b, " \t") }
func punctEq(a, b string) bool {
	return strings.Trim(normPunct(a), " \t") == strings.Trim(normPunct(b), " \t")
}

// maxHits bounds how many relaxed candidates are collected.
const maxHits = 50

func lineMatches(work string, fl []span, b block, eq func(file, old string) bool) []int {
	m := len(b.lines)
	var hits []int
	for i := 0; i+m <= len(fl) && len(hits) < maxHits; i++ {
		ok := true
		for k := 0; k < m; k++ {
			if !eq(work[fl[i+k].start:fl[i+k].end], b.lines[k]) {
				ok = false
				break
			}
		}
		if ok {
			hits = append(hits, i)
		}
	}
	return hits
}

func region(fl []span, i int, b block) (start, end int) {
	last := fl[i+len(b.lines)-1]
	if b.endsNL {
		return fl[i].start, last.next
	}
	return fl[i].start, last.end
}

func lineRange(i, n int) string {
	if n == 1 {
		return fmt.Sprintf("line %d", i+1)
	}
	return fmt.Sprintf("lines %d-%d", i+1, i+n)
}

func hitsNotUnique(work string, fl []span, hits []int, how string) error {
	at := make([]int, len(hits))
	for i, h := range hits {
		at[i] = fl[h].start
	}
	return notUnique(work, at, how+" (and nowhere exactly)")
}

// relaxed runs the tolerant levels in order, stopping at the first that
// finds exactly one place; several places at a level is an error, since a
// looser level would only find more. A nil match means nothing was found.
func relaxed(work, old, newText string) (*match, error) {
	fl := splitSpans(work)
	if m, err := lineLevels(work, fl, old, newText); m != nil || err != nil {
		return m, err
	}

	if uold, ok := unescapeJSON(old); ok {
		unew := newText
		if u, ok := unescapeJSON(newText); ok && !strings.Contains(newText, "\n") {
			unew = u
		}
		rep := Repair{KindJSONEscape, `old_string held JSON escapes (\n, \t, \"); matched after unwrapping them`}
		switch at := indexAll(work, uold); {
		case len(at) == 1:
			return &match{at[0], at[0] + len(uold), unew, []Repair{rep}}, nil
		case len(at) > 1:
			return nil, notUnique(work, at, "once its JSON escapes are unwrapped")
		}
		m, err := lineLevels(work, fl, uold, unew)
		if m != nil {
			m.repairs = append([]Repair{rep}, m.repairs...)
		}
		if m != nil || err != nil {
			return m, err
		}
	}

	normWork, normOld := normPunct(work), normPunct(old)
	if normWork == work && normOld == old {
		return nil, nil
	}
	rep := Repair{KindUnicode, "matched after normalizing Unicode punctuation (curly quotes, dashes, odd spaces)"}
	var at []int
	var idx []int
	if strings.Contains(normWork, normOld) {
		// The offset map costs a word per byte: built only when it will be used.
		normWork, idx = normPunctMap(work)
		for _, a := range indexAll(normWork, normOld) {
			if punctBoundary(idx, a) && punctBoundary(idx, a+len(normOld)) {
				at = append(at, a)
			}
		}
	}
	switch {
	case len(at) == 1:
		start, end := idx[at[0]], idx[at[0]+len(normOld)]
		rep.Detail += fmt.Sprintf(" at line %d", lineOf(work, start))
		return &match{start, end, newText, []Repair{rep}}, nil
	case len(at) > 1:
		offs := make([]int, len(at))
		for i, a := range at {
			offs[i] = idx[a]
		}
		return nil, notUnique(work, offs, "once Unicode punctuation is normalized (and nowhere exactly)")
	}
	b, ok := splitBlock(old)
	if !ok {
		return nil, nil
	}
	hits := lineMatches(work, fl, b, punctEq)
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, hitsNotUnique(work, fl, hits, "once Unicode punctuation and whitespace are normalized")
	}
	start, end := region(fl, hits[0], b)
	rep.Detail = "whitespace ignored and Unicode punctuation normalized; matched " + lineRange(hits[0], len(b.lines))
	m := &match{start, end, newText, []Repair{rep}}
	m.reindent(work, fl, hits[0], b)
	return m, nil
}

// lineLevels tries whole-line matching ignoring trailing whitespace, then
// whitespace at both ends (re-indenting new_string to the file's own).
func lineLevels(work string, fl []span, old, newText string) (*match, error) {
	b, ok := splitBlock(old)
	if !ok {
		return nil, nil
	}
	hits := lineMatches(work, fl, b, rstripEq)
	switch len(hits) {
	case 0:
	case 1:
		start, end := region(fl, hits[0], b)
		return &match{start, end, newText, []Repair{{KindWhitespace,
			"trailing whitespace ignored; matched " + lineRange(hits[0], len(b.lines))}}}, nil
	default:
		return nil, hitsNotUnique(work, fl, hits, "ignoring trailing whitespace")
	}
	hits = lineMatches(work, fl, b, trimEq)
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, hitsNotUnique(work, fl, hits, "ignoring leading and trailing whitespace")
	}
	start, end := region(fl, hits[0], b)
	m := &match{start, end, newText, []Repair{{KindWhitespace,
		"leading and trailing whitespace ignored; matched " + lineRange(hits[0], len(b.lines))}}}
	m.reindent(work, fl, hits[0], b)
	return m, nil
}

// reindent rewrites m.newText's indentation when the matched file lines are
// indented differently from old_string, and records it.
func (m *match) reindent(work string, fl []span, at int, b block) {
	fileLines := make([]string, len(b.lines))
	for k := range fileLines {
		fileLines[k] = work[fl[at+k].start:fl[at+k].end]
	}
	text, detail := reindent(fileLines, b.lines, m.newText, func() int { return fileSpaceUnit(work, fl) })
	m.newText = text
	switch detail {
	case "":
	case notReindented:
		m.repairs = append(m.repairs, Repair{KindReindentSkipped, detail})
	default:
		m.repairs = append(m.repairs, Repair{KindReindent, detail})
	}
}
