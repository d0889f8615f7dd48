package grep

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PatternError is a pattern the search refuses, explained for the model:
// what is wrong and how to write it instead.
type PatternError struct {
	Pattern string
	Problem string
	Fix     string
}

func (e *PatternError) Error() string {
	msg := fmt.Sprintf("invalid regular expression %q: %s", e.Pattern, e.Problem)
	if e.Fix != "" {
		msg += ". " + e.Fix
	}
	return msg
}

// matcher is a compiled query pattern for both back-ends.
type matcher struct {
	// re matches within one line: no class matches '\n', ^ $ \A \z are line
	// anchors.
	re *regexp.Regexp
	// reLine is re with ^ and $ anchored to the text, for matching one line
	// in which invalid UTF-8 bytes were replaced by '\n' (see matchLine).
	reLine *regexp.Regexp
	// rgExpr and rgFixed are what ripgrep is given (-e, and -F when fixed).
	rgExpr  string
	rgFixed bool
	// lits are literals one of which every match contains (nil: none
	// known); fold means they are compared ASCII-case-insensitively.
	lits [][]byte
	fold bool
	// exact is set when every occurrence of lits[0] is a match, so no
	// regexp check is needed.
	exact bool
}

const literalFix = "To search for the text as written, set literal: true"

// compile checks the pattern and builds the matcher.
func compile(pattern string, literal, ignoreCase bool) (*matcher, error) {
	if strings.ContainsAny(pattern, "\n") {
		return nil, &PatternError{Pattern: pattern, Problem: "it contains a line break, and grep matches one line at a time",
			Fix: "Search for one line of the text, or for each line separately"}
	}
	m := &matcher{}
	goExpr := pattern
	if literal {
		goExpr = regexp.QuoteMeta(pattern)
		m.rgExpr, m.rgFixed = pattern, true
	} else {
		rg, err := rgTranslate(pattern)
		if err != nil {
			return nil, err
		}
		m.rgExpr = rg
	}
	flags := (syntax.Perl | syntax.UnicodeGroups) &^ (syntax.OneLine | syntax.ClassNL)
	if ignoreCase {
		flags |= syntax.FoldCase
		if !literal {
			m.rgExpr = "(?i)" + m.rgExpr
		}
	}
	tree, err := syntax.Parse(goExpr, flags)
	if err != nil {
		return nil, explain(pattern, err)
	}
	if err := lineSafe(pattern, tree); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, explain(pattern, err)
	}
	m.re = re
	textAnchors(tree)
	if m.reLine, err = regexp.Compile(tree.String()); err != nil {
		return nil, explain(pattern, err)
	}
	lits, fold, ok := required(tree)
	if ok {
		for _, l := range lits {
			m.lits = append(m.lits, []byte(l))
		}
		m.fold = fold
		m.exact = literal && !ignoreCase && len(lits) == 1
	}
	return m, nil
}

// lineSafe rewrites tree in place so that no match crosses a line break:
// classes lose '\n', . never matches it, text anchors become line anchors.
// A literal line break is refused, as ripgrep refuses it.
func lineSafe(pattern string, re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return &PatternError{Pattern: pattern, Problem: "it matches a line break, and grep matches one line at a time",
					Fix: "Search for one line of the text; use $ for the end of a line"}
			}
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		re.Rune = removeNL(re.Rune)
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	}
	for _, sub := range re.Sub {
		if err := lineSafe(pattern, sub); err != nil {
			return err
		}
	}
	return nil
}

// textAnchors turns line anchors into text anchors, for a regexp run on
// one line at a time.
func textAnchors(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpBeginLine:
		re.Op = syntax.OpBeginText
	case syntax.OpEndLine:
		re.Op = syntax.OpEndText
	}
	for _, sub := range re.Sub {
		textAnchors(sub)
	}
}

// matchLine reports whether line (without its '\n') matches. Rust's
// Unicode regexps, and so ripgrep, never match an invalid UTF-8 byte with
// . or a class, where Go's match it as U+FFFD; such bytes are replaced by
// '\n', which no class or . here matches, before matching.
func (m *matcher) matchLine(line []byte) bool {
	if utf8.Valid(line) {
		return m.re.Match(line)
	}
	return m.reLine.Match(sanitize(line))
}

// sanitize returns line with every invalid UTF-8 byte replaced by '\n'.
func sanitize(line []byte) []byte {
	out := make([]byte, 0, len(line))
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size <= 1 {
			out = append(out, '\n')
			i++
			continue
		}
		out = append(out, line[i:i+size]...)
		i += size
	}
	return out
}

// removeNL removes '\n' from the range list of a class.
func removeNL(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// explain turns a regexp/syntax error into words for the model.
func explain(pattern string, err error) error {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return &PatternError{Pattern: pattern, Problem: err.Error(), Fix: literalFix}
	}
	at := se.Expr
	pe := &PatternError{Pattern: pattern}
	switch se.Code {
	case syntax.ErrMissingParen:
		pe.Problem = fmt.Sprintf("a '(' is never closed (at %q)", at)
		pe.Fix = `Escape a parenthesis you mean literally as \( or \), or set literal: true`
	case syntax.ErrUnexpectedParen:
		pe.Problem = "a ')' has no matching '('"
		pe.Fix = `Escape a parenthesis you mean literally as \( or \), or set literal: true`
	case syntax.ErrMissingBracket:
		pe.Problem = fmt.Sprintf("a '[' opens a character class that is never closed (at %q)", at)
		pe.Fix = `Escape a bracket you mean literally as \[, or set literal: true`
	case syntax.ErrMissingRepeatArgument:
		pe.Problem = fmt.Sprintf("the repetition %q has nothing before it to repeat", at)
		pe.Fix = `Escape a * + ? or { you mean literally (\* \+ \? \{), or set literal: true`
	case syntax.ErrInvalidRepeatOp:
		pe.Problem = fmt.Sprintf("the repetition %q repeats a repetition", at)
		pe.Fix = `Write a single operator (for example .* instead of .**), or escape the second one`
	case syntax.ErrInvalidRepeatSize:
		pe.Problem = fmt.Sprintf("the count in %q is above 1000 or its minimum exceeds its maximum", at)
		pe.Fix = "Use a count of at most 1000, with {min,max} in that order"
	case syntax.ErrInvalidCharRange:
		if strings.HasPrefix(at, `\p`) || strings.HasPrefix(at, `\P`) {
			pe.Problem = fmt.Sprintf("%q is not a known character class", at)
			pe.Fix = `Use Unicode classes by short name or script, such as \p{L}, \p{Lu}, \p{Nd}, \p{Greek}`
			break
		}
		pe.Problem = fmt.Sprintf("the class range %q runs backwards or is malformed", at)
		pe.Fix = "Write ranges low to high (a-z); put a literal - first or last in the class"
	case syntax.ErrInvalidCharClass:
		pe.Problem = fmt.Sprintf("%q is not a known character class", at)
		pe.Fix = `Use Unicode classes by short name or script, such as \p{L}, \p{Lu}, \p{Nd}, \p{Greek}`
	case syntax.ErrTrailingBackslash:
		pe.Problem = "it ends with a lone backslash"
		pe.Fix = `Write \\ to match a backslash, or set literal: true`
	case syntax.ErrInvalidEscape:
		if len(at) >= 2 && at[1] >= '1' && at[1] <= '9' {
			pe.Problem = fmt.Sprintf("%q is a backreference, which neither RE2 nor ripgrep's default engine supports", at)
			pe.Fix = "Match the repeated text explicitly, or search for the first part and read the results"
		} else if strings.HasPrefix(at, `\<`) || strings.HasPrefix(at, `\>`) {
			pe.Problem = fmt.Sprintf("%q word-start/end anchors are not supported", at)
			pe.Fix = `Use \b for a word boundary`
		} else {
			pe.Problem = fmt.Sprintf("%q is not a known escape", at)
			pe.Fix = `Write \\ to match a backslash, escape only punctuation, or set literal: true`
		}
	case syntax.ErrInvalidPerlOp:
		switch {
		case strings.HasPrefix(at, "(?=") || strings.HasPrefix(at, "(?!"):
			pe.Problem = "lookahead (?= ) and (?! ) is not supported by RE2 or ripgrep's default engine"
			pe.Fix = "Match the following text as part of the pattern, or search more widely and read the results"
		case strings.HasPrefix(at, "(?<=") || strings.HasPrefix(at, "(?<!"):
			pe.Problem = "lookbehind (?<= ) and (?<! ) is not supported by RE2 or ripgrep's default engine"
			pe.Fix = "Match the preceding text as part of the pattern, or search more widely and read the results"
		case strings.HasPrefix(at, "(?>"):
			pe.Problem = "atomic groups (?> ) are not supported"
			pe.Fix = "Use a plain group ( ) or (?: )"
		default:
			pe.Problem = fmt.Sprintf("%q is not a known group or flag", at)
			pe.Fix = "Supported forms are (?:...), (?P<name>...), (?<name>...) and the flags i, m, s, U as in (?i)"
		}
	case syntax.ErrInvalidNamedCapture:
		if strings.HasPrefix(at, "(?<=") || strings.HasPrefix(at, "(?<!") {
			pe.Problem = "lookbehind (?<= ) and (?<! ) is not supported by RE2 or ripgrep's default engine"
			pe.Fix = "Match the preceding text as part of the pattern, or search more widely and read the results"
			break
		}
		pe.Problem = fmt.Sprintf("the group name in %q is invalid or used twice", at)
		pe.Fix = "Use a plain group (?:...) or a unique name of letters, digits and _"
	case syntax.ErrNestingDepth, syntax.ErrLarge:
		pe.Problem = "it is too large or too deeply nested"
		pe.Fix = "Simplify it, or run several smaller searches"
	case syntax.ErrInvalidUTF8:
		pe.Problem = "it is not valid UTF-8"
		pe.Fix = `Write non-UTF-8 bytes as \x{..} code points`
	default:
		pe.Problem = se.Error()
		pe.Fix = literalFix
	}
	return pe
}

// rgTranslate rewrites a pattern already accepted by Go's parser into the
// Rust regex syntax ripgrep reads, keeping Go's meaning.
func rgTranslate(p string) (string, error) {
	var b strings.Builder
	inClass := false
	classStart := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				b.WriteString(`\\`)
				i++
				continue
			}
			n := p[i+1]
			switch {
			case n == 'Q':
				body := p[i+2:]
				end := strings.Index(body, `\E`)
				if end >= 0 {
					body = body[:end]
				}
				for _, r := range body {
					writeRustLiteral(&b, r, inClass)
				}
				if end >= 0 {
					i += 2 + end + 2
				} else {
					i = len(p)
				}
				continue
			case strings.IndexByte("dws", n) >= 0:
				b.WriteString(asciiPerl(n, inClass))
			case strings.IndexByte("DWS", n) >= 0:
				if inClass {
					return "", &PatternError{Pattern: p,
						Problem: fmt.Sprintf(`\%c inside [...] does not mean the same in RE2 and ripgrep's engine`, n),
						Fix:     `Write a negated class instead, such as [^0-9] for \D, [^0-9A-Za-z_] for \W, [^ \t\f\r] for \S`}
				}
				b.WriteString(asciiPerl(n, false))
			case n == 'b' || n == 'B':
				b.WriteString(`(?-u:\` + string(n) + `)`)
			case n >= '0' && n <= '7':
				j := i + 1
				for j < len(p) && j < i+4 && p[j] >= '0' && p[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(p[i+1:j], 8, 32)
				fmt.Fprintf(&b, `\x{%x}`, v)
				i = j
				continue
			case n == 'p' || n == 'P' || n == 'x':
				j := i + 2
				if j < len(p) && p[j] == '{' {
					if end := strings.IndexByte(p[j:], '}'); end >= 0 {
						j += end + 1
					}
				} else if n == 'x' {
					j = min(len(p), j+2)
				} else if j < len(p) {
					_, size := utf8.DecodeRuneInString(p[j:])
					j += size
				}
				b.WriteString(p[i:j])
				i = j
				continue
			default:
				b.WriteString(p[i : i+2])
			}
			i += 2
			continue
		}
		if inClass {
			switch {
			case c == '[' && strings.HasPrefix(p[i:], "[:") && strings.Contains(p[i+2:], ":]"):
				end := strings.Index(p[i+2:], ":]")
				b.WriteString(p[i : i+2+end+2])
				i += 2 + end + 2
				continue
			case c == ']' && i > classStart:
				inClass = false
				b.WriteByte(']')
			case c == '[' || c == '&' || c == '~':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '-' && i+1 < len(p) && p[i+1] == '-':
				return "", &PatternError{Pattern: p, Problem: "-- inside [...] does not mean the same in RE2 and ripgrep's engine",
					Fix: `Escape a literal dash as \- or put it first or last in the class`}
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		switch c {
		case '[':
			inClass = true
			b.WriteByte('[')
			i++
			if i < len(p) && p[i] == '^' {
				b.WriteByte('^')
				i++
			}
			if i < len(p) && p[i] == ']' {
				b.WriteString(`\]`)
				i++
			}
			classStart = i
			continue
		case '{':
			if repeatRE.MatchString(p[i:]) {
				end := strings.IndexByte(p[i:], '}')
				b.WriteString(p[i : i+end+1])
				i += end + 1
				continue
			}
			b.WriteString(`\{`)
		case '}':
			b.WriteString(`\}`)
		case '(':
			if strings.HasPrefix(p[i:], "(?<") && !strings.HasPrefix(p[i:], "(?<=") && !strings.HasPrefix(p[i:], "(?<!") {
				b.WriteString("(?P<")
				i += 3
				continue
			}
			b.WriteByte('(')
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String(), nil
}

// repeatRE matches a counted repetition as Go's parser reads one.
var repeatRE = regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}`)

// asciiPerl spells Go's ASCII Perl class \c for Rust.
func asciiPerl(c byte, inClass bool) string {
	var body string
	switch c | 0x20 {
	case 'd':
		body = `0-9`
	case 'w':
		body = `0-9A-Za-z_`
	case 's':
		body = `\t\x0C\r ` // lines hold no \n, and ripgrep refuses it in a class
	}
	if inClass {
		return body
	}
	if c >= 'A' && c <= 'Z' {
		return "[^" + body + "]"
	}
	return "[" + body + "]"
}

func writeRustLiteral(b *strings.Builder, r rune, inClass bool) {
	if r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
		b.WriteByte('\\')
		b.WriteRune(r)
		return
	}
	if r == ' ' && !inClass {
		b.WriteRune(r)
		return
	}
	if !unicode.IsPrint(r) {
		fmt.Fprintf(b, `\x{%x}`, r)
		return
	}
	b.WriteRune(r)
}

// maxLits bounds how many alternative literals the prefilter tracks.
const maxLits = 16

// required returns literals one of which every match of re contains, and
// whether they must be compared case-insensitively. ok is false when no
// useful set is known.
func required(re *syntax.Regexp) (lits []string, fold, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if re.Flags&syntax.FoldCase != 0 {
			s = foldSafe(re.Rune)
			return []string{s}, true, s != ""
		}
		return []string{s}, false, s != ""
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best := -1
		for _, sub := range re.Sub {
			l, f, k := required(sub)
			if !k {
				continue
			}
			if score := minLen(l); score > best {
				best, lits, fold, ok = score, l, f, true
			}
		}
		return lits, fold, ok
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, f, k := required(sub)
			if !k {
				return nil, false, false
			}
			lits = append(lits, l...)
			fold = fold || f
		}
		if len(lits) > maxLits {
			return nil, false, false
		}
		return lits, fold, true
	}
	return nil, false, false
}

func minLen(lits []string) int {
	m := -1
	for _, l := range lits {
		if m < 0 || len(l) < m {
			m = len(l)
		}
	}
	return m
}

// foldSafe returns the longest run of runes whose case variants are all
// ASCII, so that an ASCII case-insensitive search finds every variant.
func foldSafe(runes []rune) string {
	var best, cur []rune
	for _, r := range runes {
		if asciiFoldOnly(r) {
			cur = append(cur, r)
			if len(cur) > len(best) {
				best = append(best[:0], cur...)
			}
			continue
		}
		cur = cur[:0]
	}
	return string(best)
}

func asciiFoldOnly(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
