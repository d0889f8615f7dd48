package nav

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNoSuchFunc is returned when a file declares no function by that name.
var ErrNoSuchFunc = errors.New("no such function in the file")

// Callee is a function that a Go function calls.
type Callee struct {
	// Name is pkg.Func, (pkg.T).Method or (*pkg.T).Method when resolved;
	// the call expression as written otherwise.
	Name string `json:"name"`
	// Line is the first call's line; Calls counts the calls.
	Line  int `json:"line"`
	Calls int `json:"calls"`
}

// CalleeResult is what one Go function calls.
type CalleeResult struct {
	Function  string   `json:"function"`
	Signature string   `json:"signature"`
	Path      string   `json:"path"`
	Line      int      `json:"line"`
	EndLine   int      `json:"end_line"`
	Resolved  bool     `json:"resolved"`
	Callees   []Callee `json:"callees"`
	// CheckFailed says why the Go type checker's process gave no answer;
	// the calls are then as written.
	CheckFailed string `json:"type_check_failed,omitempty"`
}

// Callees returns the calls made by the function or method symbol
// (Name, T.Name, (T).Name or (*T).Name) declared in the Go file abs,
// resolved with go/types when its package type-checks. Built-in functions
// and type conversions are left out. Under a sandbox the type checker runs
// in the Go loader, inside it (see loader.go); when the loader fails, the
// calls are as written and CheckFailed says why.
func (f *Finder) Callees(ctx context.Context, abs, symbol string) (*CalleeResult, error) {
	if !inLoader(ctx) {
		return f.callees(ctx, abs, symbol, true)
	}
	res, err := f.callees(ctx, abs, symbol, false)
	if err != nil || res.Function == "" {
		return res, err
	}
	if mod := moduleRoot(filepath.Dir(abs)); mod == "" || f.moduleRefusal(mod) != "" {
		return res, nil
	}
	a, err := f.runLoader(ctx, &goQuery{Base: f.Base, Roots: f.Roots, Callees: &calleesQuery{File: abs, Symbol: symbol}})
	switch {
	case err != nil:
		res.CheckFailed = err.Error()
	case a.Callees == nil:
		res.CheckFailed = "the Go type checker gave no answer for " + res.Function
	default:
		return a.Callees, nil
	}
	return res, nil
}

// callees is Callees in this process; resolve false leaves the calls as
// written.
func (f *Finder) callees(ctx context.Context, abs, symbol string, resolve bool) (*CalleeResult, error) {
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, abs, src, parser.SkipObjectResolution)
	if file == nil {
		return nil, fmt.Errorf("parse %s: %w", f.Shown(abs), err)
	}
	decl, names := findFunc(file, symbol)
	if decl == nil {
		return nil, fmt.Errorf("%s declares no function %q (it declares: %s): %w", f.Shown(abs), symbol, strings.Join(names, ", "), ErrNoSuchFunc)
	}
	line := fset.Position(decl.Pos()).Line
	res := &CalleeResult{Function: FuncDeclName(decl), Signature: funcSignature(fset, decl), Path: f.Shown(abs),
		Line: line, EndLine: fset.Position(decl.End()).Line}

	var info *types.Info
	if mod := moduleRoot(filepath.Dir(abs)); resolve && mod != "" && f.moduleRefusal(mod) == "" {
		if pkgs, err := loadPackages(ctx, f.loadTimeout(), filepath.Dir(abs), "file="+abs); err == nil {
			for _, p := range pkgs {
				if len(p.Errors) > 0 || p.TypesInfo == nil {
					continue
				}
				for i, sf := range p.Syntax {
					if p.CompiledGoFiles[i] != abs {
						continue
					}
					if d, _ := findFunc(sf, symbol); d != nil && p.Fset.Position(d.Pos()).Line == line {
						decl, fset, info = d, p.Fset, p.TypesInfo
					}
				}
				if info != nil {
					break
				}
			}
		}
	}
	res.Resolved = info != nil
	if decl.Body == nil {
		return res, nil
	}
	byName := map[string]*Callee{}
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name, keep := calleeName(call, info)
		if !keep {
			return true
		}
		c := byName[name]
		if c == nil {
			c = &Callee{Name: name, Line: fset.Position(call.Pos()).Line}
			byName[name] = c
		}
		c.Calls++
		return true
	})
	for _, c := range byName {
		res.Callees = append(res.Callees, *c)
	}
	slices.SortFunc(res.Callees, func(a, b Callee) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Name, b.Name)
	})
	return res, nil
}

// findFunc returns the declaration matching symbol and, when there is
// none, the names of the functions the file declares.
func findFunc(file *ast.File, symbol string) (*ast.FuncDecl, []string) {
	want := strings.NewReplacer("(", "", ")", "", "*", "").Replace(symbol)
	scope, name, dotted := cutLastDot(want)
	var names []string
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		names = append(names, FuncDeclName(fd))
		recv := ""
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			recv = RecvTypeName(fd.Recv.List[0].Type)
		}
		if dotted && fd.Name.Name == name && recv == scope {
			return fd, nil
		}
		if !dotted && fd.Name.Name == want {
			return fd, nil
		}
	}
	return nil, names
}

// calleeName names what call calls; keep is false for built-ins and
// conversions.
func calleeName(call *ast.CallExpr, info *types.Info) (string, bool) {
	fun := ast.Unparen(call.Fun)
	for {
		switch e := fun.(type) {
		case *ast.IndexExpr:
			fun = e.X
			continue
		case *ast.IndexListExpr:
			fun = e.X
			continue
		}
		break
	}
	var id *ast.Ident
	switch e := fun.(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	case *ast.FuncLit:
		return "func literal", true
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return "", false
	}
	if info != nil && id != nil {
		switch o := info.Uses[id].(type) {
		case *types.Func:
			return funcName(o), true
		case *types.Builtin, *types.TypeName:
			return "", false
		case *types.Var:
			return types.ExprString(fun) + " (func value)", true
		}
	}
	if id != nil && info == nil && isBuiltin(id.Name) && fun == ast.Expr(id) {
		return "", false
	}
	return types.ExprString(fun), true
}

func isBuiltin(name string) bool {
	return types.Universe.Lookup(name) != nil
}

// funcName is pkg.Func, (pkg.T).Method or (*pkg.T).Method.
func funcName(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		if fn.Pkg() == nil {
			return fn.Name()
		}
		return fn.Pkg().Name() + "." + fn.Name()
	}
	t := sig.Recv().Type()
	star := ""
	if p, ok := t.(*types.Pointer); ok {
		star, t = "*", p.Elem()
	}
	tn := types.TypeString(t, func(p *types.Package) string { return p.Name() })
	if i := strings.IndexByte(tn, '['); i >= 0 {
		tn = tn[:i]
	}
	return "(" + star + tn + ")." + fn.Name()
}
