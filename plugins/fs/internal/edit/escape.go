package edit

import (
	"strconv"
	"strings"
	"unicode/utf16"
)

// unescapeJSON undoes one level of JSON string escaping that a model left
// in its text (a literal backslash-n for a line break, and so on). ok is
// false when s holds no \n or \t escape, the sign of double-escaped text.
func unescapeJSON(s string) (string, bool) {
	if !strings.Contains(s, `\n`) && !strings.Contains(s, `\t`) {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch n := s[i+1]; n {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '"', '\\', '/':
			b.WriteByte(n)
		case 'u':
			if r, ok := hex4(s, i+2); ok {
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(s, i+8); ok && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
						b.WriteRune(utf16.DecodeRune(r, r2))
						i += 11
						continue
					}
				}
				b.WriteRune(r)
				i += 5
				continue
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte('\\')
			b.WriteByte(n)
		}
		i++
	}
	out := b.String()
	return out, out != s
}

func hex4(s string, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[at:at+4], 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}
