//go:build linux

package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// sessionTmp makes a session temp folder, 0700, as the host does, and
// returns it resolved.
func sessionTmp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "sbsess")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	return d
}

// plant writes a marker file into the machine's temp folder dir and
// returns its name and content.
func plant(t *testing.T, dir string) (name, marker string) {
	t.Helper()
	f, err := os.CreateTemp(dir, "yagent-planted-")
	if err != nil {
		t.Skipf("cannot write into %s: %v", dir, err)
	}
	marker = "PLANTED-" + filepath.Base(f.Name())
	f.WriteString(marker + "\n")
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	return filepath.Base(f.Name()), marker
}

// listen serves a unix socket in the machine's temp folder dir, answering
// every connection with a marker; it returns the socket's name and the
// marker.
func listen(t *testing.T, dir string) (name, marker string) {
	t.Helper()
	path := filepath.Join(dir, "yagent-sock-"+strings.ReplaceAll(t.Name(), "/", "-"))
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("cannot listen in %s: %v", dir, err)
	}
	os.Chmod(path, 0o777)
	marker = "SOCKET-SERVED-" + filepath.Base(path)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(marker + "\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); os.Remove(path) })
	return filepath.Base(path), marker
}

// reach is a script that tries to read each file and connect to each
// socket under each temp folder, printing what it got.
func reach(over, files, socks []string) string {
	var b strings.Builder
	for _, o := range over {
		for _, f := range files {
			b.WriteString("cat " + o + "/" + f + " 2>&1; ")
		}
		for _, s := range socks {
			b.WriteString(`python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(s.recv(200).decode())
except OSError as e:
    print("refused:", e)' ` + o + "/" + s + "; ")
		}
	}
	return b.String()
}

// TestStart_TmpIsTheSessionFolder: with the session's temp folder bound
// over /tmp and /dev/shm, a command's files there land in the folder, and
// a file or a unix socket server in the machine's own /tmp and /dev/shm is
// out of its reach.
func TestStart_TmpIsTheSessionFolder(t *testing.T) {
	requireLayers(t, true, true, false)
	sbNeedPython(t)
	f := newFixture(t) // under /var/tmp: /var/tmp stays the machine's
	tmp := sessionTmp(t)
	over := []string{"/tmp", "/dev/shm"}
	var files, socks, markers []string
	for _, o := range over {
		name, m := plant(t, o)
		files, markers = append(files, name), append(markers, m)
		s, m := listen(t, o)
		socks, markers = append(socks, s), append(markers, m)
	}
	// The host can reach what it planted: the test would prove nothing
	// otherwise.
	if b, err := os.ReadFile(filepath.Join("/tmp", files[0])); err != nil || !strings.Contains(string(b), markers[0]) {
		t.Fatalf("the planted file is not there: %v", err)
	}
	p := f.policy()
	p.Tmp, p.TmpOver = tmp, over
	mine, sem := uniq("mine"), uniq("sem.x")
	out, code, st := run(t, p, reach(over, files, socks)+`echo made > /tmp/`+mine+`; echo shm > /dev/shm/`+sem+`; ls -A /tmp /dev/shm`)
	for _, m := range markers {
		if strings.Contains(out, m) {
			t.Errorf("the command reached %s in the machine's temp folders:\n%s", m, out)
		}
	}
	if !st.Applied.MountNS {
		t.Fatalf("Applied.MountNS false: %v", st.Applied.Missing)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, mine)); err != nil || string(b) != "made\n" {
		t.Errorf("/tmp/%s is not in the session's folder: %v, %q (exit %d, output %q)", mine, err, b, code, out)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, sem)); err != nil || string(b) != "shm\n" {
		t.Errorf("/dev/shm/%s is not in the session's folder: %v, %q", sem, err, b)
	}
	for _, leak := range []string{"/tmp/" + mine, "/dev/shm/" + sem} {
		if _, err := os.Stat(leak); err == nil {
			os.Remove(leak)
			t.Errorf("%s reached the machine's temp folder", leak)
		}
	}
}

// TestStart_VarTmpIsTheSessionFolder: the same for /var/tmp, with the
// workspace elsewhere.
func TestStart_VarTmpIsTheSessionFolder(t *testing.T) {
	requireLayers(t, true, true, false)
	sbNeedPython(t)
	base := outsideTemps(t)
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := sessionTmp(t) // under /var/tmp itself: opened before the bind
	name, fileMarker := plant(t, "/var/tmp")
	sock, sockMarker := listen(t, "/var/tmp")
	p := Policy{Workspace: ws, Network: true, Env: newFixture(t).env, Tmp: tmp, TmpOver: []string{"/var/tmp"}}
	mine := uniq("mine")
	out, _, st := run(t, p, reach(p.TmpOver, []string{name}, []string{sock})+`echo v > /var/tmp/`+mine+`; ls -A /var/tmp`)
	if strings.Contains(out, fileMarker) || strings.Contains(out, sockMarker) {
		t.Errorf("the command reached the machine's /var/tmp:\n%s", out)
	}
	if strings.Contains(out, filepath.Base(tmp)) {
		t.Errorf("the command lists the machine's /var/tmp (its own folder's name shows):\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, mine)); err != nil || string(b) != "v\n" || !st.Applied.MountNS {
		os.Remove(filepath.Join("/var/tmp", mine))
		t.Errorf("/var/tmp/%s is not in the session's folder: %v, %q (output %q)", mine, err, b, out)
	}
}

// TestStart_SessionsKeepTheirOwnTmp: two sessions' commands each see their
// own folder at /tmp, each in a kept namespace of its own, and a command
// without one sees the machine's /tmp.
func TestStart_SessionsKeepTheirOwnTmp(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	a, b := sessionTmp(t), sessionTmp(t)
	pa, pb := f.policy(), f.policy()
	pa.Tmp, pa.TmpOver = a, []string{"/tmp"}
	pb.Tmp, pb.TmpOver = b, []string{"/tmp"}
	who := "/tmp/" + uniq("who")
	t.Cleanup(func() { os.Remove(who) })
	if out, code, _ := run(t, pa, `echo A > `+who); code != 0 {
		t.Fatalf("session A: exit %d, %q", code, out)
	}
	if out, code, _ := run(t, pb, `cat `+who+` 2>/dev/null || echo none; echo B > `+who); code != 0 || strings.TrimSpace(out) != "none" {
		t.Errorf("session B sees session A's %s: exit %d, %q", who, code, out)
	}
	if out, _, _ := run(t, pa, `cat `+who); strings.TrimSpace(out) != "A" {
		t.Errorf("session A's second command reads %q in %s, want its own A", out, who)
	}
	if out, _, _ := run(t, f.policy(), `cat `+who+` 2>/dev/null || echo none`); strings.TrimSpace(out) != "none" {
		t.Errorf("a command with no session folder reads %q in %s, want the machine's /tmp", out, who)
	}
	c := namespaces()
	c.mu.Lock()
	n := 0
	for _, m := range c.mounts {
		if m.tmp == a || m.tmp == b {
			n++
		}
	}
	c.mu.Unlock()
	if c.watch >= 0 && n != 2 {
		t.Errorf("%d kept namespaces bind the two sessions' folders, want one each", n)
	}
	ForgetTmp(a)
	c.mu.Lock()
	for _, m := range c.mounts {
		if m.tmp == a {
			t.Error("ForgetTmp left session A's namespace kept")
		}
	}
	c.mu.Unlock()
	// A forgotten session's next command gets a namespace again, its
	// files there.
	if out, _, _ := run(t, pa, `cat `+who); strings.TrimSpace(out) != "A" {
		t.Errorf("after ForgetTmp, session A reads %q in %s, want A", out, who)
	}
}

// TestStart_RemadeTmpBoundAnew: a session folder removed and made again
// under the same name is bound anew, not the removed one.
func TestStart_RemadeTmpBoundAnew(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	tmp := sessionTmp(t)
	p := f.policy()
	p.Tmp, p.TmpOver = tmp, []string{"/tmp"}
	name := uniq("f")
	t.Cleanup(func() { os.Remove("/tmp/" + name) })
	run(t, p, `echo old > /tmp/`+name)
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	out, code, _ := run(t, p, `cat /tmp/`+name+` 2>/dev/null; echo new > /tmp/`+name)
	if strings.Contains(out, "old") {
		t.Errorf("the removed folder's file shows: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, name)); err != nil || string(b) != "new\n" {
		t.Errorf("the remade folder is not the one bound: %v, %q (exit %d, %q)", err, b, code, out)
	}
}

// TestNamespaces_BoundedLeastRecentlyUsed: past nsCacheMounts session
// namespaces the least recently used goes, and one in use all along stays.
// A mount anywhere in the test process's mount namespace (another test
// process of the machine mounting) rightly flushes every kept namespace;
// a round during which the table changed says nothing of the order, and
// is run again (the test skips when every round met a change).
func TestNamespaces_BoundedLeastRecentlyUsed(t *testing.T) {
	requireLayers(t, true, true, false)
	c := namespaces()
	if c.watch < 0 {
		t.Skip("no namespace can be kept here")
	}
	f := newFixture(t)
	const rounds = 10
	for round := 1; ; round++ {
		// A descriptor of its own, outside the runtime's poller: whose
		// epoll would take the change as it reads it.
		watch, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		problems := boundedLRURound(t, c, f)
		fds := []unix.PollFd{{Fd: int32(watch), Events: unix.POLLPRI}}
		n, _ := unix.Poll(fds, 0)
		unix.Close(watch)
		if n == 0 {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
		if round == rounds {
			t.Skipf("the mount table changed during each of %d rounds, which flushes the kept namespaces: nothing to tell of their order", rounds)
		}
		t.Logf("round %d: the mount table changed meanwhile, which flushes the kept namespaces; again", round)
	}
}

// boundedLRURound runs nsCacheMounts + 2 session namespaces past the
// cache, one more used between each, and says what it then finds wrong.
func boundedLRURound(t *testing.T, c *nsCache, f *fixture) []string {
	hot := f.policy()
	hot.Tmp, hot.TmpOver = sessionTmp(t), []string{"/tmp"}
	var first string
	var hotNS *keptMount
	for i := range nsCacheMounts + 2 {
		p := f.policy()
		p.Tmp, p.TmpOver = sessionTmp(t), []string{"/tmp"}
		if i == 0 {
			first = p.Tmp
		}
		run(t, p, `true`)
		run(t, hot, `true`)
		if i == 0 {
			c.mu.Lock()
			for _, m := range c.mounts {
				if m.tmp == hot.Tmp {
					hotNS = m
				}
			}
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var problems []string
	for _, m := range c.mounts {
		if m.tmp == hot.Tmp && m != hotNS {
			problems = append(problems, "the namespace used by every other command was dropped and made again")
		}
	}
	if len(c.mounts) > nsCacheMounts || len(c.order) != len(c.mounts) {
		problems = append(problems, fmt.Sprintf("%d kept mount namespaces (%d in order), want at most %d", len(c.mounts), len(c.order), nsCacheMounts))
	}
	kept := map[string]bool{}
	for _, m := range c.mounts {
		kept[m.tmp] = true
	}
	if !kept[hot.Tmp] {
		problems = append(problems, "the namespace used by every other command was dropped")
	}
	if kept[first] {
		problems = append(problems, "the least recently used namespace is still kept past the bound")
	}
	return problems
}

// outsideTemps makes a folder outside /tmp, /var/tmp and /dev/shm.
func outsideTemps(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no folder outside the temp folders: %v", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Skipf("no folder outside the temp folders: %v", err)
	}
	d, err := os.MkdirTemp(base, "yagent-sbtmp-")
	if err != nil {
		t.Skipf("no folder outside the temp folders: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	for _, o := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if policy.Within(o, d, true) {
			t.Skipf("the cache folder %s is under %s", d, o)
		}
	}
	return d
}

// uniq is name with a random suffix: what a broken run leaves in the
// machine's temp folders never answers the next run.
func uniq(name string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}

func sbNeedPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// TestStartForCall_ChildSeesTheFoldersAsTheyAre: a plugin's own child
// (ripgrep, the Go loader) is given the paths the host resolved, a file of
// the session's temp folder by its own name: nothing is bound over the
// temp folders for it, and the folder is granted.
func TestStartForCall_ChildSeesTheFoldersAsTheyAre(t *testing.T) {
	requireLayers(t, true, true, false)
	f := newFixture(t)
	tmp := sessionTmp(t)
	write(t, filepath.Join(tmp, "found"), "IN-THE-SESSION-FOLDER\n")
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{Workspace: f.ws,
		Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn},
		Temp:    &sdk.TempFolder{Dir: tmp, Over: []string{"/tmp", "/dev/shm"}}})
	p, _, ok := ForCall(ctx, f.env)
	if !ok || p.Tmp != tmp || !slices.Equal(p.TmpOver, []string{"/tmp", "/dev/shm"}) {
		t.Fatalf("ForCall: %+v, want the call's temp folder and what it stands for", p)
	}
	name := uniq("machine")
	if err := os.WriteFile("/tmp/"+name, []byte("THE-MACHINE-TMP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove("/tmp/" + name) })
	var out strings.Builder
	cmd := exec.Command("/bin/bash", "-c", `cat "$1"; cat /tmp/"$2"`, "bash", filepath.Join(tmp, "found"), name)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = f.ws, f.env, &out, &out
	if err := StartForCall(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !strings.Contains(out.String(), "IN-THE-SESSION-FOLDER") || !strings.Contains(out.String(), "THE-MACHINE-TMP") {
		t.Errorf("a plugin's child: %q, want the session folder's file by its own name and the machine's /tmp as it is", out.String())
	}
}

// TestRuleset_SessionTmpWritable: the session's temp folder is among what
// commands may change, which the host judges plugin folders by.
func TestRuleset_SessionTmpWritable(t *testing.T) {
	f := newFixture(t)
	tmp := sessionTmp(t)
	p := f.policy()
	p.Tmp = tmp
	if !slices.Contains(p.WriteRoots(), tmp) || !p.Permits(filepath.Join(tmp, "new"), true) {
		t.Errorf("WriteRoots %v: want the session's temp folder %s writable", p.WriteRoots(), tmp)
	}
}
