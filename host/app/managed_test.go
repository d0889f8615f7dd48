package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/pluginmgr"
)

// TestApplyManagedLock: a plugin the managed lock pins must have that sum,
// whatever the user's lock said; one it does not name is left alone.
func TestApplyManagedLock(t *testing.T) {
	t.Parallel()
	sum := func(c byte) string { return strings.Repeat(string(c), 64) }
	lock := filepath.Join(t.TempDir(), "plugins.lock")
	body := `{"plugins": {"fs": {"sha256": "` + sum('a') + `"}, "naive": {"sha256": "` + sum('b') + `"}}}`
	if err := os.WriteFile(lock, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := &pluginmgr.Plugin{Name: "fs", Path: "/p/fs", SHA256: sum('a')}
	naive := &pluginmgr.Plugin{Name: "naive", Path: "/p/naive", SHA256: sum('c'), Pinned: true} // pinned by the user's lock
	other := &pluginmgr.Plugin{Name: "other", Path: "/p/other", SHA256: sum('d')}
	var warnings []string
	managed, err := readManagedLock(lock)
	if err != nil {
		t.Fatal(err)
	}
	applyManagedLock(lock, managed, []*pluginmgr.Plugin{fs, naive, other}, &warnings)
	if fs.Refused != nil || !fs.Pinned {
		t.Errorf("fs: refused %v pinned %v; want pinned by the managed lock", fs.Refused, fs.Pinned)
	}
	if naive.Refused == nil || naive.Pinned || !strings.Contains(naive.Refused.Error(), lock) {
		t.Errorf("naive: refused %v pinned %v; want refused, naming %s", naive.Refused, naive.Pinned, lock)
	}
	if other.Refused != nil || other.Pinned {
		t.Errorf("other: refused %v pinned %v; want untouched", other.Refused, other.Pinned)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "naive") {
		t.Errorf("warnings %q; want one naming naive", warnings)
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
