package tools

import (
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// BenchmarkGrepGOROOT searches $(go env GOROOT)/src four ways: with
// ripgrep run directly (rg-direct), through the grep tool with ripgrep
// (tool-rg), the same inside a call's kernel sandbox as a call under the
// built-in profiles runs it (tool-rg-sandboxed), and through the tool with
// ripgrep hidden (tool-go). The four run one after the other in every
// iteration, each iteration starting one further along, so that the
// machine's noise and the page cache fall on all alike; each reports its
// median in ms, and each of the tool's its ratio to rg-direct's median.
// Aim: tool-rg and tool-rg-sandboxed within 1.15x of rg-direct, tool-go
// within 4x.
//
//	go test -run '^$' -bench BenchmarkGrepGOROOT -benchtime 3x -count 5 ./plugins/search/tools
func BenchmarkGrepGOROOT(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		src = filepath.Join(string(trimNL(out)), "src")
	}
	queries := []struct {
		name string
		in   grepInput
		args []string
	}{
		{"literal", grepInput{Pattern: "func NewReaderSize", Literal: true}, []string{"-F", "-e", "func NewReaderSize"}},
		{"alternation", grepInput{Pattern: `(Unmarshal|Decode)[A-Z]\w*\(`}, []string{"-e", `(Unmarshal|Decode)[A-Z]\w*\(`}},
		{"ignore-case", grepInput{Pattern: "deadline", IgnoreCase: true}, []string{"-i", "-e", "deadline"}},
	}
	rg, _ := grep.RgPath("", lookPath())
	if rg == "" {
		b.Skip("ripgrep hidden or missing: nothing to compare with")
	}
	landlock := sandbox.Probe().LandlockABI > 0
	withRg, withoutRg := Grep(Config{LookPath: lookPath()}), Grep(Config{LookPath: lookPath("rg")})
	backend := func(b *testing.B, res *sdk.Result, want grep.Backend) {
		if got := res.Data.(*grep.Result).Backend; got != want {
			b.Fatalf("ran on %s, want %s", got, want)
		}
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			ways := []struct {
				name string
				run  func(b *testing.B)
				took []time.Duration
			}{
				{name: "rg-direct", run: func(b *testing.B) {
					cmd := exec.Command(rg, append([]string{"-n"}, append(q.args, ".")...)...)
					cmd.Dir = src
					cmd.Stdout = io.Discard
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}},
				{name: "tool-rg", run: func(b *testing.B) {
					backend(b, mustCall(b, withRg, src, q.in), grep.BackendRg)
				}},
				{name: "tool-rg-sandboxed", run: func(b *testing.B) {
					backend(b, callSandboxed(b, withRg, src, true, q.in), grep.BackendRg)
				}},
				{name: "tool-go", run: func(b *testing.B) {
					backend(b, mustCall(b, withoutRg, src, q.in), grep.BackendGo)
				}},
			}
			if !landlock {
				// The sandbox would be its other layers only: not the
				// call the profiles run.
				ways = slices.Delete(ways, 2, 3)
			}
			first := 0
			for b.Loop() {
				for i := range ways {
					w := &ways[(first+i)%len(ways)]
					start := time.Now()
					w.run(b)
					w.took = append(w.took, time.Since(start))
				}
				first++
			}
			median := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2]) / float64(time.Millisecond)
			}
			direct := median(ways[0].took)
			b.ReportMetric(direct, "rg-direct-ms")
			for _, w := range ways[1:] {
				m := median(w.took)
				b.ReportMetric(m, w.name+"-ms")
				b.ReportMetric(m/direct, w.name+"-ratio")
			}
		})
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// BenchmarkFindReferencesSandbox runs find_references TotalArea on the
// small module under testdata/gomod with the sandbox off (the type checker
// in process) and on (the plugin's binary started again as the Go loader,
// inside the call's sandbox; ripgrep is sandboxed too). The difference is
// the loader's cost: its start, the sandbox's layers and a go list run
// that no longer shares the plugin's process.
//
//	go test -run '^$' -bench BenchmarkFindReferencesSandbox -count 5 ./plugins/search/tools
func BenchmarkFindReferencesSandbox(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("the go command is needed to type-check")
	}
	plugin := testbuild.Plugin(b.TempDir(), "search")
	if err := testbuild.Build(plugin); err != nil {
		b.Fatal(err)
	}
	loader := plugin.Out
	ws := testdataDir(b, "gomod")
	tool := FindReferences(Config{LookPath: lookPath(), GoLoader: loader})
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				res := callSandboxed(b, tool, ws, on, findReferencesInput{Name: "TotalArea"})
				if r := res.Data.(*nav.RefResult); len(r.Groups) == 0 || r.Groups[0].Object == "" || r.CheckFailed != "" {
					b.Fatalf("not resolved:\n%s", res.Text)
				}
			}
		})
	}
}
