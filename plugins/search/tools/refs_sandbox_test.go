package tools

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// callSandboxed calls tool with the call info the host sends under
// sandbox: on (network kept: the loader needs none, but a test should not
// depend on the network namespace).
func callSandboxed(t testing.TB, tool sdk.Tool, workspace string, on bool, input any) *sdk.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	sb := &sdk.Sandbox{Mode: sdk.SandboxOff}
	if on {
		sb = &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn}
	}
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Tool: tool.Spec().Name, Workspace: workspace, Sandbox: sb})
	res, err := tool.Call(ctx, raw)
	if err != nil {
		t.Fatalf("%s(%v), sandbox on=%v: %v", tool.Spec().Name, input, on, err)
	}
	return res
}

// privateHome makes a home folder outside /tmp (which the sandbox lets
// every command write, so a home there would prove nothing) and an
// environment for the Go loader that points at it, keeping this machine's
// build cache so that nothing is rebuilt.
func privateHome(t testing.TB) (home string, env []string) {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "yagent-nav-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	home = filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "GOCACHE", "GOMODCACHE", "CGO_ENABLED":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "CGO_ENABLED=1")
	return home, env
}

func needLoader(t testing.TB, cgo bool) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is needed to type-check")
	}
	if cgo {
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("gcc is needed: the attack runs through cgo's C compiler")
		}
	}
}

// TestFindReferencesSandboxCgo: a workspace package whose cgo preamble
// includes a private file of the home, and a type whose size is a number
// from that file, cannot carry that number into find_references' result
// when the call has a sandbox: go list, cgo and gcc run inside it, where
// the home outside its toolchain caches is unreadable. With the sandbox
// off (the control, and the code before the loader) the number shows in
// the type's description.
func TestFindReferencesSandboxCgo(t *testing.T) {
	t.Parallel()
	needLoader(t, true)
	if sandbox.Probe().LandlockABI == 0 {
		t.Skip("landlock is missing: nothing keeps gcc from reading the home")
	}
	home, env := privateHome(t)
	n, _ := rand.Int(rand.Reader, big.NewInt(9e11))
	secret := fmt.Sprint(n.Int64() + 1e11) // 12 digits
	keyFile := filepath.Join(home, ".ssh", "id_test")
	writeFiles(t, home, map[string]string{".ssh/id_test": "#define ID_TEST " + secret + "\n"})
	ws := filepath.Join(filepath.Dir(home), "ws")
	writeFiles(t, ws, map[string]string{
		"go.mod": "module example.com/ws\n\ngo 1.22\n",
		"leak/leak.go": "package leak\n\n/*\n#include \"" + keyFile + "\"\n*/\nimport \"C\"\n\n" +
			"// Key is as long as the number in the file.\ntype Key [C.ID_TEST]byte\n",
		"use/use.go": "package use\n\nimport \"example.com/ws/leak\"\n\nvar K *leak.Key\n",
	})
	tool := FindReferences(Config{LookPath: lookPath(), GoLoaderEnv: env})
	dump := func(r *sdk.Result) string {
		data, _ := json.Marshal(r)
		return r.Text + string(data)
	}

	// The sandboxed call first: the build cache, shared with the
	// sandbox, would hand it what cgo made outside (the workspace's path
	// is new, so no earlier run made it).
	on := callSandboxed(t, tool, ws, true, findReferencesInput{Name: "Key"})
	if strings.Contains(dump(on), secret) {
		t.Fatalf("under the sandbox the result shows the private file's number %s:\n%s", secret, dump(on))
	}
	if !strings.Contains(on.Text, "use/use.go:5") || !strings.Contains(on.Text, "word matches") {
		t.Errorf("under the sandbox the uses should stay, as word matches:\n%s", on.Text)
	}
	off := callSandboxed(t, tool, ws, false, findReferencesInput{Name: "Key"})
	if !strings.Contains(dump(off), secret) {
		t.Fatalf("control: with the sandbox off the attack should show the number (is cgo on?):\n%s", off.Text)
	}
}

// TestFindReferencesSandboxSameGroups: on an ordinary module, the loader
// run inside the sandbox finds what the in-process type checker finds,
// also when the plugin is installed in the private part of the home
// (~/.yagent/plugins), which the sandbox otherwise keeps closed.
func TestFindReferencesSandboxSameGroups(t *testing.T) {
	t.Parallel()
	needLoader(t, false)
	home, env := privateHome(t)
	loader := filepath.Join(home, ".yagent", "plugins", "yagent-plugin-search")
	copyExecutable(t, loader)
	ws := testdataDir(t, "gomod")
	tool := FindReferences(Config{LookPath: lookPath(), GoLoader: loader, GoLoaderEnv: env})
	for _, name := range []string{"Area", "TotalArea", "Shape.Area", "Circle"} {
		off := callSandboxed(t, tool, ws, false, findReferencesInput{Name: name})
		on := callSandboxed(t, tool, ws, true, findReferencesInput{Name: name})
		offRes, onRes := off.Data.(*nav.RefResult), on.Data.(*nav.RefResult)
		if len(offRes.Groups) == 0 || offRes.Groups[0].Object == "" {
			t.Fatalf("%s: the control resolved nothing:\n%s", name, off.Text)
		}
		if !reflect.DeepEqual(offRes, onRes) {
			t.Errorf("%s: under the sandbox the result differs.\noff:\n%s\non:\n%s", name, off.Text, on.Text)
		}
	}
}

// copyExecutable copies this test binary (a Go loader, see TestMain) to
// dst.
func copyExecutable(t testing.TB, dst string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCodeOutlineCalleesSandbox: the callees of a function, resolved by
// the loader inside the sandbox, are those the in-process type checker
// finds.
func TestCodeOutlineCalleesSandbox(t *testing.T) {
	t.Parallel()
	needLoader(t, false)
	ws := testdataDir(t, "gomod")
	tool := CodeOutline(Config{LookPath: lookPath()})
	in := codeOutlineInput{Path: "report/report.go", Symbol: "Report"}
	off := callSandboxed(t, tool, ws, false, in)
	on := callSandboxed(t, tool, ws, true, in)
	if !strings.Contains(off.Text, "shapes.TotalArea") || !off.Data.(OutlineResult).Callees.Resolved {
		t.Fatalf("the control did not resolve:\n%s", off.Text)
	}
	if !reflect.DeepEqual(off.Data, on.Data) || off.Text != on.Text {
		t.Errorf("under the sandbox the callees differ.\noff:\n%s\non:\n%s", off.Text, on.Text)
	}
}
