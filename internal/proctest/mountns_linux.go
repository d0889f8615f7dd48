package proctest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// InMountNamespace runs this test binary again, in a mount namespace of
// its own, with env=value in its environment: the binary's TestMain runs
// the test's helper when it sees env, and the helper's mounts stay in the
// child. It returns what the child printed. The test skips where nothing
// can be mounted (not root, no mount namespace), or where the child printed
// "skip:" and why; it fails when the child exits with an error.
func InMountNamespace(t testing.TB, env, value string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), env+"="+value)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if i := strings.Index(string(out), "skip:"); i >= 0 {
		t.Skip(strings.TrimSpace(string(out[i:])))
	}
	if err != nil {
		t.Fatalf("the helper in its own mount namespace: %v\n%s", err, out)
	}
	return string(out)
}
