//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a throwaway home, workspace and outside folder under /var/tmp,
// outside the read set (t.TempDir is under /tmp, which commands may read).
type fixture struct {
	home, ws, outside string
	env               []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	mk := func(prefix string) string {
		d, err := os.MkdirTemp("/var/tmp", prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		d, _ = filepath.EvalSymlinks(d)
		return d
	}
	f := &fixture{home: mk("sbhome"), ws: mk("sbws"), outside: mk("sbout")}
	for _, d := range []string{".ssh", ".cache", ".aws"} {
		if err := os.MkdirAll(filepath.Join(f.home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(f.home, ".ssh", "id_test"), "SECRET-KEY\n")
	write(t, filepath.Join(f.home, ".aws", "credentials"), "SECRET-AWS\n")
	write(t, filepath.Join(f.home, ".gitconfig"), "[user]\n\tname = t\n")
	write(t, filepath.Join(f.outside, "data"), "OUTSIDE\n")
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "TMPDIR", "GOMODCACHE", "GOPATH", "XDG_CACHE_HOME", "npm_config_cache", "PIP_CACHE_DIR", "CARGO_HOME":
			continue
		}
		f.env = append(f.env, kv)
	}
	f.env = append(f.env, "HOME="+f.home)
	return f
}

func (f *fixture) policy() Policy {
	return Policy{Workspace: f.ws, Network: true, Env: f.env}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// run runs script with bash -c under p in the workspace and returns its
// output and exit code.
func run(t *testing.T, p Policy, script string) (string, int, *Started) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = p.Workspace
	cmd.Env = p.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	st, err := Start(cmd, p)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("Wait: %v", err)
	}
	return out.String(), cmd.ProcessState.ExitCode(), st
}

// requireLayers skips a test whose layer this kernel lacks.
func requireLayers(t *testing.T, landlock, mountns, netns bool) {
	t.Helper()
	l := Probe()
	if landlock && l.LandlockABI == 0 {
		t.Skipf("Landlock is missing here: %s", l.Missing[LayerLandlock])
	}
	if mountns && !l.MountNS {
		t.Skipf("mount namespaces are missing here: %s", l.Missing[LayerMountNS])
	}
	if netns && !l.NetNS {
		t.Skipf("network namespaces are missing here: %s", l.Missing[LayerNetNS])
	}
}
