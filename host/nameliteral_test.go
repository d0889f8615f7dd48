package host_test

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/toolspec"
)

// allowDirective on a line lets one literal equal a tool name for another
// meaning (a program named grep, say); the reason follows it.
const allowDirective = "//yagent:not-a-tool-name"

const modulePath = "github.com/yagent/yagent"

// allowed are the places where host code may decide by a tool's name: the
// host-native tools the surface itself implements. Each entry must match at
// least once, so a stale one fails the test.
var allowed = []struct{ file, fn, name, why string }{
	{"host/surface/surface.go", "assemble", toolspec.LoadTool,
		"deferred mode belongs to the surface (docs/ARCHITECTURE.md#core-rules §4): it drops a load_tool handed in and adds its own"},
	{"host/surface/surface.go", "assemble", toolspec.AskUserForHelp,
		"-Y removes ask_user_for_help by definition: nobody is there to answer it"},
	{"host/surface/surface.go", "LoadTools", toolspec.LoadTool,
		"load_tool does not load itself: the surface serves it whenever deferred mode is on"},
}

// TestNoToolNameDispatchOutsideRegistry fails when Go code in host/, call/ or
// cmd/, outside call/toolspec, decides by a tool's name: the registry is the
// one place tool names are written, and nothing dispatches on them
// (docs/ARCHITECTURE.md#core-rules §1, §2). It flags a static tool name or
// name prefix, spelled as a literal or as a constant (folded through named
// constants, toolspec's included), compared with == or !=, used as a switch
// case, passed to a strings function, written as a map literal's key or a
// slice literal's element (a name table) or used as an index; and, as the
// check always did, any string literal that is a static tool name. cmd/ is
// checked too: the rule (docs/ARCHITECTURE.md#core-rules §1) is aimed at the
// agent loop, and the CLI is where a front would dispatch.
func TestNoToolNameDispatchOutsideRegistry(t *testing.T) {
	t.Parallel()
	words := toolNameWords(t)
	ld := newLoader(t)
	used := make([]bool, len(allowed))
	checked := map[string]bool{}
	for _, root := range []string{".", filepath.Join("..", "call"), filepath.Join("..", "cmd")} {
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if d.Name() == "testdata" || filepath.ToSlash(path) == "../call/toolspec" {
				return filepath.SkipDir
			}
			for _, f := range ld.check(t, path, words) {
				if f.form == "" {
					checked[f.file] = true // one per file
					continue
				}
				if i := allowIndex(f); i >= 0 {
					used[i] = true
					continue
				}
				t.Errorf("%s", f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Where the loop calls tools and where the CLI names them: a walk that
	// missed them would be blind where it matters.
	for _, f := range []string{"host/surface/surface.go", "host/mcpserver/server.go", "call/adapter/adapter.go", "cmd/yagent/call.go"} {
		if !checked[f] {
			t.Errorf("%s was not checked (%d files were); the check would be blind there", f, len(checked))
		}
	}
	for i, u := range used {
		if !u {
			a := allowed[i]
			t.Errorf("allow-list entry %s %s %q matches nothing; remove it", a.file, a.fn, a.name)
		}
	}
}

// TestNameCheckCatchesEveryForm runs the check on a fixture whose lines say
// what must be flagged there ("// want: FORM"), so each form is known to be
// caught and each allowed use known to pass.
func TestNameCheckCatchesEveryForm(t *testing.T) {
	t.Parallel()
	words := toolNameWords(t)
	dir := filepath.Join("testdata", "namecheck")
	want := map[string]bool{}
	src, err := os.ReadFile(filepath.Join(dir, "fixture.go"))
	if err != nil {
		t.Fatal(err)
	}
	wantRE := regexp.MustCompile(`// want: (.+)$`)
	for i, line := range strings.Split(string(src), "\n") {
		if m := wantRE.FindStringSubmatch(line); m != nil {
			for _, form := range strings.Split(m[1], ", ") {
				want[fmt.Sprintf("%d %s", i+1, form)] = true
			}
		}
	}
	if len(want) < 8 {
		t.Fatalf("the fixture wants %d findings; it should name every form", len(want))
	}
	got := map[string]bool{}
	for _, f := range newLoader(t).check(t, dir, words) {
		if f.form != "" {
			got[fmt.Sprintf("%d %s", f.pos.Line, f.form)] = true
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("fixture line %s: not flagged", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("fixture line %s: flagged, but the fixture does not want it", k)
		}
	}
}

// toolNameWords maps every static tool name and every name prefix to what
// it is. A prefix is a static name cut after an underscore that two or more
// names share ("browser_", "shell_") or that is the name's family and an
// underscore: a prefix that picks out a group of tools.
func toolNameWords(t *testing.T) map[string]string {
	t.Helper()
	words := map[string]string{}
	starts := map[string]int{}    // prefix: how many names start with it
	ofFamily := map[string]bool{} // prefixes that are a name's family and _
	for _, s := range toolspec.All() {
		words[s.Name] = "static tool name"
		for i, r := range s.Name {
			if r == '_' {
				p := s.Name[:i+1]
				starts[p]++
				ofFamily[p] = ofFamily[p] || p == s.Family+"_"
			}
		}
	}
	prefixes := 0
	for p, n := range starts {
		if (n >= 2 || ofFamily[p]) && words[p] == "" {
			words[p] = "tool-name prefix"
			prefixes++
		}
	}
	// The issue's own example must be among them, or the derivation broke.
	if prefixes == 0 || words["browser_"] == "" {
		t.Fatalf("derived %d prefixes from the registry, browser_ among them: %v; the check would be blind to prefixes", prefixes, words["browser_"] != "")
	}
	return words
}

type finding struct {
	pos  token.Position
	file string // slash path from the repository root
	fn   string // enclosing function, "" at package level
	form string // "" for a file checked with nothing found
	word string
	kind string
}

func (f finding) String() string {
	where := "at package level"
	if f.fn != "" {
		where = "in " + f.fn
	}
	how := "decide by the spec (toolspec.Lookup: Effect, Roles, Serial, Family), not by the name"
	if f.form == "literal" {
		how = "take the name from the registry or the spec, or mark another meaning with " + allowDirective
	}
	return fmt.Sprintf("%s: %s %q (a %s) %s; %s", f.pos, f.form, f.word, f.kind, where, how)
}

func allowIndex(f finding) int {
	for i, a := range allowed {
		if a.file == f.file && a.fn == f.fn && a.name == f.word {
			return i
		}
	}
	return -1
}

// loader type-checks the module's packages from source, every file whatever
// its build tags, so constants fold across packages. Packages outside the
// module are empty stand-ins: only their names matter (strings.HasPrefix is
// known by its package), and the type errors that leaves are ignored.
type loader struct {
	root string // the repository root
	fset *token.FileSet
	pkgs map[string]*loaded
}

type loaded struct {
	pkg   *types.Package
	files []*ast.File
	info  *types.Info
}

func newLoader(t *testing.T) *loader {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root is not %s: %v", root, err)
	}
	return &loader{root: root, fset: token.NewFileSet(), pkgs: map[string]*loaded{}}
}

func (l *loader) Import(path string) (*types.Package, error) {
	if rel, ok := strings.CutPrefix(path, modulePath+"/"); ok {
		p, err := l.load(filepath.Join(l.root, filepath.FromSlash(rel)), path)
		if err != nil {
			return nil, err
		}
		return p.pkg, nil
	}
	name := pathpkg.Base(path)
	if len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = pathpkg.Base(pathpkg.Dir(path))
	}
	p := types.NewPackage(path, name)
	p.MarkComplete()
	return p, nil
}

// load parses the non-test files of dir and type-checks them as path.
func (l *loader) load(dir, path string) (*loaded, error) {
	if p, ok := l.pkgs[path]; ok {
		if p == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return p, nil
	}
	l.pkgs[path] = nil
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byName := map[string][]*ast.File{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		byName[f.Name.Name] = append(byName[f.Name.Name], f)
	}
	var files []*ast.File
	for _, fs := range byName { // a stray //go:build ignore file is the smaller group
		if len(fs) > len(files) {
			files = fs
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: l, Error: func(error) {}, FakeImportC: true}
	pkg, _ := conf.Check(path, l.fset, files, info)
	p := &loaded{pkg: pkg, files: files, info: info}
	l.pkgs[path] = p
	return p, nil
}

// check returns the findings in the package in dir, and one empty finding
// per file checked.
func (l *loader) check(t *testing.T, dir string, words map[string]string) []finding {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(l.root, abs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.load(abs, modulePath+"/"+filepath.ToSlash(rel))
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	var out []finding
	for _, f := range p.files {
		out = append(out, l.checkFile(p, f, words)...)
	}
	return out
}

func (l *loader) checkFile(p *loaded, f *ast.File, words map[string]string) []finding {
	name := l.fset.Position(f.Pos()).Filename
	rel, _ := filepath.Rel(l.root, name)
	file := filepath.ToSlash(rel)
	quiet := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, allowDirective) {
				quiet[l.fset.Position(c.Pos()).Line] = true
			}
		}
	}
	out := []finding{{file: file}}
	flagged := map[token.Pos]bool{}
	flag := func(fn, form string, e ast.Expr) {
		s, ok := constString(p.info, e)
		if !ok || words[s] == "" {
			return
		}
		pos := l.fset.Position(e.Pos())
		if quiet[pos.Line] || flagged[e.Pos()] {
			return
		}
		flagged[e.Pos()] = true
		out = append(out, finding{pos: pos, file: file, fn: fn, form: form, word: s, kind: words[s]})
	}
	for _, d := range f.Decls {
		fn := ""
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					flag(fn, n.Op.String(), n.X)
					flag(fn, n.Op.String(), n.Y)
				}
			case *ast.SwitchStmt:
				if n.Tag != nil {
					for _, s := range n.Body.List {
						for _, e := range s.(*ast.CaseClause).List {
							flag(fn, "case", e)
						}
					}
				}
			case *ast.CallExpr:
				if isStringsFunc(p.info, n.Fun) {
					for _, a := range n.Args {
						flag(fn, "strings call", a)
					}
				}
			case *ast.CompositeLit:
				if isMapLit(p.info, n) {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							flag(fn, "map key", kv.Key)
						}
					}
				} else if tv, ok := p.info.Types[n]; ok && tv.Type != nil {
					switch tv.Type.Underlying().(type) {
					case *types.Slice, *types.Array:
						for _, e := range n.Elts {
							if kv, ok := e.(*ast.KeyValueExpr); ok {
								e = kv.Value
							}
							flag(fn, "list element", e)
						}
					}
				}
			case *ast.IndexExpr:
				flag(fn, "index", n.Index)
			}
			return true
		})
		// The literal rule the check began with: a static name spelled
		// out anywhere else, in whatever role.
		ast.Inspect(d, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && words[s] == "static tool name" {
					flag(fn, "literal", lit)
				}
			}
			return true
		})
	}
	return out
}

// constString is the string value of e when it is a constant: a literal,
// a named constant or an expression folding them.
func constString(info *types.Info, e ast.Expr) (string, bool) {
	if tv, ok := info.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value), true
	}
	if lit, ok := ast.Unparen(e).(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	}
	return "", false
}

// isStringsFunc says whether fun names a function of package strings.
func isStringsFunc(info *types.Info, fun ast.Expr) bool {
	sel, ok := ast.Unparen(fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	pn, ok := info.Uses[id].(*types.PkgName)
	return ok && pn.Imported().Path() == "strings"
}

func isMapLit(info *types.Info, lit *ast.CompositeLit) bool {
	if tv, ok := info.Types[lit]; ok && tv.Type != nil {
		_, isMap := tv.Type.Underlying().(*types.Map)
		return isMap
	}
	_, isMap := lit.Type.(*ast.MapType)
	return isMap
}
