package guard

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// An approval grants what the command does with each path as parsed: the
// paths a writing command names whole are granted to writes; a reading
// command's paths, and the folder before a part only known when the
// command runs, to reads; a kernel filesystem and yagent's own folders to
// nothing but reads, and the question says so path by path.
func TestApprovalGrantsWhatTheCommandDoes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := filepath.Join(f.root, "yagent-home", ".yagent")
	mkdir(t, filepath.Join(own, "plugins"))
	g := f.guard(func(o *Options) {
		o.Policy.Sandbox = policy.SandboxRules{Mode: policy.SandboxOn}
		o.Protected = []string{own, filepath.Join(own, "plugins")}
	})
	secret := filepath.Join(f.other, "secret")
	for _, tc := range []struct {
		name, cmd           string
		granted, read       []string
		grantSays, readSays []string // what the question must hold
		closedSays          string
	}{
		{name: "a writing command", cmd: "cp README.md " + secret,
			granted: []string{secret}, grantSays: []string{"write " + secret}},
		{name: "a reading command", cmd: "cat " + secret,
			read: []string{secret}, readSays: []string{"read " + secret}},
		{name: "a reader in a writing command", cmd: "cat " + secret + " > copy.txt",
			read: []string{secret}, readSays: []string{"read " + secret}},
		{name: "a word only known in part", cmd: "cp README.md " + f.other + "/$NAME",
			read: []string{f.other}, readSays: []string{"read " + f.other}},
		{name: "a sysctl", cmd: "echo '|/tmp/x' > /proc/sys/kernel/core_pattern",
			read: []string{"/proc/sys/kernel/core_pattern"}, closedSays: "/proc/sys/kernel/core_pattern stays closed to writes: /proc/sys/kernel/core_pattern is in /proc"},
		{name: "a cgroup's members", cmd: "echo $BASHPID > /sys/fs/cgroup/cgroup.procs",
			read: []string{"/sys/fs/cgroup/cgroup.procs"}, closedSays: "stays closed to writes"},
		{name: "a new cgroup", cmd: "mkdir /sys/fs/cgroup/yagent-escape",
			read: []string{"/sys/fs/cgroup/yagent-escape"}, closedSays: "approvals never open /proc, /sys, /dev"},
		{name: "a raw disk read", cmd: "head -c 512 /dev/sda",
			closedSays: "/dev/sda stays closed: /dev/sda is a device"},
		{name: "yagent's plugin folder", cmd: "cp README.md " + filepath.Join(own, "plugins", "yagent-plugin-zz"),
			read: nil, closedSays: "where yagent loads its plugins"},
		{name: "a folder holding yagent's", cmd: "cp -r sub " + filepath.Dir(own),
			closedSays: "where yagent loads its plugins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := check(g, sdk.Spec{Name: "run_bash", Effect: sdk.EffectExec, Roles: execRoles}, cmdArgs(tc.cmd))
			if d.Action != adapter.Ask {
				t.Fatalf("%s: %v (%s), want ask", tc.cmd, d.Action, d.Reason)
			}
			sb := g.Sandbox(sdk.Spec{Roles: execRoles}, session.New("s"), d, true)
			if !slices.Equal(sb.Granted, sortedSet(tc.granted)) {
				t.Errorf("%s: Granted %q, want %q", tc.cmd, sb.Granted, tc.granted)
			}
			for _, r := range tc.read {
				if !slices.Contains(sb.Read, r) {
					t.Errorf("%s: Read %q lacks %s", tc.cmd, sb.Read, r)
				}
			}
			for _, want := range append(append(tc.grantSays, tc.readSays...), tc.closedSays) {
				if want != "" && !strings.Contains(d.Reason, want) {
					t.Errorf("%s: the question %q does not say %q", tc.cmd, d.Reason, want)
				}
			}
		})
	}
}

// No approval lets a file tool write a kernel filesystem or yagent's own
// folders: -y turns an ask into allow, so such a write is refused outright,
// unless the admin's sandbox.write names the kernel path.
func TestWriteTools_KernelAndOwnFoldersRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	own := filepath.Join(f.root, "yagent-home", ".yagent")
	mkdir(t, own)
	g := f.guard(func(o *Options) { o.Protected = []string{own} })
	for _, p := range []string{"/proc/sys/kernel/core_pattern", "/sys/fs/cgroup/cgroup.procs", "/dev/sda",
		filepath.Join(own, "plugins", "yagent-plugin-zz"), filepath.Join(own, "plugins.lock")} {
		if d := check(g, spec(sdk.EffectWrite, writeRoles), readArgs(p)); d.Action != adapter.Deny {
			t.Errorf("write %s: %v (%s), want deny", p, d.Action, d.Reason)
		}
		if d := check(g, spec(sdk.EffectRead, readRoles), readArgs(p)); d.Action == adapter.Deny {
			t.Errorf("read %s: denied (%s); a read is only asked about", p, d.Reason)
		}
	}
	admin := f.guard(func(o *Options) {
		o.Policy.Sandbox = policy.SandboxRules{Mode: policy.SandboxOn, Write: []string{"/proc/sys/kernel"}}
	})
	if d := check(admin, spec(sdk.EffectWrite, writeRoles), readArgs("/proc/sys/kernel/core_pattern")); d.Action != adapter.Ask {
		t.Errorf("write /proc/sys/kernel/core_pattern under the admin's sandbox.write: %v (%s), want ask", d.Action, d.Reason)
	}
}

// With the sandbox off, the question says an approval lets the command do
// whatever the user can.
func TestApproval_SandboxOffSaysSo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(func(o *Options) { o.Policy.Sandbox = policy.SandboxRules{Mode: policy.SandboxOff} })
	d := check(g, sdk.Spec{Name: "run_bash", Effect: sdk.EffectExec, Roles: execRoles}, cmdArgs("cat "+filepath.Join(f.other, "secret")))
	if d.Action != adapter.Ask || !strings.Contains(d.Reason, "the sandbox is off") {
		t.Errorf("%v (%s), want an ask that says the sandbox is off", d.Action, d.Reason)
	}
}
