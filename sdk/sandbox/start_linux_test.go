//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/sdk/sandbox/execwatch"
)

func TestStart_HomeSecretUnreadable(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	write(t, filepath.Join(f.ws, "s.sh"), `cat "$HOME/.aws/credentials"`+"\n")
	write(t, filepath.Join(f.ws, "s.py"), "import os\nprint(open(os.path.join(os.environ['HOME'], '.ssh', 'id_test')).read())\n")
	for _, script := range []string{
		`cat "$(printf %s "$HOME")/.ssh/id_test"`,
		`cat "$(echo ` + b64(filepath.Join(f.home, ".ssh/id_test")) + ` | base64 -d)"`,
		`bash s.sh`,
		`source s.sh`,
		`python3 s.py`,
		`ln -s "$HOME/.ssh" keys && cat keys/id_test`,
		`ls "$HOME"`,
	} {
		out, code, _ := run(t, f.policy(), script)
		if code == 0 || strings.Contains(out, "SECRET") {
			t.Errorf("%s: exit %d, output %q: want a refusal without the secret", script, code, out)
		}
	}
	// The listed toolchain config stays readable.
	if out, code, _ := run(t, f.policy(), `cat "$HOME/.gitconfig"`); code != 0 || !strings.Contains(out, "name = t") {
		t.Errorf("cat ~/.gitconfig: exit %d, %q: want it readable", code, out)
	}
}

func b64(s string) string {
	cmd := exec.Command("base64", "-w0")
	cmd.Stdin = strings.NewReader(s)
	b, _ := cmd.Output()
	return string(b)
}

func TestStart_EtcPrivateFiles(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	out, code, _ := run(t, f.policy(), `cat /etc/shadow`)
	if code == 0 || strings.Contains(out, "root:") {
		t.Errorf("cat /etc/shadow: exit %d, %q: want a refusal", code, out)
	}
	out, code, _ = run(t, f.policy(), `cat /etc/os-release /etc/passwd && ls /etc >/dev/null`)
	if code != 0 || !strings.Contains(out, "root:x:0:0") {
		t.Errorf("cat /etc/os-release /etc/passwd: exit %d, %q: want both readable", code, out)
	}
}

func TestStart_WriteSet(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	out, code, _ := run(t, f.policy(), `d="$(printf %s `+f.outside+`)"; echo x > "$d/new"`)
	if code == 0 {
		t.Errorf("write outside the workspace: exit 0 (%q): want a refusal", out)
	}
	if _, err := os.Stat(filepath.Join(f.outside, "new")); err == nil {
		t.Error("the file outside the workspace was created")
	}
	out, code, _ = run(t, f.policy(), `set -e; mkdir a b; echo hi > a/f; mv a/f b/f; cat b/f; python3 -c 'import os; os.rename("b/f", "a/g"); os.rename("a/g", "b/f")'; echo t > /tmp/sb-$$; rm /tmp/sb-$$; echo ok > /dev/null`)
	if code != 0 || !strings.Contains(out, "hi") {
		t.Errorf("writes in the workspace and /tmp, mv between folders: exit %d, %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "b", "f")); err != nil {
		t.Errorf("mv a/f b/f: %v", err)
	}
}

func TestStart_ToolchainCaches(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	gocache := filepath.Join(f.home, ".cache", "go-build")
	p := f.policy()
	p.Env = append(p.Env, "GOCACHE="+gocache, "npm_config_cache="+filepath.Join(f.home, "npmc"))
	out, code, _ := run(t, p, `set -e; touch "$GOCACHE/x" "$npm_config_cache/y"; ls "$HOME/.cache" >/dev/null; touch "$HOME/.cache/z"`)
	if code == 0 {
		t.Errorf("touch ~/.cache/z: exit 0 (%q): .cache is read, not written", out)
	}
	for _, p := range []string{filepath.Join(gocache, "x"), filepath.Join(f.home, "npmc", "y")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v (output %q): want the cache writable", p, err, out)
		}
	}
}

func TestStart_RunHidden(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	out, code, st := run(t, f.policy(), `ls -A /run /var/run`)
	if code != 0 {
		t.Fatalf("ls -A /run: exit %d, %q: want the tmpfs over it listed", code, out)
	}
	// Empty but for the mount points of paths bound back for other
	// commands, which the plugin's /run no longer has.
	host, _ := os.ReadDir("/run")
	if len(host) == 0 {
		t.Skip("this machine's /run is empty: nothing to hide")
	}
	for _, name := range strings.Fields(out) {
		if slices.ContainsFunc(host, func(e os.DirEntry) bool { return e.Name() == name }) {
			t.Errorf("ls -A /run shows %s of the plugin's /run (output %q)", name, out)
		}
	}
	if !st.Applied.MountNS {
		t.Errorf("Applied.MountNS false: %v", st.Applied.Missing)
	}
}

func TestStart_RunPathBoundBack(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	d, err := os.MkdirTemp("/run", "sbkeep")
	if err != nil {
		t.Skipf("cannot make a folder in /run: %v", err)
	}
	defer os.RemoveAll(d)
	p := f.policy()
	p.Write = []string{d}
	out, code, _ := run(t, p, `echo kept > `+d+`/f && ls /run`)
	if code != 0 || !strings.Contains(out, filepath.Base(d)) {
		t.Errorf("a granted path under /run: exit %d, %q: want it bound back and writable", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(d, "f")); string(b) != "kept\n" {
		t.Errorf("the write under /run did not reach the real folder: %q", b)
	}
}

func TestStart_CapsDropped(t *testing.T) {
	requireLayers(t, false, false, false)
	if os.Geteuid() != 0 {
		t.Skip("capabilities: the test runs without root, so there is nothing to drop")
	}
	f := newFixture(t)
	out, code, _ := run(t, f.policy(), `grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status`)
	if code != 0 {
		t.Fatalf("exit %d: %q", code, out)
	}
	// CHOWN, DAC_OVERRIDE, FOWNER, SETGID, SETUID: not FSETID, so a write
	// clears a set-id bit.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasSuffix(line, "00000000000000cb") {
			t.Errorf("%s: want only the five kept capabilities (0xcb)", line)
		}
	}
}

func TestStart_OfflineLoopbackOnly(t *testing.T) {
	requireLayers(t, false, true, true)
	f := newFixture(t)
	p := f.policy()
	p.Network = false
	out, code, st := run(t, p, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname(), timeout=5); print("lo-up")'`)
	lines := strings.Fields(out)
	if code != 0 || len(lines) != 2 || lines[0] != "lo" || lines[1] != "lo-up" {
		t.Errorf("offline: exit %d, %q: want only lo, and it up", code, out)
	}
	if !st.Applied.NetNS {
		t.Errorf("Applied.NetNS false: %v", st.Applied.Missing)
	}
}

func TestStart_GoBuild(t *testing.T) {
	requireLayers(t, true, false, false)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	f := newFixture(t)
	real, _ := exec.Command(gobin, "env", "GOCACHE").Output()
	p := f.policy()
	// The machine's warm build cache, named by the environment: it must be
	// writable because the environment says so.
	p.Env = append(p.Env, "GOCACHE="+strings.TrimSpace(string(real)))
	write(t, filepath.Join(f.ws, "go.mod"), "module tiny\n\ngo 1.22\n")
	write(t, filepath.Join(f.ws, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n")
	out, code, _ := run(t, p, `go build -o app . && ./app`)
	if code != 0 || !strings.Contains(out, "built") {
		t.Errorf("go build: exit %d, %q", code, out)
	}
}

func TestStart_MissingWritePathWidensAncestor(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	p := f.policy()
	p.Write = []string{filepath.Join(f.outside, "new", "dir")}
	out, code, st := run(t, p, `mkdir -p `+p.Write[0]+` && echo x > `+p.Write[0]+`/f`)
	if code != 0 {
		t.Errorf("creating a missing write path: exit %d, %q", code, out)
	}
	if !slices.Equal(st.Widened, []string{f.outside}) {
		t.Errorf("Widened = %v, want [%s]", st.Widened, f.outside)
	}
}

func TestStart_Python3(t *testing.T) {
	requireLayers(t, true, false, false)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	f := newFixture(t)
	write(t, filepath.Join(f.ws, "s.py"), "print(6 * 7)\n")
	out, code, _ := run(t, f.policy(), `python3 s.py`)
	if code != 0 || strings.TrimSpace(out) != "42" {
		t.Errorf("python3 s.py: exit %d, %q", code, out)
	}
}

func TestStart_RecreatedWorkspaceStaysWritable(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	if _, code, _ := run(t, f.policy(), `echo 1 > f`); code != 0 {
		t.Fatal("first write failed")
	}
	// Same path, another folder: a ruleset kept for the old one would
	// refuse every write.
	if err := os.RemoveAll(f.ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, code, _ := run(t, f.policy(), `echo 2 > f`); code != 0 {
		t.Errorf("write in the recreated workspace: exit %d, %q", code, out)
	}
}

func TestStart_ScopedSignalsAndAbstractSockets(t *testing.T) {
	requireLayers(t, true, false, false)
	if Probe().LandlockABI < 6 {
		t.Skip("Landlock scopes need ABI 6: signals and abstract sockets outside the command stay reachable")
	}
	f := newFixture(t)
	outside := exec.Command("sleep", "30")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outside.Process.Kill(); outside.Wait() }()
	name := "@yagent-sbtest-" + filepath.Base(f.ws)
	l, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	script := fmt.Sprintf(`kill -0 %d && echo signalled; python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0%s"); print("connected")
except OSError as e:
    print("refused", e.errno)'; kill -0 $$ && echo self`, outside.Process.Pid, name[1:])
	out, _, _ := run(t, f.policy(), script)
	if strings.Contains(out, "signalled") || strings.Contains(out, "connected") || !strings.Contains(out, "self") {
		t.Errorf("output %q: want no signal and no connection outside the command, signals inside it", out)
	}
}

func TestStart_SeesMountsMadeLater(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	if _, code, _ := run(t, f.policy(), `mkdir sub`); code != 0 {
		t.Fatal("mkdir sub failed")
	}
	sub := filepath.Join(f.ws, "sub")
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs for the test: %v", err)
	}
	defer unix.Unmount(sub, unix.MNT_DETACH)
	write(t, filepath.Join(sub, "f"), "mounted later\n")
	if out, code, _ := run(t, f.policy(), `cat sub/f`); code != 0 || !strings.Contains(out, "mounted later") {
		t.Errorf("a mount made after the namespace was kept: exit %d, %q: want it seen", code, out)
	}
}

func TestStart_MainThreadUntouched(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	p := f.policy()
	p.Network = false
	for range 20 {
		run(t, p, `true`)
	}
	// The main thread is where /proc/self looks: its namespaces and
	// capabilities must stay the plugin's.
	for _, ns := range []string{"mnt", "net"} {
		main, _ := os.Readlink("/proc/self/ns/" + ns)
		if this, _ := os.Readlink("/proc/thread-self/ns/" + ns); main != this {
			t.Errorf("the main thread is in %s namespace %s, the test's thread in %s", ns, main, this)
		}
	}
	b, _ := os.ReadFile("/proc/self/status")
	if os.Geteuid() == 0 && strings.Contains(string(b), "CapEff:\t00000000000000db") {
		t.Error("the main thread lost its capabilities")
	}
}

func TestStart_DeathSignalOutlivesTheThread(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	cmd := exec.Command("/bin/bash", "-c", "sleep 0.3; echo alive")
	cmd.Dir, cmd.Env = p.Workspace, p.Env
	// The death signal follows the thread that forked, which would end
	// right after Start.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if _, err := Start(cmd, p); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("a command with a death signal: %v: want it to run to its end", err)
	}
}

func TestStart_ConcurrentCommands(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	errs := make(chan string, 16)
	for i := range 16 {
		go func() {
			p := f.policy()
			p.Network = i%2 == 0
			p.Write = []string{filepath.Join(f.outside, fmt.Sprint("w", i))}
			out, code, _ := run(t, p, fmt.Sprintf(`mkdir -p %s && echo %d > %s/f && cat %s/f`, p.Write[0], i, p.Write[0], p.Write[0]))
			if code != 0 || strings.TrimSpace(out) != fmt.Sprint(i) {
				errs <- fmt.Sprintf("command %d: exit %d, %q", i, code, out)
				return
			}
			errs <- ""
		}()
	}
	for range 16 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func TestStart_NoDescriptorGrowth(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	count := func() int {
		es, _ := os.ReadDir("/proc/self/fd")
		return len(es)
	}
	batch := func(tag string) {
		for i := range rulesetCacheSize + 4 {
			p := f.policy()
			p.Network = i%2 == 0
			p.Write = []string{filepath.Join(f.outside, tag, fmt.Sprint(i))}
			if err := os.MkdirAll(p.Write[0], 0o755); err != nil {
				t.Fatal(err)
			}
			run(t, p, `true`)
		}
	}
	batch("a") // fills the caches
	before := count()
	batch("b")
	if after := count(); after > before+2 {
		t.Errorf("descriptors grew from %d to %d over %d commands", before, after, rulesetCacheSize+4)
	}
}

func TestStart_ReplacedRunFileBoundAnew(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	d, err := os.MkdirTemp("/run", "sbconf")
	if err != nil {
		t.Skipf("cannot make a folder in /run: %v", err)
	}
	defer os.RemoveAll(d)
	conf := filepath.Join(d, "resolv.conf")
	write(t, conf, "nameserver 10.0.0.1\n")
	p := f.policy()
	p.Read = []string{conf}
	if out, _, _ := run(t, p, `cat `+conf); !strings.Contains(out, "10.0.0.1") {
		t.Fatalf("first read: %q", out)
	}
	// Replaced by rename, as resolvers rewrite it.
	write(t, conf+".new", "nameserver 10.0.0.2\n")
	if err := os.Rename(conf+".new", conf); err != nil {
		t.Fatal(err)
	}
	if out, code, _ := run(t, p, `cat `+conf); code != 0 || !strings.Contains(out, "10.0.0.2") {
		t.Errorf("after the file was replaced: exit %d, %q: want the new one", code, out)
	}
}

func TestStart_OtherProcessesEnvironUnreadable(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	// The plugin's (here the test's) environment may hold the host's
	// secrets; /proc is readable, its processes' memory and environment not.
	out, code, _ := run(t, f.policy(), fmt.Sprintf(`tr '\0' '\n' < /proc/%d/environ | head -1; cat /proc/%d/environ > /dev/null && echo read`, os.Getpid(), os.Getpid()))
	if code == 0 || strings.Contains(out, "read") || strings.Contains(out, "PATH=") {
		t.Errorf("reading the plugin's environ: exit %d, %q: want a refusal", code, out)
	}
	if out, code, _ := run(t, f.policy(), `cat /proc/self/status >/dev/null && echo own`); code != 0 || !strings.Contains(out, "own") {
		t.Errorf("the command's own /proc: exit %d, %q", code, out)
	}
}

func TestStart_OrdinaryWorkflow(t *testing.T) {
	requireLayers(t, true, false, false)
	f := newFixture(t)
	p := f.policy()
	p.Network = false
	write(t, filepath.Join(f.ws, "pool.py"), "import multiprocessing as mp\n\ndef sq(x):\n    return x * x\n\n"+
		"if __name__ == '__main__':\n    with mp.Pool(2) as p:\n        print(p.map(sq, [1, 2, 3]))\n")
	steps := []string{
		`cat /etc/os-release >/dev/null`,
		`python3 -c 'import json, sys; print(json.dumps({"ok": sys.version_info[0]}))'`,
		`python3 pool.py`, // semaphores in /dev/shm
	}
	if _, err := exec.LookPath("git"); err == nil {
		steps = append(steps, `git init -q . && echo x > a && git add a && git -c user.email=t@example.com commit -qm first && git log --oneline | wc -l`)
	}
	if _, err := exec.LookPath("make"); err == nil {
		write(t, filepath.Join(f.ws, "Makefile"), "all:\n\techo made > made.txt\n")
		steps = append(steps, `make -s && cat made.txt`)
	}
	if _, err := exec.LookPath("npm"); err == nil {
		steps = append(steps, `npm config get cache && npm init -y >/dev/null && test -f package.json`)
	}
	for _, s := range steps {
		if out, code, _ := run(t, p, "set -e; "+s); code != 0 {
			t.Errorf("%s: exit %d, %q", s, code, out)
		}
	}
}

// TestStart_SetIDRefused: every command gets the seccomp filter's set-id
// rule, with no exec rules and whether or not a supervision hears of its
// refusals; a set-id file the command may write loses its bit when its
// content changes.
func TestStart_SetIDRefused(t *testing.T) {
	if !Probe().Seccomp {
		t.Skipf("seccomp user notification is missing here: %s", Probe().Missing[LayerSeccomp])
	}
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.ws, "old"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(filepath.Join(f.ws, "old"), 0o4755); err != nil {
		t.Fatal(err)
	}
	script := `cp /bin/true x && chmod 4755 x; echo rc=$?; mkdir -m 2775 d; echo rc=$?; echo 'echo new' > old; stat -c '%a %n' x old`
	for _, report := range []bool{false, true} {
		p := f.policy()
		var mu sync.Mutex
		var told []execwatch.Refusal
		done := make(chan error, 1)
		supervised := false
		if report {
			p.Supervise = func(l *os.File, _ execwatch.Proxy) {
				supervised = true
				go func() {
					done <- execwatch.Supervise(context.Background(), l, execwatch.Supervision{Refused: func(r execwatch.Refusal) {
						mu.Lock()
						told = append(told, r)
						mu.Unlock()
					}})
				}()
			}
		}
		out, _, st := run(t, p, script)
		if !st.Applied.Seccomp || st.Listener != nil {
			t.Errorf("report %v: Applied.Seccomp %v, listener %v: want the filter, its listener with the supervision", report, st.Applied.Seccomp, st.Listener)
		}
		if strings.Count(out, "rc=1") != 2 || !strings.Contains(out, "755 x") || !strings.Contains(out, "755 old") || strings.Contains(out, "4755") {
			t.Errorf("report %v: %q: want chmod 4755 and mkdir -m 2775 refused, and old's bit gone", report, out)
		}
		if !report {
			continue
		}
		if !supervised {
			t.Error("Start handed the supervision no listener")
			continue
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		// mkdir -m asks for the mode less its umask, then sets the rest.
		if len(told) != 2 || told[0].Path != filepath.Join(f.ws, "x") || told[0].Mode != 0o4755 ||
			told[1].Path != filepath.Join(f.ws, "d") || told[1].Mode&unix.S_ISGID == 0 {
			t.Errorf("told %+v: want chmod of x to 4755 and mkdir of d with the setgid bit", told)
		}
		mu.Unlock()
		os.Remove(filepath.Join(f.ws, "x"))
		os.Remove(filepath.Join(f.ws, "d"))
		unix.Chmod(filepath.Join(f.ws, "old"), 0o4755)
	}
}

// TestStart_SessionNetworkNamespace: under sandbox.network: proxy a
// command enters the session's namespace, where the proxy's listener is
// on its loopback and the machine's loopback is not; one that cannot
// enter it is not started at all (never with the machine's network).
func TestStart_SessionNetworkNamespace(t *testing.T) {
	requireLayers(t, false, true, true)
	e, err := NewEgressNamespace()
	if err != nil {
		t.Fatalf("NewEgressNamespace: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	host, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	proxyPort := e.Listener.Addr().(*net.TCPAddr).Port
	hostPort := host.Addr().(*net.TCPAddr).Port

	f := newFixture(t)
	p := f.policy()
	p.Network, p.NetNS = false, e.Path
	out, code, st := run(t, p, fmt.Sprintf(`(echo > /dev/tcp/127.0.0.1/%d) 2>/dev/null && echo proxy-reached; (echo > /dev/tcp/127.0.0.1/%d) 2>/dev/null && echo host-reached; true`, proxyPort, hostPort))
	if code != 0 || !strings.Contains(out, "proxy-reached") || strings.Contains(out, "host-reached") || !st.Applied.NetNS {
		t.Errorf("in the session's namespace: exit %d, %q, NetNS %v; want the proxy's port reached and the machine's loopback not", code, out, st.Applied.NetNS)
	}

	p.NetNS = filepath.Join(t.TempDir(), "gone")
	cmd := exec.Command("/bin/bash", "-c", "echo ran")
	cmd.Dir, cmd.Env = p.Workspace, p.Env
	var buf bytes.Buffer
	cmd.Stdout = &buf
	if _, err := Start(cmd, p); err == nil || !strings.Contains(err.Error(), "nothing was run") {
		if err == nil {
			_ = cmd.Wait()
		}
		t.Errorf("Start without the session's namespace: %v (output %q), want it refused", err, buf.String())
	}
}
