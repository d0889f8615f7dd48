package hostile

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The sandbox tables hide every path and program they attack from the
// parse-time guard (built at run time, decoded, read from a script the
// guard never sees): under -y whatever the guard sees is approved, and an
// approval widens the call's sandbox, so only what the guard cannot see
// tests the kernel wall.

// sbSecrets are the markers of the private set one env holds: files in
// the home folder outside the toolchain caches, and /etc/shadow.
type sbSecrets struct {
	ssh, aws, config string
	shadow           string // the first line of /etc/shadow; "" when the test cannot read it
	sshPath          string
	awsPath          string
	configPath       string
}

// all returns every marker, for leaked.
func (s sbSecrets) all() []string { return []string{s.ssh, s.aws, s.config, s.shadow} }

// sbPrivate fills e's home with the private set: ~/.ssh/id_test,
// ~/.aws/credentials and ~/.yagent/config.yaml (configBody, a marker in a
// comment after it).
func sbPrivate(e *env, configBody string) sbSecrets {
	e.t.Helper()
	s := sbSecrets{
		sshPath:    filepath.Join(e.home, ".ssh", "id_test"),
		awsPath:    filepath.Join(e.home, ".aws", "credentials"),
		configPath: filepath.Join(e.home, ".yagent", "config.yaml"),
	}
	s.ssh = e.secret(s.sshPath)
	s.aws = e.secret(s.awsPath)
	s.config = e.secret(s.configPath)
	e.write(s.configPath, configBody+"# "+s.config+"\n")
	if f, err := os.Open("/etc/shadow"); err == nil {
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		s.shadow = strings.TrimSpace(line)
	}
	return s
}

// sbHide returns a shell word that expands to s at run time only.
func sbHide(s string) string {
	return `"$(echo ` + base64.StdEncoding.EncodeToString([]byte(s)) + ` | base64 -d)"`
}

// sbB64 returns s base64-encoded, for scripts that decode it themselves.
func sbB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// sbNeed skips t when one of progs is not on PATH.
func sbNeed(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed: the case needs it", p)
		}
	}
}

// sbRun runs command through run_bash with timeout ms (0 = 30 s).
func sbRun(t *testing.T, c *client, command string, timeoutMS int) result {
	t.Helper()
	if timeoutMS == 0 {
		timeoutMS = 30000
	}
	return c.call(t, "run_bash", map[string]any{"command": command, "timeout_ms": timeoutMS})
}

// sbNoCopy fails t if a regular file under dir holds one of the secrets.
func sbNoCopy(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 1<<20 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if s != "" && strings.Contains(string(b), s) {
				t.Errorf("%s holds a copy of the secret %s", p, s)
			}
		}
		return nil
	})
}

// sbText is everything a result shows the model.
func sbText(r result) string { return r.Text + string(r.Data) }

// sbTaskID returns the task id of a result that became a task, or "".
func sbTaskID(r result) string {
	var d struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(r.Data, &d)
	return d.TaskID
}

// sbAlive reports whether pid is a live process still running the
// program whose command line holds mark (a zombie, or a pid reused by
// another program, is gone).
func sbAlive(pid int, mark string) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), mark)
}

// sbGone polls until pid no longer runs mark, at most limit.
func sbGone(pid int, mark string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if !sbAlive(pid, mark) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sbPid reads the pid a command wrote to path, polling briefly: a child
// that escaped may write it just after its call returned.
func sbPid(path string, limit time.Duration) (int, bool) {
	deadline := time.Now().Add(limit)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid, true
			}
		}
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sbKill kills pid if it still runs mark: the cleanup of a child that
// escaped its call on a build without the sandbox.
func sbKill(pid int, mark string) {
	if sbAlive(pid, mark) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
