package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
//
// The call goes through `yagent call write_file -` (a host process built
// without the race detector, fed from a file) so that the test spends its
// time on the write, not on instrumented JSON.
func TestFS_KillDuringLargeWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200 MB")
	}
	e := newEnv(t)
	target := filepath.Join(e.workspace, "big.txt")
	old := []byte("the old content\n")
	if err := os.WriteFile(target, old, 0o644); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	const size = 200 << 20
	input := filepath.Join(t.TempDir(), "input.json")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = `{"path": "big.txt", "content": "`
	fmt.Fprint(f, prefix)
	for range size / len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprint(f, `"}`)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	caught := false
	for attempt := 0; attempt < 3 && !caught; attempt++ {
		// Each attempt writes other bytes: a write of what the file already
		// holds writes nothing.
		in, err := os.OpenFile(input, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.WriteAt([]byte{byte('A' + attempt)}, int64(len(prefix))); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(yagent, append([]string{"call", "write_file", "-"}, e.args()...)...)
		cmd.Env = e.environ()
		cmd.Stdin = in
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		killed := false
		// Until the write's temp file shows or the call ends, however long
		// a busy machine takes to parse 200 MB.
	poll:
		for {
			select {
			case <-done:
				done <- nil
				break poll
			default:
			}
			if len(tempFiles(t, e.workspace)) > 0 {
				for pid, exe := range children(cmd.Process.Pid) {
					if exe == "yagent-plugin-fs" {
						killed = syscall.Kill(pid, syscall.SIGKILL) == nil
					}
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		<-done
		in.Close()
		caught = killed && strings.Contains(out.String(), "plugin_crashed")
		if !caught {
			t.Logf("attempt %d: not caught mid-write (killed=%v): %.300s", attempt, killed, out.String())
		}
	}
	if !caught {
		t.Fatal("never caught the plugin mid-write in 3 attempts")
	}

	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(old)) && fi.Size() != size {
		t.Fatalf("after the kill big.txt holds %d bytes: neither the old content nor the new", fi.Size())
	}
	if fi.Size() == int64(len(old)) {
		if got, _ := os.ReadFile(target); !bytes.Equal(got, old) {
			t.Fatalf("after the kill big.txt holds %q, not the old content", got)
		}
	}
	if len(tempFiles(t, e.workspace)) == 0 {
		t.Fatal("no temp file left by the killed write: the test did not kill it mid-write")
	}
	// The next call starts a fresh plugin, which sweeps the leftover.
	if out, err := e.cli("call", "list_dir", "{}"); err != nil {
		t.Fatalf("list_dir after the crash: %v\n%s", err, out)
	}
	if tmp := tempFiles(t, e.workspace); len(tmp) > 0 {
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
