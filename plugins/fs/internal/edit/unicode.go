package edit

import (
	"strings"
	"unicode/utf8"
)

// punctReplacement maps the Unicode punctuation models and editors swap
// for ASCII (and back) to its ASCII form.
func punctReplacement(r rune) (string, bool) {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032':
		return "'", true
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033':
		return `"`, true
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return "-", true
	case '\u2026':
		return "...", true
	case '\u00A0', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
		'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return " ", true
	case '\u200B', '\u2060', '\uFEFF':
		return "", true
	}
	return "", false
}

// normPunct returns s with its Unicode punctuation in ASCII form.
func normPunct(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if rep, ok := punctReplacement(r); ok {
			b.WriteString(rep)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// normPunctMap is normPunct that also returns, for each byte of the result
// and one past its end, the offset in s it came from, so a match in the
// normalized text maps back to s's real bytes.
func normPunctMap(s string) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	idx := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if rep, ok := punctReplacement(r); ok {
			b.WriteString(rep)
			for range len(rep) {
				idx = append(idx, i)
			}
		} else {
			b.WriteString(s[i : i+size])
			for k := range size {
				idx = append(idx, i+k)
			}
		}
		i += size
	}
	idx = append(idx, len(s))
	return b.String(), idx
}

// punctBoundary reports whether offset j of the normalized text falls
// between two source characters, not inside one's expansion ("…" → "...").
func punctBoundary(idx []int, j int) bool {
	return j == 0 || j == len(idx)-1 || idx[j] != idx[j-1]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
