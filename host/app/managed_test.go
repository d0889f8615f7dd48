package app

import (
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
	if err := applyManagedLock(lock, []*pluginmgr.Plugin{fs, naive, other}, &warnings); err != nil {
		t.Fatal(err)
	}
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
	if err := applyManagedLock(lock, nil, &warnings); err == nil {
		t.Error("a managed lock that does not parse was accepted; want the start to fail")
	}
}
