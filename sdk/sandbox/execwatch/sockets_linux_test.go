//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// unixServer listens on a unix socket at path (or, with a leading "@", an
// abstract name) and counts the connections it accepts, answering each
// with its name.
type unixServer struct {
	ln       net.Listener
	accepted atomic.Int32
}

func listenUnix(t *testing.T, path, answer string) *unixServer {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &unixServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			c.Write([]byte(answer))
			c.Close()
		}
	}()
	return s
}

// runSockets runs the Python script under a Sockets filter in dir, its
// connects to pathname sockets judged by allow, and returns its output and
// what the supervision was told.
func runSockets(t *testing.T, dir string, allow func(Connect) bool, script string, args ...string) (string, []Refusal) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(python(t), append([]string{"-c", script}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	l, err := startWith(cmd, Filter{Sockets: true, Report: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var told []Refusal
	sup := make(chan error, 1)
	go func() {
		sup <- Supervise(context.Background(), l, Supervision{
			Connect: func(_ context.Context, c Connect) Verdict { return Verdict{Allow: allow(c)} },
			Refused: func(r Refusal) {
				mu.Lock()
				told = append(told, r)
				mu.Unlock()
			},
		})
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(waitBound):
		cmd.Process.Kill()
		t.Fatalf("the script did not end; output so far:\n%s", out.String())
	}
	if err := <-sup; err != nil {
		t.Fatalf("Supervise: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return out.String(), told
}

// socketScript tries each way to reach a socket and prints one line for
// each: "name ok ANSWER" or "name errno N".
const socketScript = `
import socket, sys, os, errno
def attempt(name, fn):
    try:
        print(name, "ok", fn())
    except OSError as e:
        print(name, "errno", e.errno)
def stream(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(addr)
    return s.recv(64).decode()
def seqpacket():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    a.send(b"x"); return b.recv(8).decode()
def pair():
    a, b = socket.socketpair()
    a.sendall(b"y"); return b.recv(8).decode()
def dgram():
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def dgrampair():
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
def tcp(port):
    s = socket.create_connection(("127.0.0.1", int(port)))
    return s.recv(64).decode()
inside, outside, link, tcpport, abstract = sys.argv[1:6]
attempt("inside", lambda: stream(inside))
attempt("relative", lambda: stream("in/s"))
attempt("outside", lambda: stream(outside))
attempt("link", lambda: stream(link))
attempt("hard", lambda: stream(link[:-4] + "hard"))
attempt("missing", lambda: stream(inside + ".none"))
attempt("abstract", lambda: stream("\0" + abstract))
attempt("tcp", lambda: tcp(tcpport))
attempt("pair", pair)
attempt("seqpacket", seqpacket)
attempt("dgram", dgram)
attempt("dgrampair", dgrampair)
`

// TestSockets_Connect: under the socket rules a connect to a pathname
// socket reaches the file its name resolves to only when the judge allows
// that file (relative names against the process's folder, links followed
// in its view, never a hard link of another socket), anything else gets
// EACCES and is reported with the file;
// a missing file fails as the kernel's own; TCP and abstract addresses,
// socketpair and seqpacket pairs work; unix datagram sockets cannot be
// made and are reported.
func TestSockets_Connect(t *testing.T) {
	needSeccomp(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.Mkdir(in, 0o755)
	os.Mkdir(out, 0o755)
	inside := listenUnix(t, filepath.Join(in, "s"), "inside")
	outside := listenUnix(t, filepath.Join(out, "s"), "outside")
	if err := os.Symlink(filepath.Join(out, "s"), filepath.Join(in, "link")); err != nil {
		t.Fatal(err)
	}
	// A hard link of a socket of its own, so the one outside keeps one name.
	listenUnix(t, filepath.Join(out, "linked"), "outside")
	if err := os.Link(filepath.Join(out, "linked"), filepath.Join(in, "hard")); err != nil {
		t.Fatal(err)
	}
	abstract := "yagent-test-" + filepath.Base(dir)
	listenUnix(t, "@"+abstract, "abstract")
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("tcp"))
			c.Close()
		}
	}()
	var judged []Connect
	var mu sync.Mutex
	allow := func(c Connect) bool {
		mu.Lock()
		judged = append(judged, c)
		mu.Unlock()
		return strings.HasPrefix(c.Path, in+"/")
	}
	got, told := runSockets(t, dir, allow, socketScript, filepath.Join(in, "s"), filepath.Join(out, "s"), filepath.Join(in, "link"),
		tcp.Addr().(*net.TCPAddr).AddrPort().String()[len("127.0.0.1:"):], abstract)
	for _, want := range []string{"inside ok inside", "relative ok inside", "outside errno 13", "link errno 13", "hard errno 13", "missing errno 2",
		"abstract ok abstract", "tcp ok tcp", "pair ok y", "seqpacket ok x", "dgram errno 13", "dgrampair errno 13"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := outside.accepted.Load(); n != 0 {
		t.Errorf("the server outside accepted %d connections", n)
	}
	if n := inside.accepted.Load(); n != 2 {
		t.Errorf("the server inside accepted %d connections, want 2", n)
	}
	var calls []string
	for _, r := range told {
		calls = append(calls, r.Call+" "+r.Path)
		if r.Errno != 13 || r.Pid <= 0 || r.SetID() {
			t.Errorf("refusal %+v: want EACCES from a pid, no set-id", r)
		}
	}
	for want, times := range map[string]int{"connect " + filepath.Join(out, "s"): 2, "connect " + filepath.Join(in, "hard"): 1, "socket ": 1, "socketpair ": 1} {
		n := 0
		for _, c := range calls {
			if c == want {
				n++
			}
		}
		if n != times {
			t.Errorf("told %q %d times; told %q", want, n, calls)
		}
	}
	for _, c := range judged {
		if c.Named == "in/s" && c.Path != filepath.Join(in, "s") {
			t.Errorf("relative name judged as %+v, want the file in the process's folder", c)
		}
	}
}

// TestSockets_AddressRewritten: a second thread that rewrites the address
// while the first connects again and again, between a socket the judge
// allows and one it refuses, never gets the refused one connected: the
// supervisor connects what it read and judged.
func TestSockets_AddressRewritten(t *testing.T) {
	needSeccomp(t)
	dir := t.TempDir()
	// Names of one length, so the rewrite is a plain byte swap.
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "evil")
	listenUnix(t, good, "good")
	evil := listenUnix(t, bad, "evil")
	allow := func(c Connect) bool { return c.Path == good }
	got, _ := runSockets(t, dir, allow, `
import ctypes, socket, sys, threading
sys.setswitchinterval(0.0002)
libc = ctypes.CDLL(None, use_errno=True)
good, bad = sys.argv[1].encode(), sys.argv[2].encode()
class sockaddr_un(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("path", ctypes.c_char * 108)]
addr = sockaddr_un(socket.AF_UNIX, good)
stop = False
def flip():
    while not stop:
        addr.path = bad
        addr.path = good
threading.Thread(target=flip, daemon=True).start()
ok = refused = 0
answers = set()
for i in range(300):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if libc.connect(s.fileno(), ctypes.byref(addr), ctypes.sizeof(addr)) == 0:
        ok += 1
        answers.add(s.recv(16).decode())
    else:
        refused += 1
    s.close()
stop = True
print("ok", ok, "refused", refused, "answers", sorted(answers))
`, good, bad)
	if n := evil.accepted.Load(); n != 0 {
		t.Errorf("the refused socket accepted %d connections: %s", n, got)
	}
	if !strings.Contains(got, "answers ['good']") || !strings.Contains(got, "refused") {
		t.Errorf("output %q, want connects to the good socket only", got)
	}
	t.Log(strings.TrimSpace(got))
}
