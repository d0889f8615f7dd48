package nav

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Symbol is one definition.
type Symbol struct {
	Name string `json:"name"`
	// Kind is a word such as func, method, type, struct, interface, field,
	// const, var (Go), or class, function, method, variable (Python and
	// other ctags languages).
	Kind string `json:"kind"`
	// Path is the file, as shown to the model.
	Path    string `json:"path"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line,omitempty"`
	// Scope is the enclosing type, class or function, if any.
	Scope     string `json:"scope,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Source names the reader: go/parser, ctags or python.
	Source string `json:"source"`
}

// QualifiedName is Scope.Name, or Name without a scope.
func (s Symbol) QualifiedName() string {
	if s.Scope == "" {
		return s.Name
	}
	return s.Scope + "." + s.Name
}

// Matches reports whether s answers a query name: Name, or Scope.Name when
// the query has a dot.
func (s Symbol) Matches(query string) bool {
	if scope, name, ok := cutLastDot(query); ok {
		return s.Name == name && (s.Scope == scope || strings.HasSuffix(s.Scope, "."+scope))
	}
	return s.Name == query
}

func cutLastDot(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || i == len(s)-1 {
		return "", s, false
	}
	return s[:i], s[i+1:], true
}

// sortSymbols orders by path, line, then name.
func sortSymbols(ss []Symbol) {
	slices.SortFunc(ss, func(a, b Symbol) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), strings.Compare(a.Name, b.Name))
	})
}

// ErrNoParser is returned for a file no reader understands.
var ErrNoParser = errors.New("no parser for this kind of file")

// FormatOutline writes the symbols of one file, one per line: the line
// range, then the declaration when known (it names the kind), else the
// kind and name. Members of a type or class are indented; Go methods,
// declared at top level, are not.
func FormatOutline(ss []Symbol) string {
	var b strings.Builder
	for _, s := range ss {
		indent := ""
		if s.Scope != "" && !strings.HasPrefix(s.Signature, "func ") {
			indent = "  "
		}
		lines := fmt.Sprintf("%d", s.Line)
		if s.EndLine > s.Line {
			lines = fmt.Sprintf("%d-%d", s.Line, s.EndLine)
		}
		desc := s.Signature
		if desc == "" || !strings.Contains(desc, s.Name) {
			desc = strings.TrimSpace(s.Kind + " " + s.Name + " " + desc)
		}
		fmt.Fprintf(&b, "%s%-8s %s\n", indent, lines, desc)
	}
	return b.String()
}
