package e2e

import (
	"strings"
	"testing"
)

// TestCustomPlugin_ClashAndTrust: a custom plugin declaring a static name is
// skipped and reported; its own tool, unpinned, is treated as exec and asks
// (no answerer over a client without elicitation: needs_auth); pinned, its
// declared read Effect is trusted and a read inside the workspace runs.
func TestCustomPlugin_ClashAndTrust(t *testing.T) {
	e := newEnv(t)
	out, err := e.cli("tools", "--all")
	if err != nil {
		t.Fatalf("yagent tools --all: %v\n%s", err, out)
	}
	if !strings.Contains(out, "skipped tool read_file of plugin clash") {
		t.Errorf("the clash with read_file is not reported:\n%s", out)
	}
	if n := clashLines(out); n != 1 {
		t.Errorf("yagent tools: the skipped read_file of plugin clash is told of in %d lines, want 1:\n%s", n, out)
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "read_file" && f[2] != "fs" {
			t.Errorf("read_file is served by %s, want fs: %q", f[2], l)
		}
		if len(f) >= 4 && f[0] == "clash_probe" && (f[1] != "cold" || f[3] != "exec") {
			t.Errorf("unpinned clash_probe: want cold and exec, got %q", l)
		}
	}

	c := e.serve(nil)
	r := c.call(t, "clash_probe", map[string]any{"path": "notes.txt"})
	if !r.IsError || code(r) != "needs_auth" {
		t.Fatalf("unpinned clash_probe: want needs_auth, got isError=%v code=%q %q", r.IsError, code(r), text(r))
	}
	// serve is past its start-up: its warnings are all written.
	if errs := c.stderr.String(); clashLines(errs) != 1 {
		t.Errorf("yagent serve: the skipped read_file of plugin clash is told of in %d lines, want 1:\n%s", clashLines(errs), errs)
	}

	if out, err := e.cli("plugins", "pin", "clash"); err != nil {
		t.Fatalf("pin clash: %v\n%s", err, out)
	}
	c2 := e.serve(nil)
	r = c2.call(t, "clash_probe", map[string]any{"path": "notes.txt"})
	if r.IsError {
		t.Fatalf("pinned clash_probe reading inside the workspace: code=%q %q", code(r), text(r))
	}
}

// clashLines counts the lines of out that tell of plugin clash's read_file,
// whatever their wording: a warning, a log line.
func clashLines(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "read_file") && strings.Contains(l, "clash") {
			n++
		}
	}
	return n
}
