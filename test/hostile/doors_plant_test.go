package hostile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plantEnv is an env whose workspace holds the yagent build, as a clone of
// yagent does after make build (make run serves it): ws/bin/yagent, and
// its plugins in ws/bin/plugins, found beside the binary. It runs with the
// default plugin folders (no --plugin-dir): bin/plugins beside the binary,
// ~/.yagent/plugins, $YAGENT_PLUGIN_PATH.
type plantEnv struct {
	*env
	yagent  string // ws/bin/yagent
	plugins string // ws/bin/plugins
	// mark is where a planted plugin leaves its mark when it runs at all:
	// in the home folder, which no command may write.
	mark string
}

// plantScript is a plugin binary a command plants: it leaves a mark in
// the home folder of whatever runs it, and is no plugin.
const plantScript = "#!/bin/sh\necho ran >> \"$HOME/planted-ran\"\n"

func newPlantEnv(t *testing.T, families ...string) *plantEnv {
	t.Helper()
	e := newEnv(t)
	p := &plantEnv{env: e, yagent: e.ws("bin/yagent"), plugins: e.ws("bin/plugins"), mark: filepath.Join(e.home, "planted-ran")}
	plantCopy(t, yagent, p.yagent)
	if len(families) == 0 {
		families = []string{"fs", "shell", "search", "browser", "cognitive"}
	}
	for _, f := range families {
		plantCopy(t, filepath.Join(binDir, "plugins", "yagent-plugin-"+f), filepath.Join(p.plugins, "yagent-plugin-"+f))
	}
	return p
}

// plantCopy copies the binary from to to (a copy: a command that writes
// into it must not reach the build the other tests run).
func plantCopy(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// run runs ws/bin/yagent with args on the workspace and returns its
// combined output.
func (p *plantEnv) run(args ...string) (string, error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.yagent, append(args, "--workspace", p.workspace)...)
	cmd.Env = p.environ()
	cmd.Dir = p.workspace
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (p *plantEnv) mustRun(args ...string) string {
	p.t.Helper()
	out, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("yagent %v: %v\n%s", args, err, out)
	}
	return out
}

// serve connects a client that cannot be asked to ws/bin/yagent serve.
func (p *plantEnv) serve(flags ...string) *client {
	p.t.Helper()
	cmd := exec.Command(p.yagent, append([]string{"serve", "--workspace", p.workspace}, flags...)...)
	cmd.Env = p.environ()
	cmd.Dir = p.workspace
	c := &client{stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		p.t.Fatalf("yagent serve did not start: %v\nstderr:\n%s", err, c.stderr.String())
	}
	c.ClientSession = cs
	p.t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return c
}

// plant has a command write content to path (absolute), executable,
// through run_bash over serve with flags. Should the guard stop the
// command, the file is written as a program the guard does not see would
// write it (a make recipe, an npm script): what is judged here is the
// next start, whoever wrote the file.
func (p *plantEnv) plant(path, content string, flags ...string) {
	p.t.Helper()
	c := p.serve(flags...)
	cmd := "mkdir -p " + filepath.Dir(path) + " && rm -f " + path + " && echo " + base64.StdEncoding.EncodeToString([]byte(content)) +
		" | base64 -d > " + path + " && chmod 755 " + path + " && echo planted"
	r := sbRun(p.t, c, cmd, 0)
	_ = c.Close()
	if b, err := os.ReadFile(path); err != nil || string(b) != content {
		p.t.Logf("the command did not plant %s (%s); planting it as an unseen program would", path, r)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			p.t.Fatal(err)
		}
		_ = os.Remove(path)
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			p.t.Fatal(err)
		}
	}
}

// ran says whether a planted script ran.
func (p *plantEnv) ran() bool {
	_, err := os.Stat(p.mark)
	return err == nil
}

// plantRefused fails t unless out says that plugin name was refused as a
// binary in a folder commands can write (why: a part of how), and how to
// trust it.
func plantRefused(t *testing.T, out, name, why string) {
	t.Helper()
	wantIn(t, out, "plugin "+name+" refused: ", "is in a folder commands can write ("+why, "nothing vouches for it",
		"trust it with `yagent plugins pin "+name+"`")
}

// plantListRefused fails t unless `plugins list`, as a table and as JSON,
// says why name is refused.
func plantListRefused(t *testing.T, p *plantEnv, name, why string, flags ...string) {
	t.Helper()
	out := p.mustRun(append([]string{"plugins", "list"}, flags...)...)
	wantIn(t, out, "REFUSED")
	plantRefused(t, out, name, why)
	var list []struct {
		Name    string `json:"name"`
		Refused string `json:"refused"`
	}
	js := p.mustRun(append([]string{"plugins", "list", "-o", "json"}, flags...)...)
	if err := json.Unmarshal([]byte(js[max(strings.Index(js, "[\n"), 0):]), &list); err != nil {
		t.Fatalf("plugins list -o json: %v\n%s", err, js)
	}
	for _, l := range list {
		if l.Name == name && strings.Contains(l.Refused, "commands can write") {
			return
		}
	}
	t.Errorf("plugins list -o json does not say why %s is refused:\n%s", name, js)
}

// TestDoorsPlant: a plugin binary a command plants or replaces in a folder
// commands can write (the workspace that holds the yagent build, /tmp, a
// folder reached through a link in one) never runs on the next start,
// not even to describe itself, nor from the spec cache, under -y too; the
// start's warnings and `plugins list` say why and how to trust it, and a
// pin does. A folder no command can write, the build's own plugins and
// the dev override work as before. Red on the code before plugin folders
// were judged.
func TestDoorsPlant(t *testing.T) {
	t.Parallel()
	tag := make([]byte, 6)
	_, _ = rand.Read(tag)
	inTmp := "/tmp/yagent-plant-" + hex.EncodeToString(tag)
	t.Cleanup(func() { os.RemoveAll(inTmp); os.RemoveAll(inTmp + "-link") })
	cases := []struct {
		name string
		run  func(t *testing.T, p *plantEnv)
	}{
		{"a command plants yagent-plugin-zz beside the build: not run", func(t *testing.T, p *plantEnv) {
			p.plant(filepath.Join(p.plugins, "yagent-plugin-zz"), plantScript)
			out := p.mustRun("tools")
			plantRefused(t, out, "zz", "inside the workspace "+p.workspace)
			wantIn(t, out, "read_file")
			plantListRefused(t, p, "zz", "inside the workspace")
			if p.ran() {
				t.Error("the planted plugin ran")
			}
		}},
		{"a command plants yagent-plugin-zz beside the build under -y: not run", func(t *testing.T, p *plantEnv) {
			p.plant(filepath.Join(p.plugins, "yagent-plugin-zz"), plantScript, "-y")
			c := p.serve("-y")
			plantRefused(t, c.stderr.String(), "zz", "inside the workspace")
			allowed(t, c.call(t, "read_file", map[string]any{"path": "bin/plugins/yagent-plugin-zz"}), "planted-ran")
			plantListRefused(t, p, "zz", "inside the workspace", "-Y")
			if p.ran() {
				t.Error("the planted plugin ran")
			}
		}},
		{"a command replaces the build's fs plugin: refused, its tools say why", func(t *testing.T, p *plantEnv) {
			p.plant(filepath.Join(p.plugins, "yagent-plugin-fs"), plantScript, "-y")
			c := p.serve("-y")
			r := c.call(t, "read_file", map[string]any{"path": "bin/plugins/yagent-plugin-fs"})
			if r.Code == "" || strings.Contains(r.Text, "planted-ran") {
				t.Errorf("read_file ran from the replaced fs plugin: %s", r)
			}
			plantRefused(t, sbText(r), "fs", "inside the workspace")
			plantRefused(t, c.stderr.String(), "fs", "inside the workspace")
			if p.ran() {
				t.Error("the replaced fs plugin ran")
			}
		}},
		{"a command plants a plugin in a YAGENT_PLUGIN_PATH folder under /tmp: not run", func(t *testing.T, p *plantEnv) {
			p.extraEnv = append(p.extraEnv, "YAGENT_PLUGIN_PATH="+inTmp+"/a")
			p.plant(inTmp+"/a/yagent-plugin-zz", plantScript)
			plantRefused(t, p.mustRun("tools"), "zz", "inside /tmp")
			plantListRefused(t, p, "zz", "inside /tmp")
			if p.ran() {
				t.Error("the planted plugin ran")
			}
		}},
		{"a command plants a plugin in a YAGENT_PLUGIN_PATH folder under /tmp under -y: not run", func(t *testing.T, p *plantEnv) {
			p.extraEnv = append(p.extraEnv, "YAGENT_PLUGIN_PATH="+inTmp+"/b")
			p.plant(inTmp+"/b/yagent-plugin-zz", plantScript, "-y")
			c := p.serve("-Y")
			plantRefused(t, c.stderr.String(), "zz", "inside /tmp")
			if p.ran() {
				t.Error("the planted plugin ran")
			}
		}},
		{"a plugin folder reached through a link in /tmp: not run", func(t *testing.T, p *plantEnv) {
			// $YAGENT_PLUGIN_PATH names a folder out of every command's
			// reach, but through a link in /tmp, which a command may point
			// anywhere.
			started := p.starts()
			real := filepath.Join(p.root, "real-plugins")
			p.devCopy(real, false)
			if err := os.Symlink(real, inTmp+"-link"); err != nil {
				t.Fatal(err)
			}
			p.symlink(inTmp+"-link", filepath.Join(p.root, "plugin-path"))
			p.extraEnv = append(p.extraEnv, "YAGENT_PLUGIN_PATH="+filepath.Join(p.root, "plugin-path"))
			out := p.mustRun("tools", "--all")
			plantRefused(t, out, "naive", "reached through the link "+inTmp+"-link, which is inside /tmp")
			if strings.Contains(out, "word_count") || len(started()) > 0 {
				t.Errorf("naive was listed or started (%v):\n%s", started(), out)
			}
		}},
		{"a planted copy of a plugin whose specs are cached: not described from the cache", func(t *testing.T, p *plantEnv) {
			// naive is described once from the user's own plugin folder,
			// which no command can write: its specs are cached by its sum.
			started := p.starts()
			installed := p.devCopy(filepath.Join(p.home, ".yagent", "plugins"), false)
			wantIn(t, p.mustRun("tools", "--all"), "word_count")
			if err := os.Remove(installed); err != nil {
				t.Fatal(err)
			}
			before := len(started())
			p.devCopy(p.ws("download"), false) // the attacker's download, in the workspace
			c := p.serve()
			allowed(t, sbRun(t, c, "cp download/yagent-plugin-naive bin/plugins/ && echo copied", 0), "copied")
			_ = c.Close()
			out := p.mustRun("tools", "--all")
			plantRefused(t, out, "naive", "inside the workspace")
			if strings.Contains(out, "word_count") || len(started()) != before {
				t.Errorf("the planted naive was listed or started (%d starts, %d before):\n%s", len(started()), before, out)
			}
		}},
		{"pinned by the user after it was planted: runs", func(t *testing.T, p *plantEnv) {
			p.plant(filepath.Join(p.plugins, "yagent-plugin-zz"), plantScript, "-y")
			wantIn(t, p.mustRun("plugins", "pin", "zz"), "pinned zz ")
			if p.ran() {
				t.Fatal("pin launched the plugin; it must only hash it")
			}
			out := p.mustRun("tools")
			if !p.ran() || strings.Contains(out, "commands can write") {
				t.Errorf("the pinned plugin did not run (ran %v):\n%s", p.ran(), out)
			}
		}},
		{"a binary pinned earlier, replaced by a command: the pin mismatch refuses it", func(t *testing.T, p *plantEnv) {
			wantIn(t, p.mustRun("plugins", "pin", "fs"), "pinned fs ")
			p.plant(filepath.Join(p.plugins, "yagent-plugin-fs"), plantScript, "-y")
			out := p.mustRun("tools", "-y")
			wantIn(t, out, "plugin fs refused: ", "the lock file pins")
			if p.ran() {
				t.Error("the replaced pinned plugin ran")
			}
		}},
		// What must keep working.
		{"benign: the first start after a build in the workspace loads every family", func(t *testing.T, p *plantEnv) {
			out := p.mustRun("tools", "--all")
			wantIn(t, out, "read_file", "run_bash", "grep", "think")
			if strings.Contains(out, "refused") {
				t.Errorf("a plugin of the build was refused:\n%s", out)
			}
			if out := p.mustRun("plugins", "list"); strings.Contains(out, "REFUSED") {
				t.Errorf("plugins list refuses a plugin of the build:\n%s", out)
			}
		}},
		{"benign: an unpinned custom plugin in a folder no command can write loads, unpinned", func(t *testing.T, p *plantEnv) {
			p.devCopy(filepath.Join(p.home, ".yagent", "plugins"), false)
			out := p.mustRun("tools", "--all")
			wantIn(t, out, "word_count")
			if strings.Contains(out, "refused") {
				t.Errorf("the custom plugin was refused:\n%s", out)
			}
			blocked(t, p.serve().call(t, "word_count", map[string]any{"path": "bin/yagent"}))
		}},
		{"benign: plugin_dev_dir in the workspace loads, with its warning", func(t *testing.T, p *plantEnv) {
			p.devCopy(p.ws("dev"), false)
			out := p.mustRun("tools", "--all", "--plugin-dev-dir", p.ws("dev"))
			wantIn(t, out, "word_count", "plugin dev override in effect")
			if strings.Contains(out, "refused") {
				t.Errorf("the dev override's plugin was refused:\n%s", out)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// One at a time: each env holds a copy of the build.
			tc.run(t, newPlantEnv(t))
		})
	}
}
