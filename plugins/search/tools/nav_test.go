package tools

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func testdataDir(t testing.TB, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// navConfigs returns the configurations to run a navigation case with:
// ctags hidden always, ctags found when installed and not hidden.
func navConfigs(t testing.TB) map[string]Config {
	out := map[string]Config{"no-ctags": {LookPath: lookPath("ctags")}}
	if has("ctags") {
		out["ctags"] = Config{LookPath: lookPath()}
	} else {
		t.Logf("ctags hidden or missing: running without it only")
	}
	return out
}

func TestCodeOutlineTool(t *testing.T) {
	t.Parallel()
	goWS, pyWS := testdataDir(t, "gomod"), testdataDir(t, "pypkg")
	for name, cfg := range navConfigs(t) {
		tool := CodeOutline(cfg)
		res := mustCall(t, tool, goWS, codeOutlineInput{Path: "shapes/shapes.go"})
		for _, want := range []string{
			"shapes/shapes.go: 11 definitions (go/parser)\n",
			"7-9      type Shape interface\n",
			"  8        method Area\n",
			"27-29    func (s *Square) Area() float64\n",
			"32-38    func TotalArea(shapes []Shape) float64\n",
			"  23       field Side\n",
		} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("%s: outline of shapes.go lacks %q:\n%s", name, want, res.Text)
			}
		}

		py := mustCall(t, tool, pyWS, codeOutlineInput{Path: "shapes/core.py"})
		for _, want := range []string{"12 definitions", "19-27    class Circle\n", "  23-24    method area (self)\n", "30-33    function total_area (shapes: List[Shape])\n"} {
			if !strings.Contains(py.Text, want) {
				t.Errorf("%s: outline of core.py lacks %q:\n%s", name, want, py.Text)
			}
		}

		narrowed := mustCall(t, tool, pyWS, codeOutlineInput{Path: "shapes/core.py", Symbol: "Circle"})
		if !strings.Contains(narrowed.Text, "4 definitions") || strings.Contains(narrowed.Text, "total_area") {
			t.Errorf("%s: outline narrowed to Circle:\n%s", name, narrowed.Text)
		}

		_, err := call(t, tool, goWS, codeOutlineInput{Path: "go.mod"})
		wantToolError(t, err, sdk.CodeInvalidInput)
		_, err = call(t, tool, goWS, codeOutlineInput{Path: "shapes"})
		wantToolError(t, err, sdk.CodeInvalidInput)
	}
}

func TestCodeOutlineCallees(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to type-check")
	}
	ws := testdataDir(t, "gomod")
	tool := CodeOutline(Config{LookPath: lookPath()})
	res := mustCall(t, tool, ws, codeOutlineInput{Path: "report/report.go", Symbol: "Report"})
	want := "func Report(all []shapes.Shape) string\nreport/report.go:11-13\ncalls (resolved with the Go type checker; first line, count):\n" +
		"  12  fmt.Sprintf\n  12  shapes.TotalArea\nCallers: find_references with the function's name.\n"
	if res.Text != want {
		t.Errorf("callees of Report =\n%s\nwant\n%s", res.Text, want)
	}
	broken := mustCall(t, tool, ws, codeOutlineInput{Path: "broken/broken.go", Symbol: "UsesTotalArea"})
	if _, ok := noteKinds(broken)["unresolved"]; !ok {
		t.Errorf("a package that does not compile must say its callees are unresolved: %v", broken.Notes)
	}
	_, err := call(t, tool, ws, codeOutlineInput{Path: "report/report.go", Symbol: "Nope"})
	if te := wantToolError(t, err, sdk.CodeNotFound); !strings.Contains(te.Message, "Largest") {
		t.Errorf("unknown symbol: %q does not list the functions", te.Message)
	}
}

func TestFindSymbolTool(t *testing.T) {
	t.Parallel()
	goWS, pyWS := testdataDir(t, "gomod"), testdataDir(t, "pypkg")
	for name, cfg := range navConfigs(t) {
		tool := FindSymbol(cfg)
		res := mustCall(t, tool, goWS, findSymbolInput{Name: "Square.Area"})
		if res.Text != "shapes/shapes.go:27 method Square.Area — func (s *Square) Area() float64\n" {
			t.Errorf("%s: find_symbol(Square.Area) = %q", name, res.Text)
		}
		py := mustCall(t, tool, pyWS, findSymbolInput{Name: "total_area"})
		if !strings.HasPrefix(py.Text, "shapes/core.py:30 function total_area\n") {
			t.Errorf("%s: find_symbol(total_area) = %q", name, py.Text)
		}
		none := mustCall(t, tool, goWS, findSymbolInput{Name: "Nowhere"})
		if !strings.Contains(none.Text, "No definition of \"Nowhere\"") {
			t.Errorf("%s: find_symbol(Nowhere) = %q", name, none.Text)
		}
		_, err := call(t, tool, goWS, findSymbolInput{})
		wantToolError(t, err, sdk.CodeInvalidInput)
	}
}

func TestFindReferencesTool(t *testing.T) {
	t.Parallel()
	goWS, pyWS := testdataDir(t, "gomod"), testdataDir(t, "pypkg")
	for name, cfg := range navConfigs(t) {
		tool := FindReferences(cfg)
		if _, err := exec.LookPath("go"); err == nil {
			res := mustCall(t, tool, goWS, findReferencesInput{Name: "TotalArea"})
			for _, want := range []string{
				"func shapes.TotalArea(shapes []shapes.Shape) float64 — defined at shapes/shapes.go:32; 2 uses (resolved with the Go type checker)\n",
				"  report/report.go:12 [in Report]: return fmt.Sprintf(\"%.2f %s\", shapes.TotalArea(all), shapes.Unit)\n",
				"  callers: Report (report/report.go:12)\n",
				"word matches (1; not Go, or in packages that do not compile):\n  broken/broken.go:4: func UsesTotalArea",
				"did not type-check (uses there are word matches): example.com/shapes/broken",
			} {
				if !strings.Contains(res.Text, want) {
					t.Errorf("%s: find_references(TotalArea) lacks %q:\n%s", name, want, res.Text)
				}
			}
			if strings.Contains(res.Text, "mentioned in this comment") {
				t.Errorf("%s: a comment was counted as a use of a resolved Go name:\n%s", name, res.Text)
			}
		}
		py := mustCall(t, tool, pyWS, findReferencesInput{Name: "total_area"})
		want := "word matches (5; not Go, or in packages that do not compile):\n" +
			"  shapes/__init__.py:2: from .core import Circle, Shape, total_area\n" +
			"  shapes/__init__.py:4: __all__ = [\"Circle\", \"Shape\", \"total_area\"]\n" +
			"  shapes/report.py:2: from .core import total_area\n" +
			"  shapes/report.py:6: # total_area is mentioned in this comment.\n" +
			"  shapes/report.py:7: return \"%.2f\" % total_area(shapes)\n" +
			"[1 definition lines left out]\n"
		if py.Text != want {
			t.Errorf("%s: find_references(total_area) =\n%s\nwant\n%s", name, py.Text, want)
		}
		_, err := call(t, tool, pyWS, findReferencesInput{Name: "a b"})
		wantToolError(t, err, sdk.CodeInvalidInput)
	}
}
