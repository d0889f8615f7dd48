//go:build linux

package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMayConnect: a command may connect to the sockets of its workspace,
// of sandbox.write roots and approvals, and those sandbox.unix_sockets
// names, but none of the shared temp folders' (a terminal multiplexer's),
// the home folder's or /run's, unless the profile names it.
func TestMayConnect(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Write = []string{"/srv/shared", f.outside}
	p.Granted = []string{"/opt/approved"}
	p.Read = []string{"/var/lib/app/app.sock"}
	p.UnixSockets = []string{"/run/user/0/ssh-agent.sock", "/tmp/admin.sock"}
	for path, want := range map[string]bool{
		filepath.Join(f.ws, "s.sock"):           true,
		filepath.Join(f.ws, "deep/er/s"):        true,
		"/srv/shared/db.sock":                   true,
		"/opt/approved/x.sock":                  true,
		"/opt/approved":                         true,
		"/var/lib/app/app.sock":                 true,
		"/run/user/0/ssh-agent.sock":            true,
		"/tmp/admin.sock":                       true,
		"/tmp/tmux-0/default":                   false,
		"/tmp/.X11-unix/X0":                     false,
		"/var/tmp/agent.sock":                   false,
		"/dev/shm/s":                            false,
		filepath.Join(f.home, ".gnupg/S.agent"): false,
		"/run/docker.sock":                      false,
		"/var/lib/app/other.sock":               false,
		filepath.Join(f.outside, "s"):           true, // under /var/tmp, but the admin's
		f.outside + "x/s":                       false,
	} {
		if got := p.MayConnect(path); got != want {
			t.Errorf("MayConnect(%s) = %v, want %v", path, got, want)
		}
	}
}

// TestStart_AbstractSockets: under the socket rules, with Landlock's scope
// of abstract sockets, a command connects to the abstract socket it made
// itself, through the proxy in its domain, but not to one of a process
// outside its sandbox, whose refusal is EPERM as Landlock's own.
func TestStart_AbstractSockets(t *testing.T) {
	if l := Probe(); !l.Seccomp || l.LandlockABI < 6 {
		t.Skipf("needs seccomp user notification and Landlock ABI 6: %v", l.Missing)
	}
	py, err := lookPython()
	if err != nil {
		t.Skip(err)
	}
	name := "yagent-abstract-" + filepath.Base(t.TempDir())
	ln, err := net.Listen("unix", "@"+name+"-outside")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("outside"))
			c.Close()
		}
	}()
	f := newFixture(t)
	p, wait := reported(&Policy{Workspace: f.ws, Network: true, Env: f.env})
	out, _, st := run(t, *p, py+` -c '
import socket, sys, threading
name = sys.argv[1]
srv = socket.socket(socket.AF_UNIX)
srv.bind("\0" + name + "-own"); srv.listen()
def serve():
    c, _ = srv.accept(); c.send(b"own"); c.close()
threading.Thread(target=serve).start()
for n in ("-own", "-outside"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + name + n)
        print(n, "ok", s.recv(16).decode())
    except OSError as e:
        print(n, "errno", e.errno)
' `+name)
	wait()
	if !st.Applied.Sockets {
		t.Fatalf("Applied.Sockets false: the socket rules were not applied")
	}
	if !strings.Contains(out, "-own ok own") || !strings.Contains(out, "-outside errno 1\n") {
		t.Errorf("output %q: want the command's own abstract socket reached and the outside one refused with EPERM", out)
	}
}

// lookPython finds a real python3 (not a version manager's shim, which
// would run its interpreter from the home folder).
func lookPython() (string, error) {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// TestMayConnectFile: a socket under a temp folder the session's own is
// bound over is the command's when the session folder holds that very
// file; the same path naming another file (the machine's /tmp, where the
// bind was not made) is refused like the shared folder's.
func TestMayConnectFile(t *testing.T) {
	f := newFixture(t)
	tmp := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(tmp, "own.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(filepath.Join(tmp, "own.sock"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	p := f.policy()
	p.Tmp, p.TmpOver = tmp, []string{"/tmp", "/dev/shm"}
	for _, tc := range []struct {
		path     string
		dev, ino uint64
		want     bool
	}{
		{"/tmp/own.sock", st.Dev, st.Ino, true},
		{"/dev/shm/own.sock", st.Dev, st.Ino, true},
		{"/tmp/own.sock", st.Dev, st.Ino + 1, false},
		{"/tmp/tmux-0/default", st.Dev, st.Ino, false},
		{"/var/tmp/own.sock", st.Dev, st.Ino, false},
		{filepath.Join(tmp, "own.sock"), st.Dev, st.Ino, true},
	} {
		if got := p.MayConnectFile(tc.path, tc.dev, tc.ino); got != tc.want {
			t.Errorf("MayConnectFile(%s, %d, %d) = %v, want %v", tc.path, tc.dev, tc.ino, got, tc.want)
		}
	}
}
