package chrome

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	required := []string{
		"--headless=new", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-crashpad-for-testing", "--user-data-dir=/tmp/p x",
	}
	cases := []struct {
		name      string
		root      bool
		noSandbox bool
	}{
		{"as root", true, true},
		{"as a user", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := Args(Options{UserDataDir: "/tmp/p x", Root: tc.root})
			for _, want := range required {
				if !slices.Contains(args, want) {
					t.Errorf("Args: missing %q in %q", want, args)
				}
			}
			if got := slices.Contains(args, "--no-sandbox"); got != tc.noSandbox {
				t.Errorf("Args(Root: %v): --no-sandbox present %v, want %v", tc.root, got, tc.noSandbox)
			}
			if !slices.Contains(args, "--window-size=1280,720") {
				t.Errorf("Args: no default window size in %q", args)
			}
			for _, a := range args {
				// One argument each, as execve gets them: no shell reads them.
				if !strings.HasPrefix(a, "--") {
					t.Errorf("Args: %q is not a flag", a)
				}
			}
		})
	}
}

func TestFlag(t *testing.T) {
	t.Parallel()
	cases := []struct {
		arg   string
		name  string
		value any
	}{
		{"--headless=new", "headless", "new"},
		{"--no-sandbox", "no-sandbox", true},
		{"--user-data-dir=/a=b c", "user-data-dir", "/a=b c"},
	}
	for _, tc := range cases {
		if name, value := Flag(tc.arg); name != tc.name || value != tc.value {
			t.Errorf("Flag(%q) = %q, %v; want %q, %v", tc.arg, name, value, tc.name, tc.value)
		}
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	binary := filepath.Join(dir, "google-chrome")
	if err := os.WriteFile(binary, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "my-browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec true \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	onPath := map[string]string{"google-chrome": binary, "my-browser": script}
	lookPath := func(name string) (string, error) {
		if filepath.IsAbs(name) {
			if _, err := os.Stat(name); err != nil {
				return "", err
			}
			return name, nil
		}
		if p, ok := onPath[name]; ok {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
	cases := []struct {
		name       string
		configured string
		want       string
		errSays    []string
	}{
		{"first candidate on PATH", "", binary, nil},
		{"configured name", "my-browser", script, nil}, // no known binary behind it: the script itself
		{"configured path", binary, binary, nil},
		{"configured but missing", "/nope/chromium", "", []string{`"/nope/chromium"`, "apt-get install chromium", SettingChromium}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := find(tc.configured, lookPath)
			if tc.errSays != nil {
				var nf *NotFoundError
				if !errors.As(err, &nf) {
					t.Fatalf("find(%q): %v, want a NotFoundError", tc.configured, err)
				}
				for _, s := range tc.errSays {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("find(%q): error %q does not say %q", tc.configured, err, s)
					}
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("find(%q) = %q, %v; want %q", tc.configured, got, err, tc.want)
			}
		})
	}
	_, err := find("", func(string) (string, error) { return "", exec.ErrNotFound })
	for _, s := range append(slices.Clone(Candidates), "apt-get install chromium", SettingChromium) {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("nothing on PATH: error %v does not say %q", err, s)
		}
	}
}

func TestIsScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"script": "#!/bin/sh\n", "binary": "\x7fELF", "empty": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]bool{"script": true, "binary": false, "empty": false, "missing": false} {
		if got := isScript(filepath.Join(dir, name)); got != want {
			t.Errorf("isScript(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestSweepProfiles(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	// A pid that is not running: a finished child's.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	mine, err := NewProfileDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, fmt.Sprintf("%s%d-abc", profilePrefix, dead))
	other := filepath.Join(parent, "something-else")
	for _, d := range []string{stale, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if n := SweepProfiles(parent); n != 1 {
		t.Fatalf("SweepProfiles removed %d folders, want 1", n)
	}
	for d, want := range map[string]bool{mine: true, stale: false, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists %v, want %v", d, err == nil, want)
		}
	}
	if st, err := os.Stat(mine); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the profile folder is %v (%v), want 0700", st.Mode().Perm(), err)
	}
}

// The helper: the test binary re-executed with helperEnv set starts a
// process prepared by Prepare (a shell that starts a sleep of its own),
// prints both pids, and waits to be killed.
const helperEnv = "CHROME_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "parent" {
		os.Exit(helperParent())
	}
	os.Exit(m.Run())
}

func helperParent() int {
	cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", "sleep 60 & echo $!; wait")
	Prepare(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		return 1
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	fmt.Printf("%d %s\n", cmd.Process.Pid, strings.TrimSpace(string(buf[:n])))
	select {}
}

// TestPreparedProcessDiesWithThePlugin: a process started with Prepare is
// killed by the kernel when the plugin is killed with SIGKILL, and leads a
// process group of its own, so its own children can be killed with it.
func TestPreparedProcessDiesWithThePlugin(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"=parent")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var shell, sleeper int
	if _, err := fmt.Fscan(out, &shell, &sleeper); err != nil {
		t.Fatalf("read the helper's pids: %v", err)
	}
	if pg, err := syscall.Getpgid(shell); err != nil || pg != shell {
		t.Fatalf("the prepared process %d is in group %d (%v), want its own", shell, pg, err)
	}
	if pg, err := syscall.Getpgid(sleeper); err != nil || pg != shell {
		t.Fatalf("its child %d is in group %d (%v), want %d", sleeper, pg, err, shell)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	waitGone(t, shell)
	// The shell's child is in the group the plugin reports to the host;
	// the host's kill of that group is what ends it.
	if err := KillGroup(shell); err != nil {
		t.Fatal(err)
	}
	waitGone(t, sleeper)
}

// TestPrepareCancelKillsTheGroup: cancelling the command's context kills
// the whole group, not only the direct child.
func TestPrepareCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), "/bin/sh", "-c", "sleep 60 & echo $!; wait")
	Prepare(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var sleeper int
	if _, err := fmt.Fscan(out, &sleeper); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Cancel(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, sleeper)
}

// waitGone polls until pid is gone or a zombie, at most 10s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
