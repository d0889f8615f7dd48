package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pinsEnv is an env with a plugin folder of its own: a copy of the naive
// plugin (which the test may patch) and links to the fs and search
// plugins, searched in that order.
type pinsEnv struct {
	*env
	dir  string
	bin  string // the naive copy
	lock string
}

func newPinsEnv(t *testing.T) *pinsEnv {
	t.Helper()
	e := newEnv(t)
	p := &pinsEnv{env: e, dir: filepath.Join(e.root, "pin-plugins"), lock: filepath.Join(e.home, ".yagent", "plugins.lock")}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p.bin = filepath.Join(p.dir, "yagent-plugin-naive")
	src, err := os.ReadFile(filepath.Join(binDir, "hostile", "yagent-plugin-naive"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{"fs", "search"} {
		if err := os.Symlink(filepath.Join(binDir, "plugins", "yagent-plugin-"+fam), filepath.Join(p.dir, "yagent-plugin-"+fam)); err != nil {
			t.Fatal(err)
		}
	}
	e.write("a.txt", "three small words\n")
	return p
}

func (p *pinsEnv) args(extra ...string) []string {
	return append([]string{"--workspace", p.workspace, "--plugin-dir", p.dir}, extra...)
}

// run runs yagent args with this env's plugin folder only, and returns its
// combined output.
func (p *pinsEnv) run(args ...string) (string, error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, yagent, p.args(args...)...)
	cmd.Env = p.environ()
	cmd.Dir = p.workspace
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (p *pinsEnv) mustRun(args ...string) string {
	p.t.Helper()
	out, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("yagent %v: %v\n%s", args, err, out)
	}
	return out
}

// serve connects an MCP client to `yagent serve` over this env's plugin
// folder; a serve that does not start fails t.
func (p *pinsEnv) serve(t *testing.T) *client {
	t.Helper()
	cmd := exec.Command(yagent, p.args("serve")...)
	cmd.Env = p.environ()
	cmd.Dir = p.workspace
	c := &client{stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("yagent serve did not start: %v\nstderr:\n%s", err, c.stderr.String())
	}
	c.ClientSession = cs
	t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return c
}

// patch changes the naive binary in place (same inode, same size) and sets
// its mtime back, as an attacker covering their tracks would.
func (p *pinsEnv) patch() {
	p.t.Helper()
	fi, err := os.Stat(p.bin)
	if err != nil {
		p.t.Fatal(err)
	}
	b, err := os.ReadFile(p.bin)
	if err != nil {
		p.t.Fatal(err)
	}
	old := []byte("Count the words of a file.")
	i := bytes.Index(b, old)
	if i < 0 {
		p.t.Fatal("the naive binary lacks the string to patch")
	}
	f, err := os.OpenFile(p.bin, os.O_WRONLY, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("Count the wordz of a file."), int64(i)); err != nil {
		p.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		p.t.Fatal(err)
	}
	if err := os.Chtimes(p.bin, fi.ModTime(), fi.ModTime()); err != nil { // touch -d @old
		p.t.Fatal(err)
	}
	if after, err := os.Stat(p.bin); err != nil || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		p.t.Fatalf("the patch changed size or mtime: %v", err)
	}
}

// lockNames returns the plugins the lock file pins, sorted.
func (p *pinsEnv) lockNames() []string {
	p.t.Helper()
	b, err := os.ReadFile(p.lock)
	if err != nil {
		p.t.Fatal(err)
	}
	var l struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		p.t.Fatalf("lock file: %v\n%s", err, b)
	}
	var names []string
	for n := range l.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// truncate cuts the lock file in half.
func (p *pinsEnv) truncate() {
	p.t.Helper()
	b, err := os.ReadFile(p.lock)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.lock, b[:len(b)/2], 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func wantIn(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
}

// wantNotRun fails t if r shows that word_count ran.
func wantNotRun(t *testing.T, r result) {
	t.Helper()
	if r.Code == "" || strings.Contains(r.Text, "three small words") || strings.Contains(string(r.Data), "three small words") {
		t.Errorf("the patched plugin ran: %s", r)
	}
}

// TestPinsHold: a pin cannot be fooled by a patch that keeps size and
// mtime, pins exactly what is named, can be removed, and a lock file that
// cannot be read or a pinned binary that is gone is said, with the way out.
func TestPinsHold(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(t *testing.T, p *pinsEnv)
	}{
		{"patched in place with mtime restored: verify says mismatch and fails", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive")
			p.patch()
			out, err := p.run("plugins", "verify")
			if err == nil {
				t.Errorf("verify exited 0 on a patched pinned binary:\n%s", out)
			}
			wantIn(t, out, "MISMATCH", "naive")
		}},
		{"patched in place with mtime restored: serve refuses it", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive")
			p.patch()
			c := p.serve(t)
			wantNotRun(t, c.call(t, "word_count", map[string]any{"path": "a.txt"}))
			wantIn(t, c.stderr.String(), "naive", "refused")
		}},
		{"patched in place with mtime restored: call refuses it", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive")
			p.patch()
			out, err := p.run("call", "word_count", `{"path":"a.txt"}`)
			if err == nil || strings.Contains(out, "three small words") {
				t.Errorf("yagent call ran the patched pinned plugin (err %v):\n%s", err, out)
			}
		}},
		{"patched after serve loaded it: the lazy start refuses it", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive") // describes naive: the specs are cached, serve starts it lazily
			c := p.serve(t)
			p.patch()
			wantNotRun(t, c.call(t, "word_count", map[string]any{"path": "a.txt"}))
		}},
		{"pin NAME pins exactly NAME, not the plugins sorting after it", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "fs")
			if got := p.lockNames(); strings.Join(got, " ") != "fs" {
				t.Errorf("pin fs pinned %v", got)
			}
		}},
		{"pin of two names pins those two", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "fs", "naive")
			if got := p.lockNames(); strings.Join(got, " ") != "fs naive" {
				t.Errorf("pin fs naive pinned %v", got)
			}
			out := p.mustRun("plugins", "verify")
			wantIn(t, out, "unpinned  search")
		}},
		{"unpin removes the pin: the custom plugin asks again", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive", "fs")
			wantIn(t, p.mustRun("plugins", "unpin", "naive"), "unpinned naive")
			if got := p.lockNames(); strings.Join(got, " ") != "fs" {
				t.Errorf("after unpin naive the lock pins %v", got)
			}
			blocked(t, p.serve(t).call(t, "word_count", map[string]any{"path": "a.txt"}))
		}},
		{"unpin of a name not pinned fails and says so", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "fs")
			out, err := p.run("plugins", "unpin", "naive")
			if err == nil {
				t.Errorf("unpin of a plugin not pinned exited 0:\n%s", out)
			}
			wantIn(t, out, `"naive" is not pinned`)
		}},
		{"a pinned binary that is gone: verify fails naming it", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive")
			if err := os.Remove(p.bin); err != nil {
				t.Fatal(err)
			}
			out, err := p.run("plugins", "verify")
			if err == nil {
				t.Errorf("verify exited 0 with a pinned binary missing:\n%s", out)
			}
			wantIn(t, out, "MISSING", "naive", "plugins unpin naive")
		}},
		{"a truncated lock file: tools still works and names the file and the fix", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin")
			p.truncate()
			out, err := p.run("tools")
			if err != nil {
				t.Fatalf("tools failed on a truncated lock file: %v\n%s", err, out)
			}
			wantIn(t, out, p.lock, "yagent plugins pin --reset", "read_file")
		}},
		{"a truncated lock file: verify fails naming the file and the fix", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin")
			p.truncate()
			out, err := p.run("plugins", "verify")
			if err == nil {
				t.Errorf("verify exited 0 on a truncated lock file:\n%s", out)
			}
			wantIn(t, out, p.lock, "yagent plugins pin --reset")
		}},
		{"a truncated lock file: serve starts and trusts no pin", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin", "naive")
			p.truncate()
			c := p.serve(t)
			blocked(t, c.call(t, "word_count", map[string]any{"path": "a.txt"}))
			allowed(t, c.call(t, "read_file", map[string]any{"path": "a.txt"}), "three small words")
			wantIn(t, c.stderr.String(), p.lock, "pin --reset")
		}},
		{"a truncated lock file: pin --reset repairs it", func(t *testing.T, p *pinsEnv) {
			p.mustRun("plugins", "pin")
			p.truncate()
			p.mustRun("plugins", "pin", "--reset", "naive")
			if got := p.lockNames(); strings.Join(got, " ") != "naive" {
				t.Errorf("after pin --reset naive the lock pins %v", got)
			}
			if _, err := os.Stat(p.lock + ".bad"); err != nil {
				t.Errorf("the broken lock file was not kept: %v", err)
			}
			out := p.mustRun("plugins", "verify")
			wantIn(t, out, "ok        naive")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newPinsEnv(t))
		})
	}
}
