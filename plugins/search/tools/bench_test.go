package tools

import (
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/yagent/yagent/internal/testbuild"
	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk/sandbox"
)

// BenchmarkGrepGOROOT searches $(go env GOROOT)/src four ways: through the
// grep tool with ripgrep (tool-rg), the same inside a call's kernel sandbox
// as a call under the built-in profiles runs it (tool-rg-sandboxed), with
// ripgrep run directly (rg-direct), and through the tool with ripgrep
// hidden (tool-go). Aim: tool-rg and tool-rg-sandboxed within 1.15x of
// rg-direct, tool-go within 4x.
//
//	go test -run '^$' -bench BenchmarkGrepGOROOT -count 5 ./plugins/search/tools
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
	for _, q := range queries {
		b.Run(q.name+"/tool-rg", func(b *testing.B) {
			if rg == "" {
				b.Skip("ripgrep hidden or missing")
			}
			tool := Grep(Config{LookPath: lookPath()})
			for b.Loop() {
				res := mustCall(b, tool, src, q.in)
				if res.Data.(*grep.Result).Backend != grep.BackendRg {
					b.Fatal("did not run on ripgrep")
				}
			}
		})
		b.Run(q.name+"/tool-rg-sandboxed", func(b *testing.B) {
			if rg == "" {
				b.Skip("ripgrep hidden or missing")
			}
			if sandbox.Probe().LandlockABI == 0 {
				b.Skip("no Landlock here: the sandbox would be its other layers only")
			}
			tool := Grep(Config{LookPath: lookPath()})
			for b.Loop() {
				res := callSandboxed(b, tool, src, true, q.in)
				if res.Data.(*grep.Result).Backend != grep.BackendRg {
					b.Fatal("did not run on ripgrep")
				}
			}
		})
		b.Run(q.name+"/rg-direct", func(b *testing.B) {
			if rg == "" {
				b.Skip("ripgrep hidden or missing")
			}
			for b.Loop() {
				cmd := exec.Command(rg, append([]string{"-n"}, append(q.args, ".")...)...)
				cmd.Dir = src
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(q.name+"/tool-go", func(b *testing.B) {
			tool := Grep(Config{LookPath: lookPath("rg")})
			for b.Loop() {
				res := mustCall(b, tool, src, q.in)
				if res.Data.(*grep.Result).Backend != grep.BackendGo {
					b.Fatal("did not run on the Go back-end")
				}
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
