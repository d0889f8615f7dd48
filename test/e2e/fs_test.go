package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/host/session"
	"github.com/yagent/yagent/host/surface"
)

// TestFS_ConcurrentEditsThroughHost: 16 edits of different parts of one
// file, in flight together over MCP, all land.
func TestFS_ConcurrentEditsThroughHost(t *testing.T) {
	e := newEnv(t)
	var orig strings.Builder
	for i := range 16 {
		fmt.Fprintf(&orig, "line %02d: original\n", i)
	}
	path := filepath.Join(e.workspace, "shared.txt")
	if err := os.WriteFile(path, []byte(orig.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.serve(nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := callWithArgs(c, "search_replace_in_file", map[string]any{
				"path":       "shared.txt",
				"old_string": fmt.Sprintf("line %02d: original", i),
				"new_string": fmt.Sprintf("line %02d: edited", i),
			})
			if err != nil || r.IsError {
				t.Errorf("edit %d: %v %s", i, err, text(r))
			}
		}()
	}
	wg.Wait()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(orig.String(), "original", "edited")
	if string(got) != want {
		t.Fatalf("after 16 concurrent edits:\n%s\nwant:\n%s", got, want)
	}
}

// TestFS_KillDuringLargeWrite: SIGKILL of the fs plugin while it writes a
// 200 MB file leaves the old content or the new one, never a mix, and the
// restarted plugin removes the temp file the killed one left.
func TestFS_KillDuringLargeWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200 MB")
	}
	ws := t.TempDir()
	target := filepath.Join(ws, "big.txt")
	old := []byte("the old content\n")
	if err := os.WriteFile(target, old, 0o644); err != nil {
		t.Fatal(err)
	}
	mgr := pluginmgr.New(pluginmgr.Options{Dirs: []string{pluginsDir}, CacheDir: t.TempDir()})
	plugins, _, err := mgr.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(context.Background())
	fs := mgr.Plugin("fs")
	if fs == nil {
		t.Fatalf("no fs plugin among %v", plugins)
	}
	surf, err := surface.New([]surface.Source{{Plugin: "fs", Family: "fs", Specs: fs.Specs, Exec: fs}}, surface.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	sess := session.New("kill-during-write")

	content := bytes.Repeat([]byte("0123456789abcdef"), 200<<20/16)
	input, err := json.Marshal(map[string]string{"path": "big.txt", "content": string(content)})
	if err != nil {
		t.Fatal(err)
	}

	caught := false
	for attempt := 0; attempt < 3 && !caught; attempt++ {
		if r := surf.Call(context.Background(), sess, "read_file", json.RawMessage(`{"path":"big.txt","limit":1}`)); r.IsError() {
			t.Fatalf("read_file: %s", r.Text)
		}
		pid := fs.PID()
		done := make(chan string, 1)
		go func() {
			r := surf.Call(context.Background(), sess, "write_file", input)
			done <- r.Code
		}()
		// Kill as soon as the temp file is being written.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && !caught {
			if tmp := tempFiles(t, ws); len(tmp) > 0 {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				caught = true
				break
			}
			select {
			case code := <-done:
				t.Logf("attempt %d: the write finished (code %q) before it could be caught", attempt, code)
				deadline = time.Time{}
			default:
				time.Sleep(time.Millisecond)
			}
		}
		if caught {
			if code := <-done; code != "plugin_crashed" {
				t.Fatalf("the write in flight: want plugin_crashed, got %q", code)
			}
		}
	}
	if !caught {
		t.Fatal("never caught the plugin mid-write in 3 attempts")
	}

	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, old) && !bytes.Equal(got, content) {
		t.Fatalf("after the kill big.txt holds %d bytes: neither the old content nor the new", len(got))
	}
	if len(tempFiles(t, ws)) == 0 {
		t.Fatal("no temp file left by the killed write: the test did not kill it mid-write")
	}
	// The next call starts a fresh plugin, which sweeps the leftover.
	if r := surf.Call(context.Background(), sess, "list_dir", json.RawMessage(`{}`)); r.IsError() {
		t.Fatalf("list_dir after the crash: %s", r.Text)
	}
	if tmp := tempFiles(t, ws); len(tmp) > 0 {
		t.Fatalf("temp files left after the restart: %v", tmp)
	}
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".yagent-tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
