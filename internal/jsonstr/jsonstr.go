package jsonstr

import (
	"math/bits"
	"unicode/utf8"
)

// Append appends s quoted as encoding/json quotes a string with HTML
// escaping off: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t by name, the rest as \u00XX), an invalid UTF-8 byte as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029, everything else as it is.
func Append(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			m := special8(load8(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // the first byte that may need work
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 is the first eight bytes of s, the first the lowest (the compiler
// makes it one load, checked once).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special8 marks, with its high bit, each of the eight bytes in w that
// may need escaping or decoding: below 0x20, '"', '\\', or from 0x80. The
// lowest byte marked is one that does (a borrow runs only upward from a
// byte that does); 0 when none does.
func special8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below20 := (w - 0x20*ones) & ^w & highs
	quote := (w ^ '"'*ones - ones) & ^(w ^ '"'*ones) & highs
	backslash := (w ^ '\\'*ones - ones) & ^(w ^ '\\'*ones) & highs
	return below20 | quote | backslash | w&highs
}
