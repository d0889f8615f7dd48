package edit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/yagent/yagent/plugins/fs/internal/textenc"
	"github.com/yagent/yagent/sdk"
)

// Divergence describes where old_string comes closest to the file.
type Divergence struct {
	// ClosestLine is the 1-based line where the closest region starts, 0
	// when no line of old_string appears in the file.
	ClosestLine int `json:"closest_line"`
	// AgreeingLines of SearchLines non-blank lines of old_string agree there.
	AgreeingLines int `json:"agreeing_lines"`
	SearchLines   int `json:"search_lines"`
	// DiffLine is the 1-based file line of the first difference, with the
	// file's text and old_string's text at that place.
	DiffLine int    `json:"diff_line,omitempty"`
	FileText string `json:"file_text,omitempty"`
	YourText string `json:"your_text,omitempty"`
}

// diagKey is how lines are compared when looking for the closest region:
// ignoring surrounding whitespace, a line-ending "\r" and punctuation
// variants, so the region found is the one the model meant.
func diagKey(s string) string {
	return strings.Trim(normPunct(strings.TrimSuffix(s, "\r")), " \t")
}

// diverge finds the region of work where the most lines of old agree in
// place, and the first line that differs there.
func diverge(work, old string) Divergence {
	fl := strings.Split(work, "\n")
	ol := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	at := map[string][]int{}
	d := Divergence{}
	for k, l := range ol {
		key := diagKey(l)
		if key == "" {
			continue
		}
		d.SearchLines++
		at[key] = append(at[key], k)
	}
	score := map[int]int{}
	for j, l := range fl {
		for _, k := range at[diagKey(l)] {
			if i := j - k; i >= 0 {
				score[i]++
			}
		}
	}
	best, bestScore := -1, 0
	for i, s := range score {
		if s > bestScore || (s == bestScore && i < best) {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return d
	}
	d.ClosestLine, d.AgreeingLines = best+1, bestScore
	first := -1
	for k := range ol {
		if j := best + k; j >= len(fl) || diagKey(fl[j]) != diagKey(ol[k]) {
			first = k
			break
		}
	}
	if first < 0 {
		for k := range ol {
			if fl[best+k] != ol[k] {
				first = k
				break
			}
		}
	}
	if first >= 0 {
		d.DiffLine = best + first + 1
		if best+first < len(fl) {
			d.FileText = fl[best+first]
		} else {
			d.FileText = "(end of file)"
		}
		d.YourText = ol[first]
	}
	return d
}

func quote(s string) string {
	const maxShown = 160
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// notFound is the search_not_found error: the closest region, how many lines
// agree, the first differing line, and advice for large blocks and files
// whose line endings ruled the fallback out.
func notFound(work, old, original, extra string) error {
	d := diverge(work, old)
	var msg strings.Builder
	msg.WriteString("old_string was not found in the file.")
	if d.ClosestLine == 0 {
		msg.WriteString(" None of its lines appears in the file, even ignoring indentation: read the file again (read_file) and copy the text to replace from it.")
	} else {
		fmt.Fprintf(&msg, " The closest region starts at line %d, where %d of its %d non-blank lines agree", d.ClosestLine, d.AgreeingLines, d.SearchLines)
		if d.DiffLine > 0 {
			fmt.Fprintf(&msg, "; the first difference is at line %d:\n  file:  %s\n  yours: %s\n", d.DiffLine, quote(d.FileText), quote(d.YourText))
		} else {
			msg.WriteString(".\n")
		}
		fmt.Fprintf(&msg, "Read that region again (read_file with offset=%d) and copy its exact text into old_string.", d.ClosestLine)
	}
	if n := strings.Count(strings.TrimSuffix(old, "\n"), "\n") + 1; n > largeSearchLines {
		fmt.Fprintf(&msg, "\nold_string has %d lines: one wrong line spoils the whole block. Split it into smaller edits of a few lines each (several calls, or multi_edit with one edit per change).", n)
	}
	e := textenc.CountEndings(original)
	switch {
	case e.Style() == textenc.Mixed:
		fmt.Fprintf(&msg, "\nThe file mixes line endings (%d CRLF, %d LF, %d lone CR), so no line-ending fallback was tried: match CRLF lines with their \\r, exactly as read_file shows them.", e.CRLF, e.LF, e.CR)
	case e.Style() != textenc.CRLF && strings.Contains(old, "\r\n"):
		msg.WriteString("\nold_string has CRLF line breaks but the file does not: send the text with plain \\n breaks.")
	}
	if extra != "" {
		msg.WriteString("\n" + extra)
	}
	return &sdk.ToolError{Code: sdk.CodeSearchNotFound, Message: msg.String(), Data: d}
}
