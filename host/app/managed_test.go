package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadManagedLock: the admin's lock is read before any plugin loads
// (pluginmgr holds every plugin to it); one that does not parse fails the
// start rather than pinning nothing.
func TestReadManagedLock(t *testing.T) {
	t.Parallel()
	lock := filepath.Join(t.TempDir(), "plugins.lock")
	sum := strings.Repeat("a", 64)
	if err := os.WriteFile(lock, []byte(`{"plugins": {"fs": {"sha256": "`+sum+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readManagedLock(lock)
	if err != nil || got == nil || got.Plugins["fs"].SHA256 != sum {
		t.Fatalf("readManagedLock = %+v, %v; want the pin of fs", got, err)
	}
	if got, err := readManagedLock(""); got != nil || err != nil {
		t.Errorf("no managed lock: %+v, %v; want nil, nil", got, err)
	}
	if err := os.WriteFile(lock, []byte(`{"plugins": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readManagedLock(lock); err == nil {
		t.Error("a managed lock that does not parse was accepted; want the start to fail")
	}
}

// TestLoadProfileIsWhatOpenRuns: `yagent profiles show` resolves through
// LoadProfile; it must give the profile Open runs, a symlinked workspace
// and a project config included.
func TestLoadProfileIsWhatOpenRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".yagent"), filepath.Join(home, ".yagent"), filepath.Join(root, "plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".yagent", "config.yaml"), []byte("deny: [grep]\nread_paths: [/]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: link, Home: home, Profile: "readonly", PluginDirs: []string{filepath.Join(root, "plugins")},
		CacheDir: filepath.Join(root, "cache"), LockFile: filepath.Join(root, "plugins.lock")}
	ld, err := LoadProfile(opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(t.Context())
	got, _ := json.Marshal(ld.Profile)
	want, _ := json.Marshal(a.Profile)
	if string(got) != string(want) {
		t.Errorf("LoadProfile gives\n%s\nOpen runs\n%s", got, want)
	}
}
