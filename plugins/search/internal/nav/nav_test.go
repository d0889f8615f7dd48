package nav

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/search/internal/grep"
)

func testdata(t testing.TB, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// ctagsVariants returns the finders to run a case with: without ctags
// always, with ctags when it is installed and not hidden
// (YAGENT_TEST_NO_CTAGS=1 hides it).
func ctagsVariants(t testing.TB, base string) map[string]*Finder {
	out := map[string]*Finder{"no-ctags": {Base: base}}
	if os.Getenv("YAGENT_TEST_NO_CTAGS") != "1" {
		if p, err := exec.LookPath("ctags"); err == nil {
			out["ctags"] = &Finder{Base: base, Ctags: p}
		}
	}
	if len(out) == 1 {
		t.Logf("ctags hidden or missing: running without it only")
	}
	return out
}

func render(ss []Symbol) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.Path + ":" + itoa(s.Line) + "-" + itoa(s.EndLine) + " " + s.Kind + " " + s.QualifiedName() + "\n")
	}
	return b.String()
}

func itoa(n int) string { return strings.TrimSpace(jsonNum(n)) }

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestOutlineGo(t *testing.T) {
	t.Parallel()
	base := testdata(t, "gomod")
	for name, f := range ctagsVariants(t, base) {
		ss, err := f.Outline(context.Background(), filepath.Join(base, "shapes", "shapes.go"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := `shapes/shapes.go:7-9 interface Shape
shapes/shapes.go:8-0 method Shape.Area
shapes/shapes.go:12-14 struct Circle
shapes/shapes.go:13-0 field Circle.R
shapes/shapes.go:17-19 method Circle.Area
shapes/shapes.go:22-24 struct Square
shapes/shapes.go:23-0 field Square.Side
shapes/shapes.go:27-29 method Square.Area
shapes/shapes.go:32-38 func TotalArea
shapes/shapes.go:41-0 const Unit
shapes/shapes.go:44-0 var Default
`
		if got := render(ss); got != want {
			t.Errorf("%s: Outline(shapes.go) =\n%s\nwant\n%s", name, got, want)
		}
		for _, s := range ss {
			if s.Name == "Area" && s.Scope == "Square" && s.Signature != "func (s *Square) Area() float64" {
				t.Errorf("%s: signature of Square.Area = %q", name, s.Signature)
			}
		}
	}
}

func TestOutlinePython(t *testing.T) {
	t.Parallel()
	base := testdata(t, "pypkg")
	want := `shapes/core.py:5-0 variable PI
shapes/core.py:6-0 variable count
shapes/core.py:9-16 class Shape
shapes/core.py:10-0 variable Shape.sides
shapes/core.py:12-13 method Shape.area
shapes/core.py:15-16 class Shape.Meta
shapes/core.py:19-27 class Circle
shapes/core.py:20-21 method Circle.__init__
shapes/core.py:23-24 method Circle.area
shapes/core.py:26-27 method Circle.grow
shapes/core.py:30-33 function total_area
shapes/core.py:31-32 function total_area.helper
`
	for name, f := range ctagsVariants(t, base) {
		ss, err := f.Outline(context.Background(), filepath.Join(base, "shapes", "core.py"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := render(ss); got != want {
			t.Errorf("%s: Outline(core.py) =\n%s\nwant\n%s", name, got, want)
		}
		for _, s := range ss {
			if s.Name == "total_area" && s.Signature != "(shapes: List[Shape])" {
				t.Errorf("%s: signature of total_area = %q", name, s.Signature)
			}
		}
	}
}

func TestOutlineUnsupported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(p, []byte("just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Finder{Base: dir}).Outline(context.Background(), p); err == nil || !strings.Contains(err.Error(), "no parser") {
		t.Errorf("Outline(notes.txt) error = %v, want ErrNoParser", err)
	}
}

func TestFindSymbol(t *testing.T) {
	t.Parallel()
	goBase, pyBase := testdata(t, "gomod"), testdata(t, "pypkg")
	tests := []struct {
		base, name, want string
	}{
		{goBase, "Area", "shapes/shapes.go:8-0 method Shape.Area\nshapes/shapes.go:17-19 method Circle.Area\nshapes/shapes.go:27-29 method Square.Area\n"},
		{goBase, "Square.Area", "shapes/shapes.go:27-29 method Square.Area\n"},
		{goBase, "TotalArea", "shapes/shapes.go:32-38 func TotalArea\n"},
		{goBase, "Nowhere", ""},
		{pyBase, "area", "shapes/core.py:12-13 method Shape.area\nshapes/core.py:23-24 method Circle.area\n"},
		{pyBase, "Circle.area", "shapes/core.py:23-24 method Circle.area\n"},
		{pyBase, "helper", "shapes/core.py:31-32 function total_area.helper\n"},
	}
	for _, tt := range tests {
		for name, f := range ctagsVariants(t, tt.base) {
			res, err := f.FindSymbol(context.Background(), tt.base, tt.name, 50)
			if err != nil {
				t.Fatalf("%s: FindSymbol(%q): %v", name, tt.name, err)
			}
			if got := render(res.Symbols); got != tt.want {
				t.Errorf("%s: FindSymbol(%q) =\n%s\nwant\n%s", name, tt.name, got, tt.want)
			}
		}
	}
}

func renderRefs(res *RefResult) string {
	var b strings.Builder
	for _, g := range res.Groups {
		b.WriteString("# " + g.Kind + " " + g.Object + " @" + g.Defined + "\n")
		for _, r := range g.Refs {
			call := ""
			if r.Call {
				call = " call"
			}
			b.WriteString(r.Path + ":" + itoa(r.Line) + " in=" + r.In + call + "\n")
		}
		for _, c := range g.Callers {
			b.WriteString("caller " + c.Name + " " + c.Path + ":" + itoa(c.Line) + " x" + itoa(c.Calls) + "\n")
		}
	}
	return b.String()
}

func TestFindReferencesGo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to type-check")
	}
	base := testdata(t, "gomod")
	f := &Finder{Base: base, Grep: &grep.Engine{}}
	res, err := f.FindReferences(context.Background(), base, "TotalArea")
	if err != nil {
		t.Fatal(err)
	}
	want := `# var var TotalArea int @cmd/app/main.go:13
cmd/app/main.go:14 in=main
# func func shapes.TotalArea(shapes []shapes.Shape) float64 @shapes/shapes.go:32
report/report.go:12 in=Report call
report/report.go:23 in=Largest
caller Report report/report.go:12 x1
# word match  @
broken/broken.go:4 in=
`
	if got := renderRefs(res); got != want {
		t.Errorf("FindReferences(TotalArea) =\n%s\nwant\n%s", got, want)
	}
	if len(res.Unresolved) != 1 || res.Unresolved[0] != "example.com/shapes/broken" {
		t.Errorf("Unresolved = %q, want the broken package", res.Unresolved)
	}
	if res.Definitions != 0 {
		t.Errorf("Definitions = %d, want 0 (the definition is resolved, not a word match)", res.Definitions)
	}

	scoped, err := f.FindReferences(context.Background(), base, "Square.Area")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range scoped.Groups {
		if g.Kind != "word match" && g.Object != "func (*shapes.Square).Area() float64" {
			t.Errorf("FindReferences(Square.Area) kept %q", g.Object)
		}
	}
}

func TestFindReferencesPython(t *testing.T) {
	t.Parallel()
	base := testdata(t, "pypkg")
	want := `# word match  @
shapes/__init__.py:2 in=
shapes/__init__.py:4 in=
shapes/report.py:2 in=
shapes/report.py:6 in=
shapes/report.py:7 in=
`
	for name, f := range ctagsVariants(t, base) {
		res, err := f.FindReferences(context.Background(), base, "total_area")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := renderRefs(res); got != want || res.Definitions != 1 {
			t.Errorf("%s: FindReferences(total_area) =\n%s(definitions %d)\nwant\n%s(definitions 1)", name, got, res.Definitions, want)
		}
	}
}

func TestCallees(t *testing.T) {
	t.Parallel()
	base := testdata(t, "gomod")
	f := &Finder{Base: base}
	tests := []struct {
		file, symbol string
		resolved     bool
		want         string
	}{
		{"shapes/shapes.go", "TotalArea", true, "(shapes.Shape).Area@35x1"},
		{"report/report.go", "Report", true, "fmt.Sprintf@12x1 shapes.TotalArea@12x1"},
		{"report/report.go", "Largest", true, "(shapes.Shape).Area@19x1"},
		{"shapes/shapes.go", "(*Square).Area", true, ""},
		{"broken/broken.go", "UsesTotalArea", false, ""},
	}
	for _, tt := range tests {
		res, err := f.Callees(context.Background(), filepath.Join(base, tt.file), tt.symbol)
		if err != nil {
			t.Fatalf("Callees(%s): %v", tt.symbol, err)
		}
		var parts []string
		for _, c := range res.Callees {
			parts = append(parts, c.Name+"@"+itoa(c.Line)+"x"+itoa(c.Calls))
		}
		if got := strings.Join(parts, " "); got != tt.want || res.Resolved != tt.resolved {
			t.Errorf("Callees(%s) = %q resolved=%v, want %q resolved=%v", tt.symbol, got, res.Resolved, tt.want, tt.resolved)
		}
	}
	if _, err := f.Callees(context.Background(), filepath.Join(base, "shapes", "shapes.go"), "Nope"); err == nil ||
		!strings.Contains(err.Error(), "TotalArea") {
		t.Errorf("Callees(Nope) error = %v, want the list of functions declared", err)
	}
}
