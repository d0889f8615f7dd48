package textenc

import (
	"path/filepath"
	"strings"
)

// Style is a file's line-ending convention.
type Style int

// Line-ending styles.
const (
	// NoEndings: the text has no line break at all.
	NoEndings Style = iota
	// LF: every break is "\n".
	LF
	// CRLF: every break is "\r\n" and no "\r" stands alone.
	CRLF
	// CR: every break is a lone "\r" (classic Mac).
	CR
	// Mixed: more than one kind of break.
	Mixed
)

func (s Style) String() string {
	switch s {
	case NoEndings:
		return "none"
	case LF:
		return "lf"
	case CRLF:
		return "crlf"
	case CR:
		return "cr"
	case Mixed:
		return "mixed"
	}
	return "style(?)"
}

// Endings counts the line breaks of a text by kind.
type Endings struct {
	CRLF int // "\r\n"
	LF   int // "\n" not after "\r"
	CR   int // "\r" not before "\n"
}

// CountEndings counts the line breaks of s by kind.
func CountEndings(s string) Endings {
	var e Endings
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			if i > 0 && s[i-1] == '\r' {
				e.CRLF++
			} else {
				e.LF++
			}
		case '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				e.CR++
			}
		}
	}
	return e
}

// Style returns the convention the counts describe.
func (e Endings) Style() Style {
	kinds := 0
	var s Style
	if e.CRLF > 0 {
		kinds, s = kinds+1, CRLF
	}
	if e.LF > 0 {
		kinds, s = kinds+1, LF
	}
	if e.CR > 0 {
		kinds, s = kinds+1, CR
	}
	switch kinds {
	case 0:
		return NoEndings
	case 1:
		return s
	}
	return Mixed
}

// IsUniformCRLF reports whether s has at least one line break, every "\n"
// follows a "\r" and no "\r" stands alone. Only such a text may be matched
// again with its "\r" stripped and have CRLF restored after an edit: any
// other text would be rewritten beyond the edit.
func IsUniformCRLF(s string) bool {
	seen := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			if i == 0 || s[i-1] != '\r' {
				return false
			}
			seen = true
		case '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				return false
			}
		}
	}
	return seen
}

// ToLF replaces every "\r\n" in s with "\n".
func ToLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// ToCRLF turns every "\n" of s that does not follow a "\r" into "\r\n".
func ToCRLF(s string) string {
	n := strings.Count(s, "\n") - strings.Count(s, "\r\n")
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + n)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Normalize turns every line break of s ("\r\n", lone "\r") into "\n".
func Normalize(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// Apply turns the breaks of s into style: LF-normalized first, then CRLF or
// CR when asked. NoEndings and Mixed leave s as it is.
func Apply(s string, style Style) string {
	switch style {
	case LF:
		return Normalize(s)
	case CRLF:
		return ToCRLF(Normalize(s))
	case CR:
		return strings.ReplaceAll(Normalize(s), "\n", "\r")
	}
	return s
}

// NewFileStyle is the line ending a new file gets: CRLF for .bat and .cmd,
// whose interpreter (cmd.exe) mis-parses labels and blocks on LF; LF for
// everything else, .ps1 included (PowerShell reads LF fine). It depends on
// the name only, not on the running system.
func NewFileStyle(path string) Style {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".bat", ".cmd":
		return CRLF
	}
	return LF
}
