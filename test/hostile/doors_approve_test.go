package hostile

import (
	"bufio"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cgroupMounts returns where this machine mounts the cgroup v2 hierarchy
// and one cgroup v1 hierarchy, "" for each it lacks.
func cgroupMounts(t *testing.T) (v2, v1 string) {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		switch fields[sep+1] {
		case "cgroup2":
			if v2 == "" {
				v2 = fields[4]
			}
		case "cgroup":
			if v1 == "" {
				v1 = fields[4]
			}
		}
	}
	return v2, v1
}

// blockDevice returns a block device under /dev that holds data, "" when
// there is none.
func blockDevice() string {
	entries, _ := os.ReadDir("/sys/class/block")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/sys/class/block", e.Name(), "size"))
		if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n == 0 {
			continue
		}
		dev := "/dev/" + e.Name()
		if fi, err := os.Stat(dev); err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0 {
			return dev
		}
	}
	return ""
}

// escapedCgroup reports whether pid is alive in the root of the cgroup v2
// hierarchy: out of the cgroup its command was started in.
func escapedCgroup(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "0::/" {
			return true
		}
	}
	return false
}

// TestDoorsApprovals: under -y, an approval opens what the command does
// with each path it names, and never a kernel filesystem or one of
// yagent's own folders: no command moves itself or a child out of its
// cgroup (v2 or v1), makes a cgroup, writes a sysctl (directly or through
// a symlink an earlier call made), writes or reads a device beyond the
// usual few, plants a plugin or a pin in ~/.yagent or writes the managed
// layer; a folder before a part of a word only known at run time, and a
// path only a reading command names, are opened to reads alone. Benign
// work on /proc, /sys, the temp folder, git, go build and approved
// outside paths keeps working.
func TestDoorsApprovals(t *testing.T) {
	t.Parallel()
	sbNeed(t, "setsid", "base64")
	v2, v1 := cgroupMounts(t)
	dev := blockDevice()
	host, _ := os.Hostname()
	e := newEnv(t)
	e.write("README.md", "readme\n")
	e.secret("victim")
	own := filepath.Join(e.home, ".yagent")
	escape := filepath.Join(v2, "yagent-escape-"+strconv.Itoa(os.Getpid()))
	t.Cleanup(func() { _ = os.Remove(escape) })
	// An earlier call's symlink into /proc, named by a later call.
	kernelLink := filepath.Join(e.tmp, "k")
	if err := os.Symlink("/proc/sys/kernel", kernelLink); err != nil {
		t.Fatal(err)
	}
	hidden := base64.StdEncoding.EncodeToString([]byte("echo PWNED > " + filepath.Join(e.outside, "victim")))
	if err := os.MkdirAll(e.managed, 0o755); err != nil {
		t.Fatal(err)
	}
	skipUnless := func(ok bool, why string) string {
		if ok {
			return ""
		}
		return why
	}
	type tc struct {
		name, cmd string
		skip      string
		// bad are words of the output that show the attack worked.
		bad []string
		// gone are files the command must not have made; kept files it
		// must have left as they were.
		gone, kept []string
		// child: the output names CHILD=<pid>, which must not have left
		// its cgroup.
		child bool
	}
	attacks := []tc{
		{name: "join the root cgroup (v2)", skip: skipUnless(v2 != "", "no cgroup v2 here"),
			cmd: "echo $BASHPID > " + v2 + "/cgroup.procs && echo MOVED", bad: []string{"MOVED"}},
		{name: "a setsid child out of the cgroup (v2)", skip: skipUnless(v2 != "", "no cgroup v2 here"),
			cmd: "echo $BASHPID > " + v2 + "/cgroup.procs; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo CHILD=$!", child: true},
		{name: "make a cgroup (v2)", skip: skipUnless(v2 != "", "no cgroup v2 here"),
			cmd: "mkdir " + escape + " && echo MADE", bad: []string{"MADE"}, gone: []string{escape}},
		{name: "join a v1 hierarchy's root", skip: skipUnless(v1 != "", "no cgroup v1 hierarchy here"),
			cmd: "echo $BASHPID > " + v1 + "/cgroup.procs && echo MOVED", bad: []string{"MOVED"}},
		{name: "rewrite a sysctl", cmd: `cat /proc/sys/kernel/core_pattern > "$TMPDIR/cp" && cat "$TMPDIR/cp" > /proc/sys/kernel/core_pattern && echo WROTE`,
			bad: []string{"WROTE"}},
		{name: "rewrite a sysctl through an earlier call's symlink",
			cmd: `cat ` + kernelLink + `/hostname > "$TMPDIR/h" && cat "$TMPDIR/h" > ` + kernelLink + `/hostname && echo WROTE`, bad: []string{"WROTE"}},
		{name: "write the kernel log", skip: skipUnless(fileExists("/dev/kmsg"), "no /dev/kmsg here"),
			cmd: "echo yagent-hostile-test > /dev/kmsg && echo WROTE", bad: []string{"WROTE"}},
		{name: "read a raw disk", skip: skipUnless(dev != "", "no block device with data here"),
			cmd: "head -c 512 " + dev + " | wc -c | grep -qx 512 && echo READ", bad: []string{"READ"}},
		{name: "plant a plugin in ~/.yagent/plugins",
			cmd: "mkdir -p " + own + "/plugins && printf '#!/bin/sh\\n' > " + own + "/plugins/yagent-plugin-zz && echo PLANTED",
			bad: []string{"PLANTED"}, gone: []string{filepath.Join(own, "plugins", "yagent-plugin-zz")}},
		{name: "rewrite the pins", cmd: "echo '{\"plugins\":{}}' > " + own + "/plugins.lock && echo WROTE", bad: []string{"WROTE"}},
		{name: "write the spec cache", cmd: "mkdir -p " + own + "/cache/specs && echo x > " + own + "/cache/specs/planted.json && echo WROTE",
			bad: []string{"WROTE"}, gone: []string{filepath.Join(own, "cache", "specs", "planted.json")}},
		{name: "write the managed layer", cmd: "mkdir -p " + e.managed + " && echo 'sandbox: {mode: off}' > " + e.managed + "/config.yaml && echo WROTE",
			bad: []string{"WROTE"}, gone: []string{filepath.Join(e.managed, "config.yaml")}},
		{name: "write under a folder named before a run-time part", cmd: "N=planted; echo X > " + e.outside + "/$N && echo WROTE",
			bad: []string{"WROTE"}, gone: []string{filepath.Join(e.outside, "planted")}},
		{name: "overwrite what only a reading command names", cmd: "cat " + filepath.Join(e.outside, "victim") + ` >/dev/null; eval "$(echo ` + hidden + ` | base64 -d)"`,
			kept: []string{filepath.Join(e.outside, "victim")}},
	}
	benign := []struct {
		name, cmd, want string
		need            []string
		made            string
	}{
		{name: "read /proc/self", cmd: "head -1 /proc/self/status", want: "Name:"},
		{name: "read a sysctl", cmd: "cat /proc/sys/kernel/hostname", want: host},
		{name: "list /sys", cmd: "ls /sys/class | head -50", want: "net"},
		{name: "mktemp -d and rm -r of it", cmd: `d=$(mktemp -d) && touch "$d/x" && rm -r "$d" && test ! -e "$d" && echo GONE`, want: "GONE"},
		{name: "chmod +x and chmod 755", cmd: `printf '#!/bin/sh\necho ran\n' > s.sh && chmod +x s.sh && ./s.sh && chmod 755 s.sh && echo OK`, want: "ran\nOK"},
		{name: "git", need: []string{"git"}, cmd: "git init -q r && cd r && git -c user.email=a@b.c -c user.name=n commit -q --allow-empty -m m && git log --oneline | wc -l", want: "1"},
		{name: "go build", need: []string{"go"}, cmd: `mkdir gb && cd gb && printf 'package main\nfunc main() { println("built") }\n' > main.go && go mod init example.com/gb 2>/dev/null && go build -o app . && ./app 2>&1`, want: "built"},
		{name: "copy to an approved outside path", cmd: "cp README.md " + e.outside + "/copied && echo COPIED", want: "COPIED", made: filepath.Join(e.outside, "copied")},
		{name: "make a new outside folder", cmd: "mkdir -p " + e.outside + "/new/deep && touch " + e.outside + "/new/deep/f && echo MADE", want: "MADE", made: filepath.Join(e.outside, "new", "deep", "f")},
		{name: "the usual devices", cmd: "head -c 8 /dev/urandom | wc -c && echo x > /dev/null && echo NULL", want: "8\nNULL"},
	}
	c := e.serve("-y")
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			if a.skip != "" {
				t.Skip(a.skip)
			}
			r := sbRun(t, c, a.cmd, 0)
			out := sbText(r)
			for _, b := range a.bad {
				if strings.Contains(out, b) && !strings.Contains(a.cmd, b+" ") {
					t.Errorf("the attack worked (%s in the output): %s", b, r)
				}
			}
			for _, g := range a.gone {
				if fileExists(g) {
					t.Errorf("the command made %s: %s", g, r)
				}
			}
			for _, k := range a.kept {
				if b, err := os.ReadFile(k); err != nil || strings.Contains(string(b), "PWNED") {
					t.Errorf("the command changed %s (%q, %v): %s", k, b, err, r)
				}
			}
			if a.child {
				_, after, ok := strings.Cut(out, "CHILD=")
				pid, err := strconv.Atoi(strings.TrimSpace(strings.Fields(after + " x")[0]))
				if !ok || err != nil {
					t.Fatalf("no CHILD=<pid> in the output: %s", r)
				}
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
				if escapedCgroup(pid) {
					t.Errorf("the child %d runs in the root cgroup, out of its command's: %s", pid, r)
				}
			}
		})
	}
	// No approval lets a file tool write a kernel filesystem or yagent's
	// own folders: -y turns the ask into allow, so the call is refused.
	for _, w := range []struct{ name, path, content string }{
		{"write_file to a sysctl", "/proc/sys/kernel/hostname", host + "\n"},
		{"write_file into ~/.yagent/plugins", filepath.Join(own, "plugins", "yagent-plugin-zz"), "#!/bin/sh\n"},
	} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			r := c.call(t, "write_file", map[string]any{"path": w.path, "content": w.content})
			if r.Code != "denied" || !strings.Contains(r.Text, "approval") && !strings.Contains(r.Text, "yagent loads") {
				t.Errorf("write_file %s: %s, want it denied saying no approval opens it", w.path, r)
			}
		})
	}
	for i, b := range benign {
		t.Run("benign: "+b.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, b.need...)
			dir := "b" + strconv.Itoa(i)
			sbWriteFiles(t, e, dir, map[string]string{"README.md": "readme\n"})
			r := c.call(t, "run_bash", map[string]any{"command": "cd " + dir + " && " + b.cmd, "timeout_ms": 120000, "yield_time_ms": 110000})
			if r.Code != "" || !strings.Contains(sbText(r), b.want) {
				t.Errorf("%s: %s, want it to work and print %q", b.cmd, r, b.want)
			}
			if b.made != "" && !fileExists(b.made) {
				t.Errorf("%s did not make %s: %s", b.cmd, b.made, r)
			}
		})
	}
}

// TestDoorsApprovalQuestion: the question says exactly what approving the
// command grants, path by path: what it may write, what it may only read,
// and what stays closed whatever the answer.
func TestDoorsApprovalQuestion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("README.md", "readme\n")
	asker := &sbAsker{}
	c := e.serveWith(&mcp.ClientOptions{ElicitationHandler: asker.handle})
	out := e.outside
	e.secret("b")
	for _, q := range []struct {
		cmd  string
		says []string
	}{
		{"cat " + out + "/a", []string{"approving it lets the command read " + out + "/a"}},
		{"cp README.md " + out + "/b", []string{"approving it lets the command write " + out + "/b"}},
		{"cp README.md " + out + "/new/c", []string{"approving it lets the command create and change files anywhere under " + out + " (for " + out + "/new/c, which does not exist yet)"}},
		{"echo x > /proc/sys/kernel/core_pattern", []string{"/proc/sys/kernel/core_pattern stays closed to writes", "approvals never open /proc, /sys, /dev"}},
	} {
		sbRun(t, c, q.cmd, 0)
		for _, s := range q.says {
			if !asker.askedAbout(s) {
				t.Errorf("%s: no question said %q; asked: %q", q.cmd, s, asker.asked)
			}
		}
	}
	if asker.askedAbout("lets the command write " + out + "/a") {
		t.Errorf("a reading command's question grants writes: %q", asker.asked)
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
