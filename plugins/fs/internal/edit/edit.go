package edit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yagent/yagent/plugins/fs/internal/textenc"
	"github.com/yagent/yagent/sdk"
)

// maxStringBytes caps old_string and new_string each
// (docs/ARCHITECTURE.md#core-rules §14); a var so tests can lower it.
var maxStringBytes = 10 << 20

// largeSearchLines is the size of a search block above which a failed match
// comes with advice to split the edit.
const largeSearchLines = 40

// Request is one replacement.
type Request struct {
	Old        string
	New        string
	ReplaceAll bool
}

// Repair names one thing done beyond an exact match.
type Repair struct {
	Kind   string
	Detail string
}

// Repair kinds and the line_endings details.
const (
	KindWhitespace = "whitespace_relaxed"
	KindReindent   = "reindented"
	// KindReindentSkipped: the indentation differed in no consistent way
	// and new_string went in as written.
	KindReindentSkipped = "reindent_skipped"
	KindJSONEscape      = "json_escape_unwrapped"
	KindUnicode         = "unicode_normalized"
	KindLineEndings     = "line_endings"

	// CRLFNormalized: a uniformly CRLF file was matched with its "\r"
	// stripped, edited, and had CRLF restored.
	CRLFNormalized = "crlf-normalized"
	// CRLFApplied: new_string's LF breaks were turned into CRLF to match
	// the file.
	CRLFApplied = "crlf-applied"
	// MixedNotConverted: the file mixes line endings; new_string went in
	// as written.
	MixedNotConverted = "mixed-not-converted"
)

// Outcome is the result of a successful edit.
type Outcome struct {
	// Content is the whole new text.
	Content string
	// Replacements is how many places were replaced.
	Replacements int
	// Line is the 1-based line, in the text before the edit, where the
	// first replacement starts.
	Line int
	// Repairs lists every relaxation and conversion, in order.
	Repairs []Repair
}

// Validate refuses requests that cannot be meant: an empty or oversized
// old_string, an oversized new_string, or no change at all.
func Validate(req Request) error {
	switch {
	case req.Old == "":
		return sdk.Errorf(sdk.CodeInvalidInput,
			"old_string is empty: give the exact text to replace (to create or overwrite a whole file, use write_file)")
	case len(req.Old) > maxStringBytes:
		return sdk.Errorf(sdk.CodeInvalidInput,
			"old_string is %d bytes, over the limit of %d: split the edit into smaller ones, or use write_file", len(req.Old), maxStringBytes)
	case len(req.New) > maxStringBytes:
		return sdk.Errorf(sdk.CodeInvalidInput,
			"new_string is %d bytes, over the limit of %d: split the edit into smaller ones, or use write_file", len(req.New), maxStringBytes)
	case req.Old == req.New:
		return sdk.Errorf(sdk.CodeInvalidInput, "old_string and new_string are identical: the edit would change nothing")
	}
	return nil
}

// Apply replaces req.Old by req.New in content. Failures are *sdk.ToolError
// with code invalid_input, search_not_found or search_not_unique, and a
// message that says what to do next.
//
// Line endings follow docs/ARCHITECTURE.md#core-rules §18: matching is on the
// real bytes; a file that is uniformly CRLF and has no exact match is matched
// once more with "\r" stripped (unique hits only) and gets CRLF back
// afterwards; a file with mixed endings gets no such fallback; an exact hit
// in a CRLF file has new_string's breaks converted to CRLF.
func Apply(content string, req Request) (Outcome, error) {
	if err := Validate(req); err != nil {
		return Outcome{}, err
	}
	crlf := textenc.IsUniformCRLF(content)

	// Exact.
	if at := indexAll(content, req.Old); len(at) > 0 {
		if len(at) > 1 && !req.ReplaceAll {
			return Outcome{}, notUnique(content, at, "")
		}
		newText := req.New
		var reps []Repair
		if crlf && hasBareLF(newText) {
			newText = textenc.ToCRLF(newText)
			reps = append(reps, Repair{KindLineEndings, CRLFApplied})
		} else if strings.Contains(newText, "\n") && textenc.CountEndings(content).Style() == textenc.Mixed {
			reps = append(reps, Repair{KindLineEndings, MixedNotConverted})
		}
		if !req.ReplaceAll {
			at = at[:1]
		}
		return Outcome{
			Content:      replaceAt(content, len(req.Old), newText, at),
			Replacements: len(at),
			Line:         lineOf(content, at[0]),
			Repairs:      reps,
		}, nil
	}

	// The one line-ending fallback: uniformly CRLF files only.
	if crlf && strings.Contains(req.Old, "\n") {
		lf, oldLF := textenc.ToLF(content), textenc.ToLF(req.Old)
		if at := indexAll(lf, oldLF); len(at) > 0 {
			if len(at) > 1 && !req.ReplaceAll {
				return Outcome{}, notUnique(lf, at, "once \\r is stripped from the CRLF file")
			}
			if !req.ReplaceAll {
				at = at[:1]
			}
			out := replaceAt(lf, len(oldLF), textenc.ToLF(req.New), at)
			return Outcome{
				Content:      textenc.ToCRLF(out),
				Replacements: len(at),
				Line:         lineOf(lf, at[0]),
				Repairs:      []Repair{{KindLineEndings, CRLFNormalized}},
			}, nil
		}
	}

	work, old, newText := content, req.Old, req.New
	if crlf {
		work, old, newText = textenc.ToLF(content), textenc.ToLF(req.Old), textenc.ToLF(req.New)
	}
	if req.ReplaceAll {
		return Outcome{}, notFound(work, old, content, "replace_all replaces exact text only (no whitespace, escape or punctuation relaxation).")
	}
	m, err := relaxed(work, old, newText)
	if err != nil {
		return Outcome{}, err
	}
	if m == nil {
		return Outcome{}, notFound(work, old, content, "")
	}
	out := work[:m.start] + m.newText + work[m.end:]
	if crlf {
		out = textenc.ToCRLF(out)
		m.repairs = append(m.repairs, Repair{KindLineEndings, CRLFNormalized})
	}
	return Outcome{Content: out, Replacements: 1, Line: lineOf(work, m.start), Repairs: m.repairs}, nil
}

// ValidateAll is Validate for every request of a multi-edit, which must
// have at least one.
func ValidateAll(reqs []Request) error {
	if len(reqs) == 0 {
		return sdk.Errorf(sdk.CodeInvalidInput, "edits is empty: give at least one {old_string, new_string}")
	}
	for i, r := range reqs {
		if err := Validate(r); err != nil {
			return wrapEditErr(err, i, len(reqs))
		}
	}
	return nil
}

// ApplyAll applies reqs in order, each to the result of the one before, all
// in memory: either every edit applies or an error names the one that did
// not (and nothing is returned to write).
func ApplyAll(content string, reqs []Request) (Outcome, []int, error) {
	if err := ValidateAll(reqs); err != nil {
		return Outcome{}, nil, err
	}
	total := Outcome{Content: content}
	lines := make([]int, 0, len(reqs))
	for i, r := range reqs {
		o, err := Apply(total.Content, r)
		if err != nil {
			return Outcome{}, nil, wrapEditErr(err, i, len(reqs))
		}
		total.Content = o.Content
		total.Replacements += o.Replacements
		if i == 0 {
			total.Line = o.Line
		}
		lines = append(lines, o.Line)
		for _, rep := range o.Repairs {
			if rep.Kind == KindLineEndings {
				// One note per conversion kind: its detail is a fixed word.
				if !slices.Contains(total.Repairs, rep) {
					total.Repairs = append(total.Repairs, rep)
				}
				continue
			}
			rep.Detail = fmt.Sprintf("edit %d: %s", i+1, rep.Detail)
			total.Repairs = append(total.Repairs, rep)
		}
	}
	return total, lines, nil
}

func wrapEditErr(err error, i, n int) error {
	te, ok := sdk.AsToolError(err)
	if !ok {
		return fmt.Errorf("edit %d of %d: %w", i+1, n, err)
	}
	msg := fmt.Sprintf("edit %d of %d: %s", i+1, n, te.Message)
	if n > 1 {
		msg += "\nNo edit was applied: the file is unchanged. Fix this edit and send them all again."
	}
	return &sdk.ToolError{Code: te.Code, Message: msg, Data: map[string]any{"edit": i + 1, "detail": te.Data}}
}

func hasBareLF(s string) bool {
	return strings.Count(s, "\n") > strings.Count(s, "\r\n")
}

// indexAll returns the start of every non-overlapping occurrence of sub.
func indexAll(s, sub string) []int {
	var at []int
	for off := 0; ; {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return at
		}
		at = append(at, off+i)
		off += i + len(sub)
	}
}

// replaceAt replaces the oldLen bytes at each offset in at (ascending).
func replaceAt(s string, oldLen int, repl string, at []int) string {
	var b strings.Builder
	b.Grow(len(s) + len(at)*(len(repl)-oldLen))
	prev := 0
	for _, i := range at {
		b.WriteString(s[prev:i])
		b.WriteString(repl)
		prev = i + oldLen
	}
	b.WriteString(s[prev:])
	return b.String()
}

// lineOf is the 1-based line holding byte offset off.
func lineOf(s string, off int) int {
	return 1 + strings.Count(s[:off], "\n")
}

func linesOf(s string, offs []int) []int {
	out := make([]int, 0, len(offs))
	line, prev := 1, 0
	for _, o := range offs {
		line += strings.Count(s[prev:o], "\n")
		prev = o
		out = append(out, line)
	}
	return out
}

func notUnique(s string, at []int, how string) error {
	lines := linesOf(s, at)
	shown := lines
	if len(shown) > 20 {
		shown = shown[:20]
	}
	var ls []string
	for _, l := range shown {
		ls = append(ls, fmt.Sprint(l))
	}
	more := ""
	if len(lines) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(lines)-len(shown))
	}
	where := ""
	if how != "" {
		where = " " + how
	}
	return &sdk.ToolError{
		Code: sdk.CodeSearchNotUnique,
		Message: fmt.Sprintf("old_string occurs %d times%s (starting at lines %s%s): add surrounding lines to old_string so it matches one place, or set replace_all to replace every occurrence.",
			len(at), where, strings.Join(ls, ", "), more),
		Data: map[string]any{"lines": lines},
	}
}
