package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/toolspec"
)

// allowDirective on a line lets one literal equal a tool name for another
// meaning (a program named grep, say); the reason follows it.
const allowDirective = "//yagent:not-a-tool-name"

// TestNoToolNameLiteralsOutsideRegistry fails when Go code in host/ or cmd/,
// outside host/toolspec, spells a static tool name as a string literal: the
// registry is the one place tool names are written, and nothing dispatches
// on them (seed 000 §1, §2). Refer to the toolspec constants, or dispatch on
// Effect and roles.
func TestNoToolNameLiteralsOutsideRegistry(t *testing.T) {
	t.Parallel()
	static := map[string]bool{}
	for _, s := range toolspec.All() {
		static[s.Name] = true
	}
	if len(static) == 0 {
		t.Fatal("the registry is empty; the check would be vacuous")
	}
	checked := 0
	for _, root := range []string{".", filepath.Join("..", "cmd")} {
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || path == "toolspec" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			checked++
			for _, f := range literalsIn(t, path, static) {
				t.Errorf("%s: string literal %q is a static tool name; use the toolspec constant or dispatch on Effect and roles", f.pos, f.lit)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no Go file checked; the check would be vacuous")
	}
}

type finding struct {
	pos token.Position
	lit string
}

func literalsIn(t *testing.T, path string, names map[string]bool) []finding {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	allowed := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, allowDirective) {
				allowed[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	var out []finding
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || !names[s] {
			return true
		}
		pos := fset.Position(lit.Pos())
		if !allowed[pos.Line] {
			out = append(out, finding{pos, s})
		}
		return true
	})
	return out
}
