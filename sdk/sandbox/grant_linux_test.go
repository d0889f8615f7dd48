//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// An approval never opens a kernel filesystem to writes: not a sysctl, not
// a cgroup's members (a command that moved itself to the root cgroup would
// outlive its timeout and the host), not a device; not by a path that does
// not exist there yet (its nearest folder is the kernel's), nor by a
// symlink put on the way after the host judged the path, nor by procfs
// mounted somewhere else. An ordinary folder still opens.
func TestRuleset_GrantedNeverOpensKernelFilesystems(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(f.outside, "link")
	if err := os.Symlink("/proc/sys/kernel", link); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(f.outside, "elsewhere")
	if err := os.Symlink(f.home, elsewhere); err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"/proc/sys/kernel/core_pattern": "kernel filesystem",
		"/proc/sys/kernel":              "kernel filesystem",
		"/proc/self/attr":               "kernel filesystem",
		"/sys/kernel/mm":                "kernel filesystem",
		"/dev/shm/../sda":               "not an absolute, clean path",
		"/dev/sda-yagent-none":          "kernel filesystem",
		link + "/core_pattern":          "kernel filesystem",
		elsewhere + "/.ssh":             "symlink",
		f.home + "/new":                 "home folder",
		filepath.Dir(f.home) + "/new":   "holds the home folder",
	}
	for _, cg := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(cg); err == nil {
			refused[cg+"/cgroup.procs"] = "kernel filesystem"
			refused[cg+"/yagent-escape/cgroup.procs"] = "kernel filesystem"
		}
	}
	mnt := filepath.Join(f.outside, "proc")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", mnt, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err == nil {
		t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
		refused[mnt+"/sys/kernel/core_pattern"] = "procfs"
	} else {
		t.Logf("procfs not mounted elsewhere (%v): the filesystem type check is not exercised", err)
	}
	for path, want := range refused {
		p := f.policy()
		p.Granted = []string{path}
		rs := p.ruleset()
		if len(rs.Unopened) != 1 || rs.Unopened[0].Path != path || !strings.Contains(rs.Unopened[0].Why, want) {
			t.Errorf("Granted %s: Unopened %+v, want it with a why naming %q", path, rs.Unopened, want)
		}
		if len(rs.Widened) > 0 {
			t.Errorf("Granted %s: widened %v", path, rs.Widened)
		}
		if p.Permits(path, true) {
			t.Errorf("Granted %s: it became writable", path)
		}
	}

	// The control: an ordinary folder opens, and a path that does not
	// exist yet opens its nearest folder.
	p := f.policy()
	p.Granted = []string{filepath.Join(f.outside, "data"), filepath.Join(f.outside, "new", "file")}
	rs := p.ruleset()
	if len(rs.Unopened) != 0 || len(rs.Widened) != 1 || rs.Widened[0] != f.outside {
		t.Fatalf("Granted %v: Unopened %+v, Widened %v; want nothing closed and %s widened", p.Granted, rs.Unopened, rs.Widened, f.outside)
	}
	if !p.Permits(filepath.Join(f.outside, "data"), true) {
		t.Errorf("a granted ordinary file is not writable")
	}
}

// The admin's sandbox.write is the one way to open a kernel filesystem.
func TestRuleset_AdminWriteMayOpenKernelFilesystems(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Write = []string{"/proc/sys/kernel"}
	if rs := p.ruleset(); len(rs.Unopened) != 0 || !p.Permits("/proc/sys/kernel/core_pattern", true) {
		t.Errorf("sandbox.write /proc/sys/kernel: Unopened %+v, writable %v; want it open", rs.Unopened, p.Permits("/proc/sys/kernel/core_pattern", true))
	}
}

// A read an ask approved never opens a device beyond the ones every
// command gets: a raw disk reads every file past the rules.
func TestJudgeReadGrant(t *testing.T) {
	for path, ok := range map[string]bool{
		"/dev/sda":        false,
		"/dev":            false,
		"/dev/mapper/x":   false,
		"/dev/null":       true,
		"/dev/pts/3":      true,
		"/dev/stdin":      true,
		"/proc/self/maps": true,
		"/etc/hosts":      true,
		"relative":        false,
	} {
		if why := JudgeReadGrant(path); (why == "") != ok {
			t.Errorf("JudgeReadGrant(%s) = %q, want opened %v", path, why, ok)
		}
	}
}
