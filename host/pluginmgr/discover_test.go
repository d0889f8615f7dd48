package pluginmgr

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func jsonUnmarshal(data any, v any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
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

// fakeBinary writes an executable (or not) file named yagent-plugin-<name>.
func fakeBinary(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, BinaryPrefix+name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	first, second := t.TempDir(), t.TempDir()
	fsFirst := fakeBinary(t, first, "fs", 0o755)
	fsSecond := fakeBinary(t, second, "fs", 0o755)
	hello := fakeBinary(t, second, "hello", 0o755)
	noExec := fakeBinary(t, second, "noexec", 0o644)
	fakeBinary(t, second, "Bad.Name", 0o755)
	if err := os.Mkdir(filepath.Join(first, BinaryPrefix+"adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hello, filepath.Join(first, BinaryPrefix+"linked")); err != nil {
		t.Fatal(err)
	}
	fakeBinary(t, first, "", 0o755)                                        // "yagent-plugin-": no name
	os.WriteFile(filepath.Join(first, "other-binary"), []byte("x"), 0o755) //nolint:errcheck // not a plugin
	missing := filepath.Join(t.TempDir(), "does-not-exist")

	m := New(Options{Dirs: []string{first, missing, second}, FirstParty: []string{"fs", "shell"}})
	found, warnings := m.Discover()

	want := []Found{
		{Name: "fs", Path: fsFirst},
		{Name: "hello", Path: hello},
		{Name: "linked", Path: filepath.Join(first, BinaryPrefix+"linked")},
	}
	if !reflect.DeepEqual(found, want) {
		t.Errorf("Discover found:\n got %+v\nwant %+v", found, want)
	}
	all := strings.Join(warnings, "\n")
	checks := []struct {
		what  string
		parts []string
	}{
		{"the later duplicate, naming both", []string{"plugin fs", fsSecond, "is ignored", fsFirst, "found first"}},
		{"the non-executable file", []string{noExec, "not executable"}},
		{"the bad name", []string{`"Bad.Name" is not a plugin name`}},
		{"the missing first-party binary and the folders searched", []string{"yagent-plugin-shell not found in", first, missing, second}},
	}
	for _, c := range checks {
		ok := false
		for _, w := range warnings {
			hit := true
			for _, p := range c.parts {
				hit = hit && strings.Contains(w, p)
			}
			ok = ok || hit
		}
		if !ok {
			t.Errorf("no warning about %s (want one line with %q); warnings:\n%s", c.what, c.parts, all)
		}
	}
	if n := strings.Count(all, "yagent-plugin-shell"); n != 1 {
		t.Errorf("the missing first-party binary is named in %d warnings, want 1:\n%s", n, all)
	}
	if strings.Contains(all, "yagent-plugin-fs not found") {
		t.Errorf("fs was found but is reported missing:\n%s", all)
	}
	if strings.Contains(all, missing+" cannot be read") {
		t.Errorf("a missing folder is not worth a warning:\n%s", all)
	}
	if len(warnings) != 4 {
		t.Errorf("got %d warnings, want 4:\n%s", len(warnings), all)
	}
}

func TestDiscover_MissingFirstPartyDoesNotFail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := New(Options{Dirs: []string{dir}, CacheDir: t.TempDir(), FirstParty: []string{"browser"}})
	plugins, warnings, err := m.Load(t.Context())
	if err != nil || len(plugins) != 0 {
		t.Fatalf("Load with a missing first-party plugin: %d plugins, %v; want none and no error", len(plugins), err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "yagent-plugin-browser") || !strings.Contains(warnings[0], dir) {
		t.Errorf("warnings %q, want one naming yagent-plugin-browser and %s", warnings, dir)
	}
}

func TestDefaultDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	extra1, extra2 := t.TempDir(), t.TempDir()
	t.Setenv("YAGENT_PLUGIN_PATH", extra1+string(os.PathListSeparator)+string(os.PathListSeparator)+extra2+string(os.PathListSeparator)+extra1)
	binDir, err := filepath.EvalSymlinks(t.TempDir()) // /var is /private/var on macOS
	if err != nil {
		t.Fatal(err)
	}
	got := DefaultDirs(filepath.Join(binDir, "yagent"))
	want := []string{filepath.Join(binDir, "plugins"), binDir, filepath.Join(home, ".yagent", "plugins"), extra1, extra2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultDirs:\n got %q\nwant %q", got, want)
	}
	if got := DefaultDirs(""); !reflect.DeepEqual(got, want[2:]) {
		t.Errorf("DefaultDirs(\"\"):\n got %q\nwant %q", got, want[2:])
	}
	// A link to the binary (/usr/local/bin/yagent) leads to the folders
	// beside the binary it names, not beside the link.
	real := filepath.Join(binDir, "yagent")
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "yagent")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got := DefaultDirs(link); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultDirs(a link to the binary):\n got %q\nwant %q", got, want)
	}
}

// TestDiscover_BesideTheBinary: with the default folders, plugins that go
// install put beside yagent are found there, and a plugin in the plugins
// folder beside it wins over one of the same name beside the binary.
func TestDiscover_BesideTheBinary(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("YAGENT_PLUGIN_PATH", "")
	binDir := t.TempDir()
	fs := fakeBinary(t, binDir, "fs", 0o755)
	fakeBinary(t, binDir, "shell", 0o755)
	if err := os.Mkdir(filepath.Join(binDir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	shell := fakeBinary(t, filepath.Join(binDir, "plugins"), "shell", 0o755)
	found, warnings := New(Options{Dirs: DefaultDirs(filepath.Join(binDir, "yagent")), FirstParty: []string{"fs", "shell"}}).Discover()
	want := []Found{{Name: "fs", Path: fs}, {Name: "shell", Path: shell}}
	if !reflect.DeepEqual(found, want) {
		t.Errorf("found %+v\nwant  %+v", found, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "plugin shell: "+filepath.Join(binDir, BinaryPrefix+"shell")+" is ignored") {
		t.Errorf("warnings %q, want the shell beside the binary named as ignored", warnings)
	}
}

// TestDiscoverDevDir: the dev folder's binaries come first, marked Dev,
// with the binary each stands in for; the plugin folders' of that name are
// not warned about as duplicates; a dev folder that is not there is.
func TestDiscoverDevDir(t *testing.T) {
	t.Parallel()
	dev, inst := t.TempDir(), t.TempDir()
	devHello := fakeBinary(t, dev, "hello", 0o755)
	fakeBinary(t, dev, "fresh", 0o755)
	instHello := fakeBinary(t, inst, "hello", 0o755)
	instOther := fakeBinary(t, inst, "other", 0o755)
	found, warnings := New(Options{Dirs: []string{inst}, DevDir: dev}).Discover()
	want := []Found{
		{Name: "fresh", Path: filepath.Join(dev, BinaryPrefix+"fresh"), Dev: true},
		{Name: "hello", Path: devHello, Dev: true, Shadows: instHello},
		{Name: "other", Path: instOther},
	}
	if !reflect.DeepEqual(found, want) {
		t.Errorf("found %+v\nwant  %+v", found, want)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings %q, want none", warnings)
	}
	// The dev folder also among the plugin folders stands in for nothing.
	found, warnings = New(Options{Dirs: []string{dev, inst}, DevDir: dev}).Discover()
	if len(found) != 3 || found[1].Shadows != instHello || found[0].Shadows != "" || len(warnings) > 0 {
		t.Errorf("dev folder listed twice: found %+v, warnings %q", found, warnings)
	}
	_, warnings = New(Options{Dirs: []string{inst}, DevDir: filepath.Join(dev, "gone")}).Discover()
	if len(warnings) != 1 || !strings.Contains(warnings[0], filepath.Join(dev, "gone")) {
		t.Errorf("a missing dev folder: warnings %q, want it named", warnings)
	}
}
