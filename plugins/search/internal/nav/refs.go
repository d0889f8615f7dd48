package nav

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/yagent/yagent/plugins/search/internal/grep"
)

// LoadTimeout bounds the type-checking of the packages a reference search
// touches; past it, references fall back to word matches. A variable so
// that tests can shorten it.
var LoadTimeout = 2 * time.Minute

// Ref is one use of a name.
type Ref struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
	// In is the enclosing function, for Go.
	In string `json:"in,omitempty"`
	// Call is set when the use is a call of the function.
	Call bool `json:"call,omitempty"`
}

// Caller is a function that calls the one looked up.
type Caller struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Calls int    `json:"calls"`
}

// RefGroup gathers the uses of one object (Go, resolved) or the word
// matches that could not be resolved.
type RefGroup struct {
	// Object describes the definition, such as
	// "func shapes.TotalArea(ss []shapes.Shape) float64"; empty for word
	// matches.
	Object  string   `json:"object,omitempty"`
	Kind    string   `json:"kind"`
	Defined string   `json:"defined,omitempty"`
	Refs    []Ref    `json:"refs"`
	Callers []Caller `json:"callers,omitempty"`
}

// RefResult is the answer of FindReferences.
type RefResult struct {
	Groups []RefGroup `json:"groups"`
	// Definitions counts the definition lines left out of the word matches.
	Definitions int `json:"definitions_excluded"`
	// Unresolved lists Go packages that did not type-check, whose uses are
	// word matches.
	Unresolved []string `json:"unresolved_packages,omitempty"`
	// Truncated is set when the word search hit its cap.
	Truncated bool `json:"truncated"`
	// Skipped names the Go modules not type-checked because they would
	// load source from outside the workspace, and why.
	Skipped []string `json:"skipped_modules,omitempty"`
	// CheckFailed says why the Go type checker's process gave no answer
	// (it crashed, timed out, or the call ended); the packages it was to
	// check are in Unresolved.
	CheckFailed string `json:"type_check_failed,omitempty"`
}

// maxWordMatches caps the word matches a reference search reads.
const maxWordMatches = 20000

// FindReferences returns the uses of name under root. name is an
// identifier, or Type.Name to keep only the methods or fields of Type
// (when resolved).
func (f *Finder) FindReferences(ctx context.Context, root, name string) (*RefResult, error) {
	ident, scope := name, ""
	if before, after, ok := cutLastDot(name); ok {
		ident, scope = after, before
	}
	if !regexp.MustCompile(`^[\p{L}_][\p{L}\p{Nd}_$]*$`).MatchString(ident) {
		return nil, fmt.Errorf("%q is not an identifier: %w", ident, ErrNotIdentifier)
	}
	engine := f.Grep
	if engine == nil {
		engine = &grep.Engine{}
	}
	words, err := engine.Search(ctx, grep.Query{Root: root, Base: f.Base, Pattern: `\b` + regexp.QuoteMeta(ident) + `\b`, MaxResults: maxWordMatches})
	if err != nil {
		return nil, err
	}
	res := &RefResult{Truncated: words.Truncated}
	// Word matches by absolute file.
	byFile := map[string][]grep.Line{}
	var files []string
	for _, l := range words.Lines {
		abs := l.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(f.Base, filepath.FromSlash(abs))
		}
		if _, ok := byFile[abs]; !ok {
			files = append(files, abs)
		}
		byFile[abs] = append(byFile[abs], l)
	}
	slices.Sort(files)

	resolved := map[string]bool{}
	var goFiles []string
	for _, file := range files {
		if strings.HasSuffix(file, ".go") {
			goFiles = append(goFiles, file)
		}
	}
	if len(goFiles) > 0 {
		groups, done, unresolved, skipped, failed := f.resolveGo(ctx, goFiles, ident, scope, byFile)
		res.Groups = append(res.Groups, groups...)
		res.Unresolved, res.Skipped, res.CheckFailed = unresolved, skipped, failed
		for file := range done {
			resolved[file] = true
		}
	}

	// Word matches in the rest, minus definition lines.
	words2 := RefGroup{Kind: "word match"}
	for _, file := range files {
		if resolved[file] {
			continue
		}
		defs := map[int]bool{}
		if ss, err := f.Outline(ctx, file); err == nil {
			for _, s := range ss {
				if s.Name == ident {
					defs[s.Line] = true
				}
			}
		}
		for _, l := range byFile[file] {
			if defs[l.Line] {
				res.Definitions++
				continue
			}
			words2.Refs = append(words2.Refs, Ref{Path: l.Path, Line: l.Line, Text: strings.TrimSpace(l.Text)})
		}
	}
	if len(words2.Refs) > 0 {
		res.Groups = append(res.Groups, words2)
	}
	return res, nil
}

// ErrNotIdentifier is returned for a name that cannot be an identifier.
var ErrNotIdentifier = errors.New("not an identifier")

// resolveGo type-checks the packages of goFiles and returns the uses of
// ident grouped by object, the files it resolved, the packages that did
// not type-check, the modules skipped because they would load source from
// outside the roots, and why the type checker failed as a whole ("" when
// it ran). Under a sandbox the type checker runs in a child process inside
// it (see loader.go): go list runs cgo and the C compiler on what the
// workspace says, so they may read only what a command of the call could.
func (f *Finder) resolveGo(ctx context.Context, goFiles []string, ident, scope string, byFile map[string][]grep.Line) ([]RefGroup, map[string]bool, []string, []string, string) {
	var skipped []string
	// Group the files' folders by module.
	mods := map[string][]string{}
	for _, file := range goFiles {
		dir := filepath.Dir(file)
		mod := moduleRoot(dir)
		if mod == "" {
			continue
		}
		pat := "./" + filepath.ToSlash(mustRel(mod, dir))
		if !slices.Contains(mods[mod], pat) {
			mods[mod] = append(mods[mod], pat)
		}
	}
	q := goQuery{Base: f.Base, Roots: f.Roots, Ident: ident, Scope: scope, Lines: byFile}
	for _, mod := range slices.Sorted(maps.Keys(mods)) {
		pats := mods[mod]
		slices.Sort(pats)
		if why := f.moduleRefusal(mod); why != "" {
			skipped = append(skipped, why)
			continue
		}
		q.Modules = append(q.Modules, goModule{Dir: mod, Patterns: pats})
	}
	slices.Sort(skipped)
	skipped = slices.Compact(skipped)
	if len(q.Modules) == 0 {
		return []RefGroup{}, map[string]bool{}, nil, skipped, ""
	}
	var a *goAnswer
	failed := ""
	if inLoader(ctx) {
		var err error
		if a, err = f.checkInChild(ctx, &q); err != nil {
			// The uses stay word matches; the packages are named.
			failed = err.Error()
			a = &goAnswer{}
			for _, m := range q.Modules {
				a.Unresolved = append(a.Unresolved, m.Patterns...)
			}
			slices.Sort(a.Unresolved)
			a.Unresolved = slices.Compact(a.Unresolved)
		}
	} else {
		a = f.check(ctx, &q)
	}
	done := make(map[string]bool, len(a.Done))
	for _, file := range a.Done {
		done[file] = true
	}
	return a.Groups, done, a.Unresolved, skipped, failed
}

// check type-checks q's modules in this process and finds the uses of
// q.Ident in the files q.Lines holds.
func (f *Finder) check(ctx context.Context, q *goQuery) *goAnswer {
	done := map[string]bool{}
	var unresolved []string
	type objKey struct {
		pos  token.Position
		name string
	}
	ident, scope, byFile := q.Ident, q.Scope, q.Lines
	groups := map[objKey]*RefGroup{}
	var order []objKey
	seen := map[string]bool{} // path:line:col of a use already counted
	callers := map[objKey]map[string]*Caller{}
	lineText := func(abs string, line int) string {
		for _, l := range byFile[abs] {
			if l.Line == line {
				return strings.TrimSpace(l.Text)
			}
		}
		return ""
	}

	for _, m := range q.Modules {
		pkgs, err := loadPackages(ctx, f.loadTimeout(), m.Dir, m.Patterns...)
		if err != nil {
			unresolved = append(unresolved, m.Patterns...)
			continue
		}
		// A file counts as resolved when some error-free package holds it.
		for _, p := range pkgs {
			if len(p.Errors) > 0 || p.TypesInfo == nil {
				unresolved = append(unresolved, p.PkgPath)
				continue
			}
			for i, file := range p.Syntax {
				abs := p.CompiledGoFiles[i]
				if _, wanted := byFile[abs]; !wanted {
					continue
				}
				done[abs] = true
				inspectUses(p.Fset, file, p.TypesInfo, ident, func(id *ast.Ident, obj types.Object, encl string, call bool) {
					if scope != "" && !inScope(obj, scope) {
						return
					}
					pos := p.Fset.Position(id.Pos())
					at := fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
					if seen[at] {
						return
					}
					seen[at] = true
					key := objKey{pos: p.Fset.Position(obj.Pos()), name: obj.Name()}
					g, ok := groups[key]
					if !ok {
						g = &RefGroup{Object: describe(obj), Kind: objKind(obj)}
						switch {
						case key.pos.IsValid() && !f.shownDefinition(key.pos.Filename):
							// Loaded from outside the roots after all (a
							// symlinked package): named, never described.
							g.Object = obj.Name() + " (defined outside the workspace; not shown)"
						case key.pos.IsValid():
							g.Defined = fmt.Sprintf("%s:%d", f.Shown(key.pos.Filename), key.pos.Line)
						}
						groups[key] = g
						order = append(order, key)
					}
					shown := f.Shown(abs)
					g.Refs = append(g.Refs, Ref{Path: shown, Line: pos.Line, Text: lineText(abs, pos.Line), In: encl, Call: call})
					if call && encl != "" {
						if callers[key] == nil {
							callers[key] = map[string]*Caller{}
						}
						c := callers[key][encl]
						if c == nil {
							c = &Caller{Name: encl, Path: shown, Line: pos.Line}
							callers[key][encl] = c
						}
						c.Calls++
					}
				})
			}
		}
	}
	// A file that is also in a failed package but resolved elsewhere (a
	// test variant) stays resolved.
	slices.Sort(unresolved)
	unresolved = slices.Compact(unresolved)

	out := make([]RefGroup, 0, len(order))
	for _, k := range order {
		g := groups[k]
		slices.SortFunc(g.Refs, func(a, b Ref) int {
			if a.Path != b.Path {
				return strings.Compare(a.Path, b.Path)
			}
			return a.Line - b.Line
		})
		for _, c := range callers[k] {
			g.Callers = append(g.Callers, *c)
		}
		slices.SortFunc(g.Callers, func(a, b Caller) int {
			if a.Path != b.Path {
				return strings.Compare(a.Path, b.Path)
			}
			return a.Line - b.Line
		})
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b RefGroup) int { return strings.Compare(a.Defined+a.Object, b.Defined+b.Object) })
	return &goAnswer{Groups: out, Done: slices.Sorted(maps.Keys(done)), Unresolved: unresolved}
}

// inspectUses calls fn for every identifier named ident that file uses
// (not defines), with the function it appears in and whether it is called.
func inspectUses(fset *token.FileSet, file *ast.File, info *types.Info, ident string, fn func(*ast.Ident, types.Object, string, bool)) {
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		id, ok := n.(*ast.Ident)
		if !ok || id.Name != ident {
			return true
		}
		obj := info.Uses[id]
		if obj == nil {
			return true
		}
		fn(id, obj, enclosingFunc(stack), isCall(stack))
		return true
	})
}

// enclosingFunc names the innermost function declaration on the stack.
func enclosingFunc(stack []ast.Node) string {
	for i := len(stack) - 1; i >= 0; i-- {
		if d, ok := stack[i].(*ast.FuncDecl); ok {
			return FuncDeclName(d)
		}
	}
	return ""
}

// FuncDeclName is Name for a function and (T).Name or (*T).Name for a
// method.
func FuncDeclName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	star := ""
	if _, ok := t.(*ast.StarExpr); ok {
		star = "*"
	}
	return "(" + star + RecvTypeName(t) + ")." + d.Name.Name
}

// isCall reports whether the identifier on top of the stack is what a call
// expression calls: f(...), x.f(...), f[T](...).
func isCall(stack []ast.Node) bool {
	child := stack[len(stack)-1]
	for i := len(stack) - 2; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.SelectorExpr:
			if p.Sel != child {
				return false
			}
		case *ast.IndexExpr, *ast.IndexListExpr, *ast.ParenExpr:
		case *ast.CallExpr:
			return p.Fun == child
		default:
			return false
		}
		child = stack[i]
	}
	return false
}

func inScope(obj types.Object, scope string) bool {
	if fn, ok := obj.(*types.Func); ok {
		if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
			return recvName(sig.Recv().Type()) == scope
		}
		return false
	}
	if v, ok := obj.(*types.Var); ok && v.IsField() {
		return true // the struct is not known from the field alone
	}
	return false
}

func recvName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

func describe(obj types.Object) string {
	return types.ObjectString(obj, func(p *types.Package) string { return p.Name() })
}

func objKind(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil {
			return "method"
		}
		return "func"
	case *types.Var:
		if o.IsField() {
			return "field"
		}
		return "var"
	case *types.Const:
		return "const"
	case *types.TypeName:
		return "type"
	case *types.PkgName:
		return "package"
	case *types.Label:
		return "label"
	}
	return "object"
}

// loadPackages type-checks the packages matching patterns in the module at
// dir, with their tests, within timeout.
func loadPackages(ctx context.Context, timeout time.Duration, dir string, patterns ...string) ([]*packages.Package, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := &packages.Config{
		Context: ctx,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedModule,
		Dir:   dir,
		Tests: true,
		// What a go.mod names never reaches the network or picks the
		// toolchain that runs: no downloads, the local toolchain only.
		Env: append(os.Environ(), "GOPACKAGESDRIVER=off", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off"),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(patterns, " "), err)
	}
	return pkgs, nil
}

// moduleRoot returns the nearest folder at or above dir holding go.mod.
func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

func mustRel(base, target string) string {
	rel, err := filepath.Rel(base, target)
	if err != nil {
		return "."
	}
	return rel
}
