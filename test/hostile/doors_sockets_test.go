package hostile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sockServer is a unix socket server outside the sandbox, as a terminal
// multiplexer's or an agent's: it counts what reaches it.
type sockServer struct {
	path     string
	accepted atomic.Int32
}

// listenOutside serves a stream socket at path (a leading "@" is an
// abstract name).
func listenOutside(t *testing.T, path string) *sockServer {
	t.Helper()
	if !strings.HasPrefix(path, "@") {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &sockServer{path: path}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			c.Write([]byte("REACHED-OUTSIDE\n"))
			c.Close()
		}
	}()
	return s
}

// listenDgram binds a datagram socket at path and counts what it receives.
func listenDgram(t *testing.T, path string) *sockServer {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("unixgram", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &sockServer{path: path}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 256)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			s.accepted.Add(1)
		}
	}()
	return s
}

// pyConnect is a Python program that connects a unix stream socket to
// argv[1] and prints what the server says, or the errno.
const pyConnect = `import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("GOT", s.recv(64).decode().strip())
except OSError as e:
    print("ERRNO", e.errno)
`

// pyDgram sends a datagram to argv[2] the way argv[1] says.
const pyDgram = `import socket, sys
how, path = sys.argv[1], sys.argv[2]
try:
    if how == "pair":
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    else:
        a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if how == "sendmsg":
        a.sendmsg([b"x"], [], 0, path)
    else:
        a.sendto(b"x", path)
    print("SENT")
except OSError as e:
    print("ERRNO", e.errno); sys.exit(1)
`

// pyAbstract connects to the abstract socket argv[1].
const pyAbstract = `import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + sys.argv[1]); print("GOT", s.recv(64).decode().strip())
except OSError as e:
    print("ERRNO", e.errno)
`

// pyUring sets up an io_uring, whose requests could connect unseen.
const pyUring = `import ctypes
l = ctypes.CDLL(None, use_errno=True)
r = l.syscall(425, 8, ctypes.create_string_buffer(120))
print("io_uring_setup", r, ctypes.get_errno())
`

// pyRace connects again and again while a second thread swaps the
// address between a file in the workspace and the socket argv[1].
const pyRace = `import ctypes, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
class A(ctypes.Structure):
    _fields_ = [("f", ctypes.c_ushort), ("p", ctypes.c_char * 108)]
good, bad = b"./connect.py", sys.argv[1].encode()
a = A(socket.AF_UNIX, good)
stop = [False]
def flip():
    while not stop[0]:
        a.p = bad; a.p = good
threading.Thread(target=flip, daemon=True).start()
for i in range(800):
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), ctypes.byref(a), ctypes.sizeof(a)) == 0:
        print("GOT", s.recv(64))
    s.close()
stop[0] = True
print("DONE")
`

// TestDoorsSockets: no command reaches a unix socket a server outside the
// sandbox listens on (under /tmp, /var/tmp, the home folder, a folder the
// command cannot read, an abstract name), however it connects: connect by
// any name (relative, through a link, a hard link, /proc/self/root),
// sendto and sendmsg to a datagram socket, io_uring, or a second thread
// that rewrites the address after the check. Before, Landlock ABI 7 did
// not mediate connect at all: tmux's socket in /tmp let a command type
// into a shell outside.
func TestDoorsSockets(t *testing.T) {
	t.Parallel()
	sbNeed(t, "python3")
	mark := make([]byte, 6)
	_, _ = rand.Read(mark)
	m := hex.EncodeToString(mark)
	e := newEnv(t)
	tmpDir := "/tmp/yagent-tmux-" + m
	varDir := "/var/tmp/yagent-sock-" + m
	t.Cleanup(func() { os.RemoveAll(tmpDir); os.RemoveAll(varDir) })
	servers := map[string]*sockServer{
		"tmp":      listenOutside(t, tmpDir+"/default"),
		"vartmp":   listenOutside(t, varDir+"/s"),
		"home":     listenOutside(t, filepath.Join(e.home, ".local", "share", "agent.sock")),
		"unread":   listenOutside(t, filepath.Join(e.home, ".ssh", "agent", "s")),
		"abstract": listenOutside(t, "@yagent-outside-"+m),
		"dgram":    listenDgram(t, varDir+"/log"),
		"race":     listenOutside(t, tmpDir+"/evil"),
	}
	sbWriteFiles(t, e, "", map[string]string{"connect.py": pyConnect, "dgram.py": pyDgram, "race.py": pyRace, "uring.py": pyUring, "abstract.py": pyAbstract})
	// Nobody is asked: each name is built at run time, where the guard
	// cannot see it, so only the kernel's wall stands in the way (a name
	// the guard sees asks, and an approval of it grants it).
	// A case the guard asks about for another reason runs under -y, which
	// approves what the guard sees, never a name built at run time.
	c, yes := e.serve(), e.serve("-y")
	hide := func(path string) string { return "P=" + sbHide(path) + "; " }
	cases := []struct {
		name, cmd, ran string
		yes            bool
	}{
		{"connect to tmux's socket in /tmp", hide(tmpDir+"/default") + `python3 connect.py "$P"`, "ERRNO", false},
		{"tmux -S send-keys to the socket in /tmp", hide(tmpDir+"/default") + `t=tm; t=${t}ux; $t -S "$P" send-keys -t 0 'id' Enter; echo rc=$?`, "rc=", true},
		{"curl --unix-socket in /tmp", hide(tmpDir+"/default") + `curl -sS --max-time 5 --unix-socket "$P" http://x/; echo rc=$?`, "rc=", false},
		{"connect to a socket in /var/tmp", hide(varDir+"/s") + `python3 connect.py "$P"`, "ERRNO", false},
		{"connect to a socket in the home folder", hide(filepath.Join(e.home, ".local", "share", "agent.sock")) + `python3 connect.py "$P"`, "ERRNO", false},
		{"connect to a socket in a folder the command cannot read", hide(filepath.Join(e.home, ".ssh", "agent", "s")) + `python3 connect.py "$P"`, "ERRNO", false},
		{"connect by a relative name", hide(varDir) + `W=$PWD; cd "$P" && python3 "$W/connect.py" s`, "ERRNO", true},
		{"connect through a symlink in the workspace", hide(varDir+"/s") + `ln -s "$P" link.sock && python3 connect.py link.sock`, "ERRNO", false},
		{"connect through a hard link in the workspace", hide(tmpDir+"/default") + `ln "$P" hard.sock; python3 connect.py hard.sock`, "ERRNO", false},
		{"connect through /proc/self/root", hide(varDir+"/s") + `python3 connect.py "/proc/self/root$P"`, "ERRNO", true},
		{"connect to an abstract socket outside", hide("yagent-outside-"+m) + `python3 abstract.py "$P"`, "ERRNO", false},
		{"sendto a datagram socket", hide(varDir+"/log") + `python3 dgram.py sendto "$P"`, "ERRNO", false},
		{"sendmsg to a datagram socket", hide(varDir+"/log") + `python3 dgram.py sendmsg "$P"`, "ERRNO", false},
		{"sendto from a datagram socketpair", hide(varDir+"/log") + `python3 dgram.py pair "$P"`, "ERRNO", false},
		{"io_uring's connect", `python3 uring.py`, "io_uring_setup -1 38", false},
		{"a second thread rewrites the address", hide(tmpDir+"/evil") + `python3 race.py "$P"`, "DONE", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			if tc.yes {
				c = yes
			}
			r := sbRun(t, c, tc.cmd, 30000)
			if strings.Contains(sbText(r), "REACHED-OUTSIDE") {
				t.Errorf("the command reached a server outside: %s", r)
			}
			if !strings.Contains(sbText(r), tc.ran) {
				t.Errorf("the command did not run to %q: %s", tc.ran, r)
			}
		})
	}
	for name, s := range servers {
		if n := s.accepted.Load(); n != 0 {
			t.Errorf("the %s server outside (%s) was reached %d times", name, s.path, n)
		}
	}
	// The model is told why, once per command.
	home := filepath.Join(e.home, ".local", "share", "agent.sock")
	r := sbRun(t, c, hide(home)+`python3 connect.py "$P"`, 0)
	if low := sbText(r); !strings.Contains(low, "yagent sandbox: the connect to the unix socket "+home+" was refused") || !strings.Contains(low, "sandbox.unix_sockets") {
		t.Errorf("the refusal does not say why and what to do: %s", r)
	}
	r = sbRun(t, c, hide(varDir+"/log")+`python3 dgram.py sendto "$P"`, 0)
	if !strings.Contains(sbText(r), "asked for a unix datagram socket, which the sandbox refuses") {
		t.Errorf("the datagram refusal does not say why: %s", r)
	}
}

// TestDoorsSocketsBenign: what commands do with sockets of their own keeps
// working under the socket rules: a server and client in the workspace,
// socketpairs, a tmux the command starts with its socket in the
// workspace, an abstract socket the command made, TCP to a local server.
func TestDoorsSocketsBenign(t *testing.T) {
	t.Parallel()
	sbNeed(t, "python3")
	e := newEnv(t)
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
			c.Write([]byte("tcp-ok\n"))
			c.Close()
		}
	}()
	port := tcp.Addr().(*net.TCPAddr).AddrPort().Port()
	sbWriteFiles(t, e, "", map[string]string{"connect.py": pyConnect, "serve.py": `import socket, sys, threading
srv = socket.socket(socket.AF_UNIX)
srv.bind(sys.argv[1]); srv.listen()
def one():
    c, _ = srv.accept(); c.send(b"inside-ok"); c.close()
threading.Thread(target=one).start()
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print(c.recv(64).decode())
`})
	// The machine's network, so that a server on the machine's loopback is
	// the command's to reach (under proxy, the default, the command's
	// loopback is its namespace's): the socket rules alone are judged here.
	e.configUser("config.yaml", "sandbox: {network: on}\n")
	c, yes := e.serve(), e.serve("-y")
	for _, tc := range []struct{ name, cmd, want string }{
		{"a server and client in the workspace", "python3 serve.py ./s.sock", "inside-ok"},
		{"a server and client in a folder of the workspace by absolute name", "mkdir -p run && python3 serve.py $PWD/run/s", "inside-ok"},
		{"an abstract socket the command made", `python3 -c "
import socket, threading
srv = socket.socket(socket.AF_UNIX); srv.bind('\0yagent-own'); srv.listen()
threading.Thread(target=lambda: srv.accept()[0].send(b'inside-ok')).start()
c = socket.socket(socket.AF_UNIX); c.connect('\0yagent-own'); print(c.recv(64).decode())"`, "inside-ok"},
		{"a stream socketpair", `python3 -c "import socket; a, b = socket.socketpair(); a.send(b'pair-ok'); print(b.recv(8).decode())"`, "pair-ok"},
		{"a seqpacket socketpair", `python3 -c "import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.send(b'seq-ok'); print(b.recv(8).decode())"`, "seq-ok"},
		{"TCP to a local server", `python3 -c "import socket; print(socket.create_connection(('127.0.0.1', ` + strconv.Itoa(int(port)) + `)).recv(16).decode())"`, "tcp-ok"},
		{"a server and client in the temp folder", "python3 serve.py /tmp/s.sock; python3 serve.py \"$TMPDIR/t.sock\"", "inside-ok\ninside-ok"},
		{"tmux the command starts, its socket in the temp folder", "tmux new-session -d 'sleep 20' && tmux list-sessions >/dev/null && echo tmux-ok; tmux kill-server", "tmux-ok"},
		{"tmux the command starts, its socket in the workspace", "tmux -S ./tmux.sock new-session -d 'sleep 20' && tmux -S ./tmux.sock list-sessions >/dev/null && echo tmux-ok; tmux -S ./tmux.sock kill-server", "tmux-ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			if strings.Contains(tc.name, "tmux") {
				// tmux asks, as a program that runs others in a terminal.
				sbNeed(t, "tmux")
				c = yes
			}
			r := sbRun(t, c, tc.cmd, 30000)
			if !strings.Contains(sbText(r), tc.want) || strings.Contains(sbText(r), "was refused") {
				t.Errorf("want %q and no refusal: %s", tc.want, r)
			}
		})
	}
}

// TestDoorsSocketsProfile: an ssh-agent outside the sandbox is reached at
// the paths the profile's sandbox.unix_sockets names, wherever they are (a
// folder the command cannot read, /run under its empty tmpfs, the
// machine's /tmp under the session's own), and only there: one at a path
// the profile does not name is refused. The paths are read at run time,
// so the guard asks nothing.
func TestDoorsSocketsProfile(t *testing.T) {
	t.Parallel()
	sbNeed(t, "ssh-agent")
	sbNeed(t, "ssh-add")
	e := newEnv(t)
	tag := strconv.Itoa(os.Getpid()) + "-" + filepath.Base(e.root)
	runDir := "/run/yagent-agent-" + tag
	tmpDir := "/tmp/ssh-yagent-" + tag
	for _, d := range []string{runDir, tmpDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Skipf("no folder for an agent: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	agents := map[string]string{
		"outside": filepath.Join(e.outside, "agent.sock"),
		"run":     filepath.Join(runDir, "agent.sock"),
		"tmp":     filepath.Join(tmpDir, "agent.sock"),
		"unnamed": filepath.Join(e.outside, "unnamed.sock"),
	}
	for _, p := range agents {
		cmd := exec.Command("ssh-agent", "-D", "-a", p)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	for name, p := range agents {
		if !eventuallyTrue(5*time.Second, func() bool { _, err := os.Stat(p); return err == nil }) {
			t.Fatalf("the %s agent did not start at %s", name, p)
		}
	}
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), fmt.Sprintf("sandbox: {unix_sockets: [%s, %s, %s]}\n",
		agents["outside"], agents["run"], agents["tmp"]))
	files := map[string]string{}
	for name, p := range agents {
		files[name+".path"] = p
	}
	sbWriteFiles(t, e, "", files)
	c := e.serve()
	for _, name := range []string{"outside", "run", "tmp", "unnamed"} {
		t.Run(name, func(t *testing.T) {
			r := sbText(sbRun(t, c, `SSH_AUTH_SOCK=$(cat `+name+`.path) ssh-add -l; echo "ssh-add exited with $?"`, 30000))
			reached := strings.Contains(r, "The agent has no identities.")
			if name == "unnamed" {
				if reached || !strings.Contains(r, "was refused") {
					t.Errorf("an agent at a path the profile does not name was reached, or the refusal not told: %s", r)
				}
				return
			}
			if !reached || strings.Contains(r, "was refused") {
				t.Errorf("the agent at %s, which the profile names, was not reached: %s", agents[name], r)
			}
		})
	}
}

// eventuallyTrue polls cond every 10 ms until it holds or limit passes.
func eventuallyTrue(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
