package hostile

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxNavCgo: find_references type-checks Go, and go list runs cgo
// and gcc on a package's preamble, which may include any file by its
// path. Under -y (the sandbox on), a preamble that includes a private
// file of the home and sizes a type by the number it defines cannot carry
// that number into the result: the search plugin type-checks in a child
// inside the call's sandbox. An ordinary package of the same workspace
// still resolves, in find_references and in code_outline's callees.
func TestSandboxNavCgo(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"go", "gcc"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is needed: the attack runs through go list and cgo's C compiler", prog)
		}
	}
	e := newEnv(t)
	// The machine's build cache, so that nothing is rebuilt: it is a
	// toolchain cache, which the sandbox lets commands use.
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	e.extraEnv = append(e.extraEnv, "GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "CGO_ENABLED=1")

	n, _ := rand.Int(rand.Reader, big.NewInt(9e11))
	secret := fmt.Sprint(n.Int64() + 1e11)
	key := e.write(filepath.Join(e.home, ".ssh", "id_test"), "#define ID_TEST "+secret+"\n")
	e.write("go.mod", "module example.com/ws\n\ngo 1.22\n")
	e.write("leak/leak.go", "package leak\n\n/*\n#include \""+key+"\"\n*/\nimport \"C\"\n\n// Key is as long as the number in the file.\ntype Key [C.ID_TEST]byte\n")
	e.write("use/use.go", "package use\n\nimport \"example.com/ws/leak\"\n\nvar K *leak.Key\n")
	e.write("greet/greet.go", "package greet\n\n// Greet greets.\nfunc Greet() string { return \"hi\" }\n")
	e.write("main.go", "package main\n\nimport \"example.com/ws/greet\"\n\nfunc main() { println(greet.Greet()) }\n")

	c := e.serve("-y")
	r := c.call(t, "find_references", map[string]any{"name": "Key"})
	leaked(t, r, secret)
	allowed(t, r, "use/use.go:5", "word matches")
	r = c.call(t, "find_references", map[string]any{"name": "Greet"})
	allowed(t, r, "func greet.Greet() string — defined at greet/greet.go:4", "resolved with the Go type checker", "main.go:5")
	r = c.call(t, "code_outline", map[string]any{"path": "main.go", "symbol": "main"})
	allowed(t, r, "calls (resolved with the Go type checker", "greet.Greet")
}
