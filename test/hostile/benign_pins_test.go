package hostile

import (
	"os"
	"strings"
	"testing"
)

// TestBenignPins: everyday pinning and everyday MCP traffic work with no
// ask and no -y.
func TestBenignPins(t *testing.T) {
	t.Parallel()
	t.Run("a pinned custom plugin reads a workspace file", func(t *testing.T) {
		t.Parallel()
		p := newPinsEnv(t)
		p.mustRun("plugins", "pin", "naive")
		allowed(t, p.serve(t).call(t, "word_count", map[string]any{"path": "a.txt"}), "three small words")
	})
	t.Run("pin everything, verify says ok and exits 0", func(t *testing.T) {
		t.Parallel()
		p := newPinsEnv(t)
		p.mustRun("plugins", "pin")
		out := p.mustRun("plugins", "verify")
		for _, n := range []string{"fs", "naive", "search"} {
			wantIn(t, out, "ok        "+n)
		}
	})
	t.Run("a rebuilt plugin pinned again runs", func(t *testing.T) {
		t.Parallel()
		p := newPinsEnv(t)
		p.mustRun("plugins", "pin", "naive")
		b, err := os.ReadFile(p.bin)
		if err != nil {
			t.Fatal(err)
		}
		// A new build: a new file renamed over the old one, as go build does.
		tmp := p.bin + ".new"
		if err := os.WriteFile(tmp, append(b, 0), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p.bin); err != nil {
			t.Fatal(err)
		}
		if out, err := p.run("plugins", "verify"); err == nil || !strings.Contains(out, "MISMATCH") {
			t.Fatalf("verify of a rebuilt pinned plugin: %v\n%s", err, out)
		}
		p.mustRun("plugins", "pin", "naive")
		p.mustRun("plugins", "verify")
		allowed(t, p.serve(t).call(t, "word_count", map[string]any{"path": "a.txt"}), "three small words")
	})
	t.Run("CRLF line ends and blank lines on the MCP front", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.write("a.txt", "crlf is fine\n")
		s := mcpfrontStart(t, e)
		s.send("")
		s.send("  \r")
		s.send(mcpfrontCall(5, `{"path":"a.txt"}`) + "\r")
		if r := s.recv(); r["id"] != float64(5) || !strings.Contains(string(mustMarshal(r["result"])), "crlf is fine") {
			t.Fatalf("a CRLF call: %.300v", r)
		}
	})
	t.Run("non-ASCII UTF-8 in a path on the MCP front", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.write("notes-é漢字🙂.txt", "unicode names work\n")
		s := mcpfrontStart(t, e)
		s.send(mcpfrontCall(6, `{"path":"notes-é漢字🙂.txt"}`))
		if r := s.recv(); r["id"] != float64(6) || !strings.Contains(string(mustMarshal(r["result"])), "unicode names work") {
			t.Fatalf("a non-ASCII path: %.300v", r)
		}
	})
}
