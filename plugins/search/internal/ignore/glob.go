package ignore

import (
	"fmt"
	"regexp"
	"strings"
)

// Glob is a compiled pattern in gitignore glob syntax, matched against a
// slash-separated path: * and ? never match /, ** as a whole segment spans
// any number of directories, [...] and [!...] are classes, {a,b} are
// alternatives and \ escapes the next character.
type Glob struct {
	src  string
	kind globKind
	lit  string
	re   *regexp.Regexp
}

type globKind int

const (
	globRegexp  globKind = iota
	globLiteral          // the whole path equals lit
	globSuffix           // "*" + lit: a path without / ending in lit
	globPrefix           // lit + "*": a path without / after lit
)

// CompileGlob compiles pattern. It fails on an unclosed { only; an unclosed
// [ is taken literally, as git does.
func CompileGlob(pattern string) (*Glob, error) {
	g := &Glob{src: pattern}
	if !strings.ContainsAny(pattern, `*?[{\`) {
		g.kind, g.lit = globLiteral, pattern
		return g, nil
	}
	if rest, ok := strings.CutPrefix(pattern, "*"); ok && !strings.ContainsAny(rest, `*?[{\/`) {
		g.kind, g.lit = globSuffix, rest
		return g, nil
	}
	if rest, ok := strings.CutSuffix(pattern, "*"); ok && !strings.ContainsAny(rest, `*?[{\/`) {
		g.kind, g.lit = globPrefix, rest
		return g, nil
	}
	expr, err := globToRegexp(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("^" + expr + "$")
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	g.kind, g.re = globRegexp, re
	return g, nil
}

// String returns the pattern g was compiled from.
func (g *Glob) String() string { return g.src }

// Match reports whether path matches the whole glob.
func (g *Glob) Match(path string) bool {
	switch g.kind {
	case globLiteral:
		return path == g.lit
	case globSuffix:
		return strings.HasSuffix(path, g.lit) && !strings.Contains(path[:len(path)-len(g.lit)], "/")
	case globPrefix:
		return strings.HasPrefix(path, g.lit) && !strings.Contains(path[len(g.lit):], "/")
	}
	return g.re.MatchString(path)
}

// globToRegexp translates a glob into an unanchored regular expression.
func globToRegexp(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		switch c {
		case '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			if j-i >= 2 && (i == 0 || p[i-1] == '/') && (j == len(p) || p[j] == '/') {
				if j == len(p) {
					b.WriteString(".*")
					i = j
				} else {
					b.WriteString("(?:.*/)?")
					i = j + 1
				}
				continue
			}
			b.WriteString("[^/]*")
			i = j
		case '?':
			b.WriteString("[^/]")
			i++
		case '[':
			class, n, ok := globClass(p[i:])
			if !ok {
				b.WriteString(`\[`)
				i++
				continue
			}
			b.WriteString(class)
			i += n
		case '{':
			end := matchingBrace(p, i)
			if end < 0 {
				return "", fmt.Errorf("glob %q: '{' at byte %d is never closed; escape it as \\{", p, i)
			}
			alts := SplitTopLevel(p[i+1 : end])
			b.WriteString("(?:")
			for k, alt := range alts {
				if k > 0 {
					b.WriteByte('|')
				}
				sub, err := globToRegexp(alt)
				if err != nil {
					return "", err
				}
				b.WriteString(sub)
			}
			b.WriteByte(')')
			i = end + 1
		case '\\':
			if i+1 < len(p) {
				b.WriteString(regexp.QuoteMeta(p[i+1 : i+2]))
				i += 2
			} else {
				b.WriteString(`\\`)
				i++
			}
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			i++
		}
	}
	return b.String(), nil
}

// globClass translates the class at the start of s ("[...]") and returns
// its length, or ok=false when it is not closed.
func globClass(s string) (string, int, bool) {
	var b strings.Builder
	b.WriteByte('[')
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == ']' && !first:
			b.WriteByte(']')
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			writeClassChar(&b, s[i+1])
			i += 2
		case c == '[' && strings.HasPrefix(s[i:], "[:") && strings.Contains(s[i+2:], ":]"):
			end := strings.Index(s[i+2:], ":]")
			b.WriteString(s[i : i+2+end+2])
			i += 2 + end + 2
		case c == '-':
			b.WriteByte('-')
			i++
		default:
			writeClassChar(&b, c)
			i++
		}
		first = false
	}
	return "", 0, false
}

// writeClassChar writes c as a literal member of a regexp class.
func writeClassChar(b *strings.Builder, c byte) {
	if strings.IndexByte(`\[]^-`, c) >= 0 {
		b.WriteByte('\\')
	}
	b.WriteByte(c)
}

// matchingBrace returns the index of the } closing the { at open, or -1.
func matchingBrace(p string, open int) int {
	depth := 0
	for i := open; i < len(p); i += atomLen(p, i) {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// SplitTopLevel splits s at the commas that stand outside braces, bracket
// classes and escapes: "a,{b,c},[,]" is "a", "{b,c}" and "[,]". It is the
// one splitter of brace alternatives and of comma-separated glob lists.
// Parts are returned as they are, empty ones too ("{a,}" has two
// alternatives). An unclosed { keeps the rest in one part, for CompileGlob
// to report; a } closing nothing and an unclosed [ are plain characters.
func SplitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i += atomLen(s, i) {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// atomLen is the length of the escape or closed bracket class at p[i:],
// 1 for any other byte: braces and commas inside those are not syntax.
func atomLen(p string, i int) int {
	switch p[i] {
	case '\\':
		if i+1 < len(p) {
			return 2
		}
	case '[':
		if _, n, ok := globClass(p[i:]); ok {
			return n
		}
	}
	return 1
}
