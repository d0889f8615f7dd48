package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPluginsInit: `yagent plugins init demo DIR`, run inside this
// checkout, writes a module that builds against the checkout with no
// network (go.work): its own tests pass (make test), make install puts
// yagent-plugin-demo in ~/.yagent/plugins, where the host finds it. Under
// a home in /tmp, a folder commands can write, the host refuses it until
// `yagent plugins pin demo`, as init's output says; pinned, `yagent serve`
// serves its tool to an MCP client, bad input answered by the tool.
func TestPluginsInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a new module")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make here")
	}
	t.Parallel()
	e := newEnv(t)
	e.dirs = nil // the host's own folders: plugins/ beside it, then ~/.yagent/plugins
	dir := filepath.Join(t.TempDir(), "yagent-plugin-demo")

	// From the checkout's root: init finds it from the working folder.
	initDemo := func() ([]byte, error) {
		cmd := exec.Command(yagent, "plugins", "init", "demo", dir)
		cmd.Dir = repoRoot
		cmd.Env = e.environ()
		return cmd.CombinedOutput()
	}
	out, err := initDemo()
	if err != nil {
		t.Fatalf("yagent plugins init demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"go.work", "builds against the yagent checkout at " + repoRoot,
		"count_words.go", "the tool demo_count_words",
		"\nnext:\n  cd " + dir + " && make test && make install && yagent plugins pin demo\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}
	if again, err := initDemo(); err == nil || !strings.Contains(string(again), "not empty") {
		t.Errorf("init into the folder it wrote: %v\n%s; want it refused, the folder not empty", err, again)
	}

	// The module's tests and install, as a user types them, with no
	// network: the sdk comes from this checkout, its dependencies from the
	// module cache this test was built from.
	caches, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	vals := strings.Fields(string(caches))
	if len(vals) != 2 {
		t.Fatalf("go env GOCACHE GOMODCACHE: %q", caches)
	}
	var goEnv []string
	for _, kv := range e.environ("GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local", "GOWORK=") {
		if !strings.HasPrefix(kv, "MAKELEVEL=") && !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") {
			goEnv = append(goEnv, kv)
		}
	}
	for _, target := range []string{"test", "install"} {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		mk := exec.CommandContext(ctx, "make", target)
		mk.Dir = dir
		mk.Env = goEnv
		out, err := mk.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("make %s in the new module: %v\n%s", target, err, out)
		}
		t.Logf("make %s: %v", target, time.Since(start).Round(time.Millisecond))
		if target == "install" && !bytes.Contains(out, []byte("yagent plugins pin demo")) {
			t.Errorf("make install does not say to pin the plugin:\n%s", out)
		}
	}
	bin := filepath.Join(e.home, ".yagent", "plugins", "yagent-plugin-demo")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("make install wrote no %s: %v", bin, err)
	}

	if out, err := e.cli("plugins", "list"); err != nil || !strings.Contains(out, "demo") || !strings.Contains(out, "REFUSED") {
		t.Fatalf("yagent plugins list of an unpinned plugin under a home in /tmp: %v; want demo refused\n%s", err, out)
	}
	if out, err := e.cli("plugins", "pin", "demo"); err != nil || !strings.Contains(out, "pinned demo ") {
		t.Fatalf("yagent plugins pin demo: %v\n%s", err, out)
	}

	c := e.serve(nil)
	r := c.call(t, "demo_count_words", map[string]any{"text": "the quick brown fox"})
	if r.IsError || text(r) != `4 words; the longest is "quick".` {
		t.Fatalf("demo_count_words over MCP: isError=%v code=%q %q\nstderr:\n%s", r.IsError, code(r), text(r), c.stderr.String())
	}
	var data struct {
		Words   int    `json:"words"`
		Longest string `json:"longest"`
	}
	dataOf(t, r, &data)
	if data.Words != 4 || data.Longest != "quick" {
		t.Errorf("demo_count_words's data = %+v, want 4 words, the longest quick", data)
	}
	r = c.call(t, "demo_count_words", map[string]any{"text": " "})
	if !r.IsError || code(r) != "invalid_input" || !strings.Contains(text(r), "pass the text to count") {
		t.Errorf("demo_count_words of no words: isError=%v code=%q %q; want invalid_input saying what to pass", r.IsError, code(r), text(r))
	}
}
