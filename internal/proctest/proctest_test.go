package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestChildrenAndAlive(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if got, ok := Children(os.Getpid())[pid]; !ok || got != filepath.Base(exe) {
		t.Fatalf("Children(self)[%d] = %q, %v; want %q", pid, got, ok, filepath.Base(exe))
	}
	if !Alive(pid) {
		t.Fatalf("Alive(%d) = false for a running sleep", pid)
	}
	_ = cmd.Process.Kill()
	// Killed but not reaped yet: a zombie does not count as alive.
	deadline := time.Now().Add(10 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("Alive(%d) still true 10s after SIGKILL, before reaping", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Wait()
	if _, ok := Children(os.Getpid())[pid]; ok {
		t.Fatalf("Children(self) still lists %d after it was reaped", pid)
	}
}
