package nav

import (
	"bytes"
	"regexp"
	"strings"
)

var (
	pyDef    = regexp.MustCompile(`^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*(\([^)]*\))?`)
	pyClass  = regexp.MustCompile(`^(\s*)class\s+([A-Za-z_]\w*)`)
	pyAssign = regexp.MustCompile(`^(\s*)([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`)
)

// PythonOutline reads the classes, functions, methods and module or class
// variables of a Python file by indentation, for when ctags is missing. It
// names things the way ctags does, except that methods are "method".
func PythonOutline(shown string, src []byte) []Symbol {
	type frame struct {
		indent int
		name   string
		kind   string
		idx    int // index in out
	}
	var out []Symbol
	var stack []frame
	lines := bytes.Split(src, []byte{'\n'})
	lastCode := 0 // last non-blank, non-comment line seen
	closeTo := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			out[stack[len(stack)-1].idx].EndLine = lastCode
			stack = stack[:len(stack)-1]
		}
	}
	inString := false
	for i, raw := range lines {
		line := strings.TrimRight(string(raw), "\r")
		trimmed := strings.TrimSpace(line)
		if inString {
			if strings.Count(line, `"""`)%2 == 1 || strings.Count(line, `'''`)%2 == 1 {
				inString = false
			}
			lastCode = i + 1
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		closeTo(indent)
		lastCode = i + 1
		if strings.Count(line, `"""`)%2 == 1 || strings.Count(line, `'''`)%2 == 1 {
			inString = true
		}
		scope, scopeKind := "", ""
		if len(stack) > 0 {
			scope, scopeKind = stack[len(stack)-1].name, stack[len(stack)-1].kind
		}
		var sym Symbol
		switch {
		case pyClass.MatchString(line):
			m := pyClass.FindStringSubmatch(line)
			sym = Symbol{Name: m[2], Kind: "class"}
		case pyDef.MatchString(line):
			m := pyDef.FindStringSubmatch(line)
			kind := "function"
			if scopeKind == "class" {
				kind = "method"
			}
			sym = Symbol{Name: m[2], Kind: kind, Signature: m[3]}
		case pyAssign.MatchString(line) && scopeKind != "function":
			m := pyAssign.FindStringSubmatch(line)
			out = append(out, Symbol{Name: m[2], Kind: "variable", Path: shown, Line: i + 1, Scope: scope, Source: "python"})
			continue
		default:
			continue
		}
		sym.Path, sym.Line, sym.Scope, sym.Source = shown, i+1, scope, "python"
		out = append(out, sym)
		stack = append(stack, frame{indent: indent, name: sym.Name, kind: sym.Kind, idx: len(out) - 1})
	}
	closeTo(0)
	sortSymbols(out)
	return out
}
