package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/testbuild"
)

// layersEnv is the variable a test build's sandbox and cgroup probes read:
// "none" plays a machine without any kernel layer, as macOS is.
const layersEnv = "YAGENT_TEST_LAYERS"

// layersSeam turns that seam on in a build; a release build has it off.
var layersSeam = []string{"-ldflags", "-X github.com/yagent/yagent/sdk/sandbox.testLayersEnv=" + layersEnv +
	" -X github.com/yagent/yagent/sdk/sandbox/cgroup.testLayersEnv=" + layersEnv}

// TestNoKernelLayers runs the host and the shell plugin, both built with
// the seam, on a machine that reports every kernel layer missing: doctor
// and serve name each one and what it means, a command still runs under
// sandbox: on (in a process group, with no layer applied), and sandbox:
// required refuses it, saying why, without running it. The same binaries
// without the variable see this machine's layers, so what changed is the
// probe's answer alone.
func TestNoKernelLayers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	host := testbuild.Host(dir, layersSeam...)
	shell := testbuild.Plugin(filepath.Join(dir, "plugins"), "shell")
	shell.Flags = layersSeam
	if err := testbuild.Build(host, shell); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.dirs = []string{filepath.Join(dir, "plugins")}
	run := func(env string, args ...string) (stdout, stderr string, err error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, host.Out, append(args, e.args()...)...)
		cmd.Dir = e.workspace
		cmd.Env = e.environ(env)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err = cmd.Run()
		return out.String(), errOut.String(), err
	}
	// The command's cgroup says whether it got one of its own (live-N), its
	// CapEff whether its capabilities were dropped.
	const probe = `{"command": "echo ran; cat /proc/self/cgroup; grep CapEff /proc/self/status"}`
	ownCgroup := regexp.MustCompile(`/yagent\.[0-9]+/live-[0-9]+`)
	capEff := regexp.MustCompile(`CapEff:\s*([0-9a-f]+)`)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	ownCaps := capEff.FindStringSubmatch(string(status))[1]

	t.Run("control", func(t *testing.T) {
		doctor, _, err := run("", "doctor")
		if err != nil {
			t.Fatalf("doctor without the variable: %v\n%s", err, doctor)
		}
		if !strings.Contains(doctor, "active   cgroup v2") {
			t.Skipf("this machine has no writable cgroup v2 to tell the seam's effect by:\n%s", doctor)
		}
		out, errOut, err := run("", "call", "-y", "run_bash", probe)
		if err != nil || !strings.Contains(out, "ran") || !ownCgroup.MatchString(out) {
			t.Errorf("run_bash without the variable: %v, stdout %q, stderr %q; want it run in a cgroup of its own", err, out, errOut)
		}
		if m := capEff.FindStringSubmatch(out); ownCaps != "0000000000000000" && (m == nil || m[1] == ownCaps) {
			t.Errorf("run_bash without the variable kept yagent's capabilities %s: %v", ownCaps, m)
		}
	})

	none := layersEnv + "=none"
	t.Run("doctor names each layer", func(t *testing.T) {
		out, _, err := run(none, "doctor")
		if err != nil {
			t.Fatalf("doctor under sandbox: on exits %v; want 0 (commands run with what there is)\n%s", err, out)
		}
		for _, want := range []string{
			`(?m)^sandbox: on `,
			`(?m)^  missing  Landlock: this test build has no Landlock .*; without it files are not walled`,
			`(?m)^  missing  seccomp user notification: .*; without it exec rules hold only where the guard sees the command`,
			`(?m)^  missing  cgroup v2: .*; without it commands run in process groups only`,
			`(?m)^  missing  mount namespace: .*; without it /run`,
			`(?m)^  missing  network namespace: .*under proxy they find the proxy by its variables only`,
			`(?m)^  missing  capability drop: .*; without it commands run as root keep every capability`,
		} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("doctor does not say %s:\n%s", want, out)
			}
		}
		if strings.Contains(out, "  active   ") {
			t.Errorf("doctor calls a layer active:\n%s", out)
		}
		out, errOut, err := run(none, "doctor", "--sandbox", "required")
		if err == nil || !strings.Contains(errOut, "sandbox: required, but Landlock, seccomp user notification, cgroup v2, mount namespace, network namespace, capability drop are missing here") {
			t.Errorf("doctor under sandbox: required: %v, stderr %q; want exit 1 naming each missing layer\n%s", err, errOut, out)
		}
	})

	t.Run("serve names each layer", func(t *testing.T) {
		_, errOut, err := run(none, "serve")
		if err != nil {
			t.Fatalf("serve with stdin closed: %v\n%s", err, errOut)
		}
		want := "sandbox on: no kernel layer is active; missing: landlock (files not walled), seccomp (exec rules at parse time only, unix sockets unjudged), " +
			"cgroup (process groups only), mount-namespace (/run reachable), network-namespace (the proxy by its variables only), capabilities (root keeps its capabilities); commands run without them"
		if !strings.Contains(errOut, want) {
			t.Errorf("serve's start line does not say %q:\n%s", want, errOut)
		}
	})

	t.Run("on runs the command in a process group", func(t *testing.T) {
		out, errOut, err := run(none, "call", "-y", "run_bash", probe)
		if err != nil || !strings.Contains(out, "ran") {
			t.Fatalf("run_bash under sandbox: on: %v, stdout %q, stderr %q; want it run", err, out, errOut)
		}
		if ownCgroup.MatchString(out) {
			t.Errorf("the command got a cgroup of its own on a machine reported without one:\n%s", out)
		}
		if m := capEff.FindStringSubmatch(out); m == nil || m[1] != ownCaps {
			t.Errorf("the command's capabilities %v are not those yagent runs with (%s): a layer was applied\n%s", m, ownCaps, out)
		}
	})

	t.Run("required refuses the command", func(t *testing.T) {
		out, errOut, err := run(none, "call", "-y", "--sandbox", "required", "run_bash", `{"command": "echo ran > ran.txt"}`)
		if err == nil {
			t.Fatalf("run_bash under sandbox: required ran: stdout %q", out)
		}
		for _, want := range []string{"sandbox: required", "landlock (this test build has no Landlock", "nothing was run", "yagent doctor"} {
			if !strings.Contains(out, want) {
				t.Errorf("the refusal does not say %q: stdout %q, stderr %q", want, out, errOut)
			}
		}
		if !strings.Contains(errOut, "denied") {
			t.Errorf("the refusal is not a denial: stderr %q", errOut)
		}
		if _, err := os.Stat(filepath.Join(e.workspace, "ran.txt")); err == nil {
			t.Error("the refused command ran: ran.txt exists")
		}
	})
}
