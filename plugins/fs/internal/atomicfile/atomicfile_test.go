package atomicfile

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func openRoot(t *testing.T) (*os.Root, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
	return m
}

func TestWriteReplacesKeepingMode(t *testing.T) {
	t.Parallel()
	r, dir := openRoot(t)
	p := filepath.Join(dir, "f.sh")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o4751); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if err := Write(r, "f.sh", []byte("new"), Options{Replaces: fi}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	after, _ := os.Stat(p)
	if string(got) != "new" || after.Mode() != fi.Mode() {
		t.Errorf("after Write: %q mode %v, want %q mode %v", got, after.Mode(), "new", fi.Mode())
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestWriteAbortLeavesTargetAndNoTemp(t *testing.T) {
	t.Parallel()
	r, dir := openRoot(t)
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	sawTemp := false
	err := Write(r, "f", []byte("new"), Options{BeforeRename: func() error {
		sawTemp = len(temps(t, dir)) == 1
		return stop
	}})
	if !errors.Is(err, stop) {
		t.Fatalf("Write: got %v, want the BeforeRename error", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" || !sawTemp {
		t.Errorf("target %q (temp seen before rename: %v), want %q", got, sawTemp, "old")
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	r, dir := openRoot(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := TempPrefix + strconv.Itoa(cmd.Process.Pid) + "-aa"
	mine := TempPrefix + strconv.Itoa(os.Getpid()) + "-bb"
	for _, name := range []string{dead, mine, "sub/" + dead, ".yagent-tmp-x", "other"} {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := SweepTree(context.Background(), r, ".", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Errorf("removed %v, want the two files of the dead writer", removed)
	}
	for _, keep := range []string{mine, ".yagent-tmp-x", "other"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s removed: %v", keep, err)
		}
	}
}
