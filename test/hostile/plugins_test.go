package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// starts makes the naive plugin leave a file in a fresh folder at each
// start, and returns a func listing the binaries that started.
func (e *env) starts() func() []string {
	e.t.Helper()
	dir := filepath.Join(e.root, "starts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.extraEnv = append(e.extraEnv, "NAIVE_STARTS="+dir)
	return func() []string {
		ents, _ := os.ReadDir(dir)
		var out []string
		for _, en := range ents {
			b, _ := os.ReadFile(filepath.Join(dir, en.Name()))
			out = append(out, string(b))
		}
		return out
	}
}

// devCopy copies the naive plugin into dir, appending extra bytes (a
// rebuilt binary has another sum) when rebuilt is set, and returns its path.
func (e *env) devCopy(dir string, rebuilt bool) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(binDir, "hostile", "yagent-plugin-naive"))
	if err != nil {
		e.t.Fatal(err)
	}
	if rebuilt {
		b = append(b, "rebuilt"...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(dir, "yagent-plugin-naive")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// TestCustomPluginOff: a custom plugin switched off (plugins.NAME.enabled:
// false) by the user or the admin is never launched and its tools are not
// there; a project, trusted or not, can switch it off but never back on.
func TestCustomPluginOff(t *testing.T) {
	t.Parallel()
	const off, on = "plugins: {naive: {enabled: false}}\n", "plugins: {naive: {enabled: true}}\n"
	// gone fails t unless word_count did not run, is said to be off, and
	// naive never started.
	gone := func(t *testing.T, e *env, started func() []string, r result) {
		t.Helper()
		if r.Code == "" || strings.Contains(r.Text, "three small words") {
			t.Errorf("word_count of a plugin switched off ran: %s", r)
		}
		if !strings.Contains(r.Text, "naive (profile coder switches it off (plugins.naive.enabled: false))") {
			t.Errorf("the answer does not say naive is off: %s", r)
		}
		if s := started(); len(s) > 0 {
			t.Errorf("naive was launched though off: %q", s)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, e *env, started func() []string)
	}{
		{"on, it is launched and runs (the marker works)", func(t *testing.T, e *env, started func() []string) {
			allowed(t, e.serve("-y").call(t, "word_count", map[string]any{"path": e.ws("a.txt")}), "three small words")
			if len(started()) == 0 {
				t.Errorf("naive ran but left no start marker")
			}
		}},
		{"the user switches it off", func(t *testing.T, e *env, started func() []string) {
			e.configUser("config.yaml", off)
			if out, err := e.cli("", "tools", "--all"); err != nil || strings.Contains(out, "word_count") {
				t.Errorf("tools --all (err %v) lists the tools of a plugin switched off:\n%s", err, out)
			}
			gone(t, e, started, e.serve("-y").call(t, "word_count", map[string]any{"path": e.ws("a.txt")}))
		}},
		{"the project switches back on what the user switched off", func(t *testing.T, e *env, started func() []string) {
			e.configUser("config.yaml", off)
			e.configProject("config.yaml", on)
			c := e.serve("-y")
			gone(t, e, started, c.call(t, "word_count", map[string]any{"path": e.ws("a.txt")}))
			wantIn(t, c.stderr.String(), "plugins.naive.enabled ignored")
		}},
		{"an authorized project switches back on what the user switched off", func(t *testing.T, e *env, started func() []string) {
			e.configUser("config.yaml", off)
			e.configUser("settings.json", `{"authorized_projects": ["`+e.workspace+`"]}`+"\n")
			e.configProject("config.yaml", on)
			gone(t, e, started, e.serve("-y").call(t, "word_count", map[string]any{"path": e.ws("a.txt")}))
		}},
		{"the project's own profile switches it back on", func(t *testing.T, e *env, started func() []string) {
			e.configUser("config.yaml", off)
			e.configProject("profiles/open.yaml", on)
			e.configProject("config.yaml", "profile: open\n")
			gone(t, e, started, e.serve("-y").call(t, "word_count", map[string]any{"path": e.ws("a.txt")}))
		}},
		{"the project switches it off", func(t *testing.T, e *env, started func() []string) {
			e.configProject("config.yaml", off)
			gone(t, e, started, e.serve("-y").call(t, "word_count", map[string]any{"path": e.ws("a.txt")}))
		}},
		{"the user switches back on what the admin switched off", func(t *testing.T, e *env, started func() []string) {
			if os.Getuid() != 0 {
				t.Skip("the managed layer is trusted only from root; these files belong to the test's user")
			}
			e.managedWrite("config.yaml", off)
			e.configUser("config.yaml", on)
			gone(t, e, started, e.serve("-y").call(t, "word_count", map[string]any{"path": e.ws("a.txt")}))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			started := e.starts()
			e.write("a.txt", "three small words\n")
			tc.run(t, e, started)
		})
	}
}

// TestPluginDevDir: the dev override folder is the user's, the admin's or
// a flag's: a project's is refused, relative or absolute, and none of its
// binaries runs; the override's plugins count as unpinned whatever the lock
// says, are named at every start, and do not get past the admin's pins.
func TestPluginDevDir(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(t *testing.T, e *env, started func() []string)
	}{
		{"a project sets a dev folder of its own", func(t *testing.T, e *env, started func() []string) {
			dev := e.devCopy(e.ws(".yagent/plugins"), true)
			e.configProject("config.yaml", "plugin_dev_dir: .yagent/plugins\n")
			c := e.serve("-y")
			allowed(t, c.call(t, "word_count", map[string]any{"path": e.ws("a.txt")}), "three small words")
			wantIn(t, c.stderr.String(), "plugin_dev_dir refused: a project may not set a plugin dev override")
			for _, s := range started() {
				if s == dev {
					t.Errorf("the project's dev binary %s ran", dev)
				}
			}
		}},
		{"a project sets an absolute dev folder", func(t *testing.T, e *env, started func() []string) {
			dev := e.devCopy(filepath.Join(e.outside, "dev"), true)
			e.configProject("config.yaml", "plugin_dev_dir: "+filepath.Dir(dev)+"\n")
			e.configUser("settings.json", `{"authorized_projects": ["`+e.workspace+`"]}`+"\n")
			c := e.serve("-y")
			allowed(t, c.call(t, "word_count", map[string]any{"path": e.ws("a.txt")}), "three small words")
			wantIn(t, c.stderr.String(), "plugin_dev_dir refused")
			if strings.Contains(c.stderr.String(), "dev override in effect") {
				t.Errorf("the project's dev folder is in effect:\n%s", c.stderr.String())
			}
			for _, s := range started() {
				if s == dev {
					t.Errorf("the project's dev binary %s ran", dev)
				}
			}
		}},
		{"a dev binary with the pinned sum still counts as unpinned", func(t *testing.T, e *env, started func() []string) {
			e.pin("naive")
			allowed(t, e.serve().call(t, "word_count", map[string]any{"path": "a.txt"}), "three small words")
			dev := e.devCopy(filepath.Join(e.outside, "dev"), false)
			e.configUser("config.yaml", "plugin_dev_dir: "+filepath.Dir(dev)+"\n")
			c := e.serve()
			blocked(t, c.call(t, "word_count", map[string]any{"path": "a.txt"}))
			wantIn(t, c.stderr.String(), "plugin dev override in effect: the plugins of "+filepath.Dir(dev),
				"naive (instead of "+filepath.Join(binDir, "hostile", "yagent-plugin-naive")+")")
		}},
		{"a rebuilt dev binary gets past the admin's pin", func(t *testing.T, e *env, started func() []string) {
			if os.Getuid() != 0 {
				t.Skip("the managed layer is trusted only from root; these files belong to the test's user")
			}
			e.pin("naive")
			b, err := os.ReadFile(filepath.Join(e.home, ".yagent", "plugins.lock"))
			if err != nil {
				t.Fatal(err)
			}
			e.managedWrite("plugins.lock", string(b))
			dev := e.devCopy(filepath.Join(e.outside, "dev"), true)
			e.configUser("config.yaml", "plugin_dev_dir: "+filepath.Dir(dev)+"\n")
			c := e.serve("-y")
			r := c.call(t, "word_count", map[string]any{"path": e.ws("a.txt")})
			if r.Code == "" {
				t.Errorf("word_count of a dev binary the managed lock refuses ran: %s", r)
			}
			wantIn(t, c.stderr.String(), "managed lock file")
			for _, s := range started() {
				if s == dev {
					t.Errorf("the dev binary %s the admin's pin refuses ran", dev)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			started := e.starts()
			e.write("a.txt", "three small words\n")
			tc.run(t, e, started)
		})
	}
}
