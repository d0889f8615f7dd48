package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk/sandbox"
)

// newTmpEnv is an env whose home, workspace and TMPDIR lie outside /tmp
// (under /var/tmp), so a session's temp folder stands for /tmp; its hosts
// keep the session folders under its own TMPDIR. It skips where the
// sandbox cannot bind them (no mount namespace or Landlock here).
func newTmpEnv(t *testing.T) (*env, string) {
	t.Helper()
	if l := sandbox.Probe(); !l.MountNS || l.LandlockABI == 0 {
		t.Skipf("no private temp folder here: %v", l.Missing)
	}
	root, err := os.MkdirTemp("/var/tmp", "yagent-e2e-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	e := newEnv(t)
	e.home, e.workspace = filepath.Join(root, "home"), filepath.Join(root, "ws")
	tmpdir := filepath.Join(root, "tmp")
	for _, d := range []string{e.home, e.workspace, tmpdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.extraEnv = append(e.extraEnv, "TMPDIR="+tmpdir)
	return e, tmpdir
}

// sessionFolder is the session temp folder under tmpdir that holds name.
func sessionFolder(t *testing.T, tmpdir, name string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(tmpdir, "yagent-tmp-*", "s.*", name))
	if len(found) != 1 {
		t.Fatalf("%d session folders under %s hold %s, want one", len(found), tmpdir, name)
	}
	return filepath.Dir(found[0])
}

// TestServe_FileToolsAndCommandsShareTheSessionsTmp: a file a command
// writes in /tmp is what read_file /tmp reads, a file write_file puts in
// /tmp is what the next command finds there, both in the session's own
// folder, and the folder goes when the session ends.
func TestServe_FileToolsAndCommandsShareTheSessionsTmp(t *testing.T) {
	e, tmpdir := newTmpEnv(t)
	a, b := "e2e-a-"+strconv.Itoa(os.Getpid()), "e2e-b-"+strconv.Itoa(os.Getpid())
	c := e.serve(nil)
	if r := c.call(t, "run_bash", map[string]any{"command": `echo "from the command in $TMPDIR" > /tmp/` + a}); r.IsError {
		t.Fatalf("run_bash: %s", text(r))
	}
	if r := c.call(t, "read_file", map[string]any{"path": "/tmp/" + a}); r.IsError || !strings.Contains(text(r), "from the command in /tmp") {
		t.Errorf("read_file /tmp/%s: %s", a, text(r))
	}
	if r := c.call(t, "write_file", map[string]any{"path": "/tmp/" + b, "content": "from write_file\n"}); r.IsError {
		t.Fatalf("write_file /tmp/%s: %s", b, text(r))
	}
	if r := c.call(t, "run_bash", map[string]any{"command": "cat /tmp/" + b}); r.IsError || !strings.Contains(text(r), "from write_file") {
		t.Errorf("cat /tmp/%s after write_file: %s", b, text(r))
	}
	dir := sessionFolder(t, tmpdir, b)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the session's folder %s: %v, %v; want 0700", dir, fi, err)
	}
	for _, name := range []string{a, b} {
		if _, err := os.Stat(filepath.Join("/tmp", name)); err == nil {
			os.Remove(filepath.Join("/tmp", name))
			t.Errorf("/tmp/%s reached the machine's /tmp", name)
		}
	}
	_ = c.Close()
	_ = c.cmd.Wait()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the session ended with its host, its folder %s is still there (%v)", dir, err)
	}
}

// TestHTTP_SessionsTmpApartAndKeptForBackground: two sessions of one host
// each see their own /tmp; an ended session's folder stays while its
// is_background command lives and goes once it has ended; the other
// session's stays with it.
func TestHTTP_SessionsTmpApartAndKeptForBackground(t *testing.T) {
	e, tmpdir := newTmpEnv(t)
	h := e.serveHTTP(e2eToken)
	a, b := h.connect(t), h.connect(t)
	if r := callHTTP(t, a, "run_bash", map[string]any{"command": "echo A > /tmp/a-only"}); r.IsError {
		t.Fatalf("session A: %s", text(r))
	}
	if r := callHTTP(t, b, "run_bash", map[string]any{"command": "cat /tmp/a-only 2>/dev/null || echo none; echo B > /tmp/b-only"}); r.IsError || strings.TrimSpace(text(r)) != "none" {
		t.Errorf("session B reads session A's /tmp/a-only: %s", text(r))
	}
	if r := callHTTP(t, b, "read_file", map[string]any{"path": "/tmp/a-only"}); !r.IsError {
		t.Errorf("read_file in session B found session A's /tmp/a-only: %s", text(r))
	}
	da, db := sessionFolder(t, tmpdir, "a-only"), sessionFolder(t, tmpdir, "b-only")
	if r := callHTTP(t, a, "run_bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 1000", "is_background": true}); r.IsError {
		t.Fatalf("background run_bash: %s", text(r))
	}
	bg := readPID(t, filepath.Join(e.workspace, "bg.pid"))
	t.Cleanup(func() { _ = syscall.Kill(bg, syscall.SIGKILL) })
	if got := h.delete(t, a.ID()); got != http.StatusNoContent {
		t.Fatalf("DELETE session A: %d", got)
	}
	time.Sleep(time.Second)
	if _, err := os.Stat(da); err != nil {
		t.Fatalf("session A ended and its folder went while its background command lives: %v", err)
	}
	_ = syscall.Kill(bg, syscall.SIGKILL)
	eventually(t, "session A's folder to go after its background command ended", func() bool {
		_, err := os.Stat(da)
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(db); err != nil {
		t.Errorf("session B's folder went with A's: %v", err)
	}
	if r := callHTTP(t, b, "run_bash", map[string]any{"command": "cat /tmp/b-only"}); r.IsError || !strings.Contains(text(r), "B") {
		t.Errorf("session B's /tmp after A ended: %s", text(r))
	}
}

// TestServe_SweepsFoldersOfDeadHosts: a session folder left by a host that
// is gone is removed at the next start, unless a live background command
// holds it; a live host's folder is left alone.
func TestServe_SweepsFoldersOfDeadHosts(t *testing.T) {
	e, tmpdir := newTmpEnv(t)
	root := filepath.Join(tmpdir, "yagent-tmp-"+strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	// A host that ran and is gone: its pid and start time.
	dead := exec.Command("sleep", "60")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	start := procStart(t, dead.Process.Pid)
	deadMark := "s." + strconv.Itoa(dead.Process.Pid) + "." + start
	dead.Process.Kill()
	dead.Wait()
	left := filepath.Join(root, deadMark+".0a0b0c")
	held := filepath.Join(root, deadMark+".0d0e0f")
	for _, d := range []string{left, left + ".hold", held, held + ".hold"} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(left, "leftover"), []byte("x"), 0o600)
	bg := exec.Command("sleep", "60")
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bg.Process.Kill(); bg.Wait() })
	os.WriteFile(filepath.Join(held+".hold", strconv.Itoa(bg.Process.Pid)+"."+procStart(t, bg.Process.Pid)), nil, 0o600)
	mine := filepath.Join(root, "s."+strconv.Itoa(os.Getpid())+"."+procStart(t, os.Getpid())+".111111")
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}

	c := e.serve(nil)
	if r := c.call(t, "run_bash", map[string]any{"command": "echo started"}); r.IsError {
		t.Fatalf("run_bash: %s", text(r))
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the folder a dead host left is still there after the next start (%v)", err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("a folder a live background command holds was swept: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a live host's folder was swept: %v", err)
	}
	bg.Process.Kill()
	bg.Wait()
	eventually(t, "the held folder to go once its command ended", func() bool {
		_, err := os.Stat(held)
		return os.IsNotExist(err)
	})
}

// procStart is the start time of pid as /proc/PID/stat says it.
func procStart(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[19]
}

// TestCall_LeavesNoTempFolder: `yagent call` ends with its host, never
// ending its session on its own: the host's stop removes the folder.
func TestCall_LeavesNoTempFolder(t *testing.T) {
	e, tmpdir := newTmpEnv(t)
	out, err := e.cli("call", "run_bash", `{"command": "echo from the call > /tmp/c && cat /tmp/c"}`)
	if err != nil || !strings.Contains(out, "from the call") {
		t.Fatalf("yagent call run_bash: %v\n%s", err, out)
	}
	left, _ := filepath.Glob(filepath.Join(tmpdir, "yagent-tmp-*", "s.*"))
	if len(left) > 0 {
		t.Errorf("yagent call left session folders behind: %v", left)
	}
}
