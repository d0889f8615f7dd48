package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/internal/filestat"
)

// managedWrite writes a file of the env's managed layer (/etc/yagent in a
// release build), root-owned and writable by root only, as an admin would.
func (e *env) managedWrite(rel, content string) string {
	e.t.Helper()
	path := e.write(filepath.Join(e.managed, rel), content)
	for _, p := range []string{e.managed, filepath.Dir(path)} {
		if err := os.Chmod(p, 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// managedRefused fails t unless yagent refused to start over path, naming
// it and the fix.
func managedRefused(t *testing.T, e *env, path string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the managed layer is trusted only from root; these files belong to the test's user")
	}
	out, err := e.cli("", "tools")
	if err == nil {
		t.Fatalf("yagent started over an untrusted managed layer:\n%s", out)
	}
	if !strings.Contains(out, path) || !strings.Contains(out, "chmod go-w") || !strings.Contains(out, "chown root") {
		t.Errorf("the refusal does not name %s and the fix:\n%s", path, out)
	}
}

const managedDenyCat = "exec: {rules: [{action: deny, program: cat}]}\n"

// TestManagedLayer: the admin's managed layer is a ceiling. Its exec deny
// and tool deny survive a user profile, flags, YAGENT_* variables, -y, -Y
// and the project; its families bound everyone's; its lock pins beat the
// user's; a managed file anyone but root may write is refused and named.
func TestManagedLayer(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("the managed layer is trusted only from root; these files belong to the test's user")
	}
	catSecret := func(t *testing.T, e *env, flags ...string) {
		t.Helper()
		s := e.secret("s.txt")
		denied(t, e.serve(flags...).call(t, "run_bash", map[string]any{"command": "cat " + filepath.Join(e.outside, "s.txt")}), s)
	}
	touch := func(t *testing.T, e *env, flags ...string) {
		t.Helper()
		configStopped(t, e.serve(flags...).call(t, "run_bash", map[string]any{"command": "touch pwned"}))
		configAbsent(t, e.ws("pwned"))
	}
	cases := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"exec deny survives a user profile", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			e.configUser("profiles/open.yaml", "families: [fs, shell, search, cognitive]\nexec: {rules: [{action: allow, program: cat}]}\n")
			e.configUser("config.yaml", "profile: open\nexec: null\n")
			catSecret(t, e, "-y")
		}},
		{"exec deny survives a flag", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			catSecret(t, e, "-y", "--profile", "full")
		}},
		{"exec deny survives YAGENT_ variables", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			e.extraEnv = append(e.extraEnv, "YAGENT_PROFILE=full", "YAGENT_FAMILIES=fs,shell")
			catSecret(t, e, "-y")
		}},
		{"exec deny survives -y", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			catSecret(t, e, "-y")
		}},
		{"exec deny survives -Y", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			catSecret(t, e, "-Y")
		}},
		{"exec deny survives the project", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			e.configProject("config.yaml", "exec: null\nprofile: open\n")
			e.configProject("profiles/open.yaml", "exec: {rules: [{action: allow, program: cat}]}\n")
			catSecret(t, e, "-y")
		}},
		{"exec deny survives an authorized project", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			e.configProject("config.yaml", "exec: {rules: []}\n")
			e.configUser("settings.json", `{"authorized_projects": ["`+e.workspace+`"]}`+"\n")
			catSecret(t, e)
		}},
		{"tool deny survives user config, a flag and -y", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", "deny: [run_*]\n")
			e.configUser("config.yaml", "deny: []\n")
			touch(t, e, "-y", "--profile", "full")
		}},
		{"tool deny survives the project", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", "deny: [run_*]\n")
			e.configProject("config.yaml", "deny: []\n")
			touch(t, e, "-y")
		}},
		{"families are a ceiling over the user and the environment", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", "families: [fs, search, cognitive]\n")
			e.configUser("config.yaml", "families: [fs, shell]\n")
			e.extraEnv = append(e.extraEnv, "YAGENT_FAMILIES=fs,shell")
			touch(t, e, "-y")
		}},
		{"the admin's profile cannot be shadowed by the user's", func(t *testing.T, e *env) {
			e.managedWrite("profiles/corp.yaml", "families: [fs, shell, search, cognitive]\n"+managedDenyCat)
			e.managedWrite("config.yaml", "profile: corp\n")
			e.configUser("profiles/corp.yaml", "families: [fs, shell, search, cognitive]\n")
			catSecret(t, e, "-y")
		}},
		{"the admin's read_paths apply", func(t *testing.T, e *env) {
			s := e.secret("shared/doc.txt")
			e.managedWrite("config.yaml", "read_paths: ["+filepath.Join(e.outside, "shared")+"]\n")
			allowed(t, e.serve().call(t, "read_file", map[string]any{"path": filepath.Join(e.outside, "shared", "doc.txt")}), s)
		}},
		{"a managed lock pin beats the user's lock", func(t *testing.T, e *env) {
			e.write("a.txt", "one two three\n")
			e.pin("naive")
			e.managedWrite("plugins.lock", `{"plugins": {"naive": {"sha256": "`+strings.Repeat("0", 64)+`"}}}`+"\n")
			r := e.serve().call(t, "word_count", map[string]any{"path": "a.txt"})
			if r.Code == "" {
				t.Errorf("word_count of a plugin the managed lock refuses ran: %s", r)
			}
		}},
		{"a forged sha index does not pass a managed pin", func(t *testing.T, e *env) {
			// The sha index is the user's file: an entry claiming the pinned
			// sum for another binary must not be believed.
			e.write("a.txt", "one two three\n")
			forged := strings.Repeat("0", 64)
			e.managedWrite("plugins.lock", `{"plugins": {"naive": {"sha256": "`+forged+`"}}}`+"\n")
			bin := filepath.Join(binDir, "hostile", "yagent-plugin-naive")
			fi, err := os.Stat(bin)
			if err != nil {
				t.Fatal(err)
			}
			_, ino, _ := filestat.Inode(fi)
			index := map[string]any{"format": 0, "entries": map[string]any{bin: map[string]any{
				"inode": ino, "size": fi.Size(), "mtime_ns": fi.ModTime().UnixNano(),
				"ctime_ns": filestat.Ctime(fi), "sha256": forged,
			}}}
			// Take the format the host writes, so only the sum is forged.
			if _, err := e.cli("", "tools"); err != nil {
				t.Fatal(err)
			}
			idxPath := filepath.Join(e.home, ".yagent", "cache", "specs", "index.json")
			var cur struct{ Format int }
			if b, err := os.ReadFile(idxPath); err == nil && json.Unmarshal(b, &cur) == nil {
				index["format"] = cur.Format
			}
			b, _ := json.Marshal(index)
			e.write(idxPath, string(b))
			// The user's own lock agrees with the forged sum, so only the
			// managed pin stands between the binary and the surface.
			e.write(filepath.Join(e.home, ".yagent", "plugins.lock"), `{"plugins": {"naive": {"sha256": "`+forged+`"}}}`+"\n")
			r := e.serve().call(t, "word_count", map[string]any{"path": "a.txt"})
			if r.Code == "" {
				t.Errorf("word_count ran on a forged index entry claiming the managed pin: %s", r)
			}
		}},
		{"profiles show shows the managed layer", func(t *testing.T, e *env) {
			path := e.managedWrite("config.yaml", "deny: [web_fetch]\n")
			out, err := e.cli("", "profiles", "show", "coder")
			if err != nil {
				t.Fatalf("profiles show: %v\n%s", err, out)
			}
			if !strings.Contains(out, "deny: managed "+path) {
				t.Errorf("profiles show does not name %s as the origin of deny:\n%s", path, out)
			}
		}},
		{"a managed config writable by all is refused", func(t *testing.T, e *env) {
			path := e.managedWrite("config.yaml", managedDenyCat)
			if err := os.Chmod(path, 0o666); err != nil {
				t.Fatal(err)
			}
			managedRefused(t, e, path)
		}},
		{"a managed config owned by nobody is refused", func(t *testing.T, e *env) {
			path := e.managedWrite("config.yaml", managedDenyCat)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			managedRefused(t, e, path)
		}},
		{"a managed folder writable by all is refused", func(t *testing.T, e *env) {
			e.managedWrite("config.yaml", managedDenyCat)
			if err := os.Chmod(e.managed, 0o777); err != nil {
				t.Fatal(err)
			}
			managedRefused(t, e, e.managed)
		}},
		{"a managed profile owned by nobody is refused", func(t *testing.T, e *env) {
			path := e.managedWrite("profiles/corp.yaml", managedDenyCat)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			managedRefused(t, e, path)
		}},
		{"a managed lock writable by its group is refused", func(t *testing.T, e *env) {
			path := e.managedWrite("plugins.lock", "{}\n")
			if err := os.Chmod(path, 0o664); err != nil {
				t.Fatal(err)
			}
			managedRefused(t, e, path)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newEnv(t))
		})
	}
}
