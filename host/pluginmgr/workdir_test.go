package pluginmgr

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLaunch_PrivateEmptyWorkdir: a plugin process runs in a fresh empty
// folder of its own, not the host's working folder, and the folder goes
// when the process does.
func TestLaunch_PrivateEmptyWorkdir(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	p := loadTest(t, m)
	res, err := call(context.Background(), p, "test_echo", map[string]string{"text": "x"}, nil)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var out struct {
		Cwd     string `json:"cwd"`
		Entries int    `json:"entries"`
	}
	if err := jsonUnmarshal(res.Data, &out); err != nil {
		t.Fatalf("decode %s: %v", res.Data, err)
	}
	hostWd, _ := os.Getwd()
	if out.Cwd == "" || out.Cwd == hostWd || !strings.HasPrefix(filepath.Base(out.Cwd), "yagent-plugin-test-") {
		t.Fatalf("plugin cwd = %q (host's %q), want a private yagent-plugin-test-* folder", out.Cwd, hostWd)
	}
	if out.Entries != 0 {
		t.Errorf("plugin cwd %s holds %d entries, want an empty folder", out.Cwd, out.Entries)
	}
	fi, err := os.Stat(out.Cwd)
	if err != nil {
		t.Fatalf("stat plugin cwd: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("plugin cwd mode %o, want 0700", perm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Removed once the process has exited; bounded polling.
	for i := 0; ; i++ {
		_, err := os.Stat(out.Cwd)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if i == 200 {
			t.Fatalf("plugin cwd %s still exists after the plugin exited (%v)", out.Cwd, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
