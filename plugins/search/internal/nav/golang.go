package nav

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"strings"
)

// GoOutline returns the top-level definitions of a Go source file, with
// struct fields and interface methods under their type.
func GoOutline(path, shown string, src []byte) ([]Symbol, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if f == nil {
		return nil, fmt.Errorf("parse %s: %w", shown, err)
	}
	var out []Symbol
	add := func(name *ast.Ident, kind, scope, sig string, end token.Pos) {
		if name == nil || name.Name == "_" {
			return
		}
		s := Symbol{Name: name.Name, Kind: kind, Path: shown, Line: fset.Position(name.Pos()).Line, Scope: scope,
			Signature: sig, Source: "go/parser"}
		if end.IsValid() {
			s.EndLine = fset.Position(end).Line
		}
		out = append(out, s)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			kind, scope := "func", ""
			if d.Recv != nil && len(d.Recv.List) > 0 {
				kind, scope = "method", RecvTypeName(d.Recv.List[0].Type)
			}
			add(d.Name, kind, scope, funcSignature(fset, d), d.End())
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					kind := "type"
					switch t := sp.Type.(type) {
					case *ast.StructType:
						kind = "struct"
						addFields(add, sp.Name.Name, t.Fields, "field")
					case *ast.InterfaceType:
						kind = "interface"
						addFields(add, sp.Name.Name, t.Methods, "method")
					}
					add(sp.Name, kind, "", typeSignature(fset, sp), sp.End())
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range sp.Names {
						add(n, kind, "", "", token.NoPos)
					}
				}
			}
		}
	}
	sortSymbols(out)
	return out, nil
}

func addFields(add func(*ast.Ident, string, string, string, token.Pos), scope string, fields *ast.FieldList, kind string) {
	if fields == nil {
		return
	}
	for _, fl := range fields.List {
		for _, n := range fl.Names {
			add(n, kind, scope, "", token.NoPos)
		}
		if len(fl.Names) == 0 { // an embedded type
			if id := embeddedIdent(fl.Type); id != nil {
				add(id, "embedded", scope, "", token.NoPos)
			}
		}
	}
}

func embeddedIdent(e ast.Expr) *ast.Ident {
	switch t := e.(type) {
	case *ast.Ident:
		return t
	case *ast.StarExpr:
		return embeddedIdent(t.X)
	case *ast.SelectorExpr:
		return t.Sel
	case *ast.IndexExpr:
		return embeddedIdent(t.X)
	case *ast.IndexListExpr:
		return embeddedIdent(t.X)
	}
	return nil
}

// RecvTypeName returns the type name of a method receiver: T for t T, *T
// and T[P].
func RecvTypeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return RecvTypeName(t.X)
	case *ast.IndexExpr:
		return RecvTypeName(t.X)
	case *ast.IndexListExpr:
		return RecvTypeName(t.X)
	case *ast.ParenExpr:
		return RecvTypeName(t.X)
	}
	return ""
}

// funcSignature prints a function's declaration line without its body.
func funcSignature(fset *token.FileSet, d *ast.FuncDecl) string {
	c := *d
	c.Body, c.Doc = nil, nil
	return oneLine(fset, &c)
}

func typeSignature(fset *token.FileSet, sp *ast.TypeSpec) string {
	switch sp.Type.(type) {
	case *ast.StructType:
		return "type " + sp.Name.Name + typeParams(fset, sp) + " struct"
	case *ast.InterfaceType:
		return "type " + sp.Name.Name + typeParams(fset, sp) + " interface"
	}
	c := *sp
	c.Doc, c.Comment = nil, nil
	return "type " + oneLine(fset, &c)
}

func typeParams(fset *token.FileSet, sp *ast.TypeSpec) string {
	if sp.TypeParams == nil {
		return ""
	}
	return "[" + strings.TrimSuffix(strings.TrimPrefix(oneLine(fset, sp.TypeParams), "["), "]") + "]"
}

func oneLine(fset *token.FileSet, node any) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, node); err != nil {
		return ""
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 200 {
		s = s[:200] + " …"
	}
	return s
}
