package output

import (
	"fmt"
	"unicode/utf8"
)

// Sanitize turns bytes a command wrote into text a model can read and any
// JSON encoder accepts:
//
//   - invalid UTF-8 becomes U+FFFD;
//   - terminal escape sequences (CSI such as colours and cursor moves, OSC
//     such as window titles, and two-byte ESC sequences) are removed;
//   - "\r\n" becomes "\n"; a lone "\r" followed by more text on the same
//     line starts that line again, as a terminal shows it (progress bars
//     collapse to their last state);
//   - backspace removes the character before it on the same line;
//   - every other control byte (NUL, BEL, DEL, C1 controls, ...) is written
//     as an escape such as \x00, so binary output stays visible as bytes.
func Sanitize(b []byte) string {
	out := make([]byte, 0, len(b))
	lineStart := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\n':
			out = append(out, '\n')
			lineStart = len(out)
			i++
		case c == '\t':
			out = append(out, c)
			i++
		case c == '\r':
			j := i
			for j < len(b) && b[j] == '\r' {
				j++
			}
			if j < len(b) && b[j] != '\n' {
				out = out[:lineStart]
			}
			i = j
		case c == '\b':
			if len(out) > lineStart {
				_, size := utf8.DecodeLastRune(out[lineStart:])
				out = out[:len(out)-size]
			}
			i++
		case c == 0x1b:
			i += escapeLen(b[i:])
		case c < 0x20 || c == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, c)
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && size <= 1:
				out = utf8.AppendRune(out, utf8.RuneError)
			case r >= 0x80 && r <= 0x9f:
				out = fmt.Appendf(out, `\u%04x`, r)
			default:
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

// escapeLen returns the length of the escape sequence that opens b (b[0] is
// ESC). An unfinished sequence at the end of b counts to the end.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return len(b)
	}
	switch b[1] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40-0x7e.
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return i + 1
			}
			if b[i] < 0x20 || b[i] > 0x7e { // not part of a CSI: stop before it
				return i
			}
		}
		return len(b)
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ESC \.
		for i := 2; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		}
		return len(b)
	case '(', ')', '*', '+', '#', '%': // charset and line-size selections: one more byte.
		return min(3, len(b))
	default:
		return 2
	}
}
