package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMakeRun_StdoutIsMCPAlone: the README's `make run` serves MCP on its
// stdout, and nothing else lands there: not make's echo of what it
// builds, nor the build's own words. A client started on it reads JSON-RPC
// from the first byte.
func TestMakeRun_StdoutIsMCPAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make here")
	}
	// Into a folder of its own, so the checkout's bin/ that other tests
	// may be running is left alone.
	cmd := exec.Command("make", "run", "BIN="+t.TempDir(), "WORKSPACE="+t.TempDir())
	cmd.Dir = repoRoot
	// As a user types it in a shell, not as a make that runs this test
	// (make test) would pass it on: a make started by another prints its
	// "Entering directory" lines on stdout.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKELEVEL=") && !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") {
			env = append(env, kv)
		}
	}
	// A home of its own, with the Go caches this test was built from: a
	// user who runs make run has theirs, and an empty module cache would
	// download and build everything again, past the deadline below on a
	// machine busy with the other packages' tests.
	caches, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	vals := strings.Fields(string(caches))
	if len(vals) != 2 {
		t.Fatalf("go env GOCACHE GOMODCACHE: %q", caches)
	}
	cmd.Env = append(env, "HOME="+t.TempDir(), "GOCACHE="+vals[0], "GOMODCACHE="+vals[1])
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &syncBuffer{} // make writes it while a failure reads it
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(5 * time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("make run's stdout ended before the answer to initialize; stderr:\n%s", stderr.String())
			}
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("make run wrote a line that is not JSON-RPC on stdout: %q", line)
			}
			if string(msg.ID) == "1" {
				stdin.Close()
				makeRunLoadsEveryFamily(t, stderr)
				return
			}
		case <-deadline:
			t.Fatalf("no answer to initialize within 5 minutes; stderr:\n%s", stderr.String())
		}
	}
}

// makeRunLoadsEveryFamily fails t unless the serve make run started loaded
// the plugins of every family, none refused: its bin folder is in /tmp, a
// folder commands can write, so the host runs them because make build
// linked it with their sums.
func makeRunLoadsEveryFamily(t *testing.T, stderr *syncBuffer) {
	t.Helper()
	for range 100 { // the start line comes before the first answer; bounded all the same
		if strings.Contains(stderr.String(), " plugins [") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := stderr.String()
	if !strings.Contains(out, "from 5 plugins [browser cognitive fs search shell]") || strings.Contains(out, "refused") {
		t.Errorf("make run's serve did not load every family's plugin; stderr:\n%s", out)
	}
}
