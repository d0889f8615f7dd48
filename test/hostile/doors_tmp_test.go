package hostile

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk/sandbox"
)

// Each session's commands get a /tmp, /var/tmp and /dev/shm of their own
// (the session's temp folder, bound over them in their mount namespace),
// and the file tools map those paths onto it. What the host, another user
// or another session keeps in the machine's temp folders (files, unix
// socket servers) is out of a command's reach, whatever it names and
// however; and a /tmp path given to a file tool never reaches the
// machine's /tmp.

// tmpNeed skips t where the private temp folder cannot be: the sandbox's
// mount namespace and Landlock are missing here.
func tmpNeed(t *testing.T) {
	t.Helper()
	l := sandbox.Probe()
	if !l.MountNS || l.LandlockABI == 0 {
		t.Skipf("no private temp folder here: mount namespace %v, Landlock ABI %d", l.MountNS, l.LandlockABI)
	}
	sbNeed(t, "python3", "base64")
}

// tmpMark is a fresh marker.
func tmpMark(what string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return what + "-" + hex.EncodeToString(b)
}

// hostTmp is what the host keeps in one of the machine's temp folders: a
// file and a unix socket server, each answering with its own marker.
type hostTmp struct {
	dir                  string
	file, sock           string // names in dir
	fileMark, socketMark string
}

func newHostTmp(t *testing.T, dir string) hostTmp {
	t.Helper()
	h := hostTmp{dir: dir, file: tmpMark("yagent-host-file"), sock: tmpMark("yagent-host-sock"),
		fileMark: tmpMark("HOST-FILE"), socketMark: tmpMark("HOST-SOCKET")}
	p := filepath.Join(dir, h.file)
	if err := os.WriteFile(p, []byte(h.fileMark+"\n"), 0o644); err != nil {
		t.Skipf("cannot write into %s: %v", dir, err)
	}
	t.Cleanup(func() { os.Remove(p) })
	sp := filepath.Join(dir, h.sock)
	l, err := net.Listen("unix", sp)
	if err != nil {
		t.Skipf("cannot listen in %s: %v", dir, err)
	}
	_ = os.Chmod(sp, 0o777)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(h.socketMark + "\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); os.Remove(sp) })
	return h
}

// attempts are commands that try to reach h's file and socket, the paths
// hidden from the guard (built at run time), by reading, listing, linking
// and connecting.
func (h hostTmp) attempts() []string {
	f, s := sbHide(filepath.Join(h.dir, h.file)), sbHide(filepath.Join(h.dir, h.sock))
	connect := `python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1]); print(s.recv(200).decode())' `
	return []string{
		"cat " + f,
		"ls -la " + sbHide(h.dir) + " | grep yagent-host",
		"find " + sbHide(h.dir) + " -maxdepth 1 -name 'yagent-host-*' -exec cat {} +",
		"ln -sf " + f + " link && cat link",
		"cp " + f + " copy && cat copy",
		connect + s,
		"cd " + sbHide(h.dir) + " && " + connect + h.sock,
		`python3 -c 'import os,sys; print(open(os.path.join(sys.argv[1], sys.argv[2])).read())' ` + sbHide(h.dir) + " " + h.file,
	}
}

// newEnvAt is newEnv with its root under base instead of the suite's
// folder in /var/tmp: for the cases where /var/tmp itself must be free of
// the workspace and the home folder.
func newEnvAt(t *testing.T, base string) *env {
	t.Helper()
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Skipf("no folder outside the temp folders: %v", err)
	}
	root, err := os.MkdirTemp(base, "yagent-hostile-tmp-")
	if err != nil {
		t.Skipf("no folder outside the temp folders: %v", err)
	}
	root, _ = filepath.EvalSymlinks(root)
	for _, o := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if strings.HasPrefix(root, o+"/") {
			os.RemoveAll(root)
			t.Skipf("%s is under %s", root, o)
		}
	}
	e := &env{t: t, root: root, home: filepath.Join(root, "home"), workspace: filepath.Join(root, "ws"),
		outside: filepath.Join(root, "outside"), managed: filepath.Join(root, "managed"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{e.home, e.workspace, e.outside, e.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	return e
}

// sessionFolders are the session temp folders of env e's hosts.
func sessionFolders(e *env) []string {
	dirs, _ := filepath.Glob(filepath.Join(e.tmp, "yagent-tmp-*", "s.*"))
	var out []string
	for _, d := range dirs {
		if !strings.HasSuffix(d, ".hold") {
			out = append(out, d)
		}
	}
	return out
}

// TestDoorsTmp: a command cannot reach what the host keeps in the
// machine's /tmp, /dev/shm or /var/tmp (a file, a unix socket server),
// under -y too, by any of the ways it might try; a /tmp path a file tool
// is given (read_file, write_file, list_dir, grep, a symlink a command
// made) never reaches the machine's /tmp; and one session's commands
// cannot reach another session's folder by its own path.
func TestDoorsTmp(t *testing.T) {
	t.Parallel()
	tmpNeed(t)
	for _, where := range []struct{ dir, base string }{
		{"/tmp", ""},
		{"/dev/shm", ""},
		{"/var/tmp", "cache"}, // the suite's envs live under /var/tmp: this one elsewhere
	} {
		t.Run("a command and "+where.dir, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if where.base != "" {
				base, err := os.UserCacheDir()
				if err != nil {
					t.Skipf("no folder outside the temp folders: %v", err)
				}
				e = newEnvAt(t, base)
			}
			h := newHostTmp(t, where.dir)
			c := e.serve("-y")
			for _, cmd := range h.attempts() {
				r := sbRun(t, c, cmd, 0)
				leaked(t, r, h.fileMark, h.socketMark)
			}
			sbNoCopy(t, e.workspace, h.fileMark, h.socketMark)
		})
	}

	t.Run("file tools and the machine's /tmp", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		h := newHostTmp(t, "/tmp")
		c := e.serve("-y")
		leaked(t, c.call(t, "read_file", map[string]any{"path": "/tmp/" + h.file}), h.fileMark)
		for _, r := range []result{
			c.call(t, "list_dir", map[string]any{"path": "/tmp"}),
			c.call(t, "grep", map[string]any{"pattern": "HOST-FILE", "path": "/tmp"}),
			c.call(t, "search_files", map[string]any{"pattern": "yagent-host-*", "path": "/tmp"}),
		} {
			leaked(t, r, h.fileMark, h.file)
		}
		// A link a command makes in its /tmp to the machine's file by its
		// /tmp name, read by a file tool: followed in the session's view.
		allowed(t, sbRun(t, c, "ln -s /tmp/"+h.file+" /tmp/lnk && ln -s /tmp /tmp/dir && echo linked", 0), "linked")
		for _, p := range []string{"/tmp/lnk", "/tmp/dir/" + h.file, "/tmp/dir/dir/lnk"} {
			leaked(t, c.call(t, "read_file", map[string]any{"path": p}), h.fileMark)
		}
		name := tmpMark("yagent-written")
		t.Cleanup(func() { os.Remove("/tmp/" + name) })
		allowed(t, c.call(t, "write_file", map[string]any{"path": "/tmp/" + name, "content": "mine\n"}))
		if _, err := os.Stat("/tmp/" + name); err == nil {
			t.Errorf("write_file /tmp/%s wrote the machine's /tmp", name)
		}
	})

	t.Run("another session's folder by its own path", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		mark := tmpMark("SESSION-A")
		a := e.serve("-y")
		allowed(t, sbRun(t, a, "echo "+mark+" > /tmp/a-file && echo ok", 0), "ok")
		var theirs string
		for _, d := range sessionFolders(e) {
			if _, err := os.Stat(filepath.Join(d, "a-file")); err == nil {
				theirs = filepath.Join(d, "a-file")
			}
		}
		if theirs == "" {
			t.Fatalf("session A's file is in no session folder under %s", e.tmp)
		}
		b := e.serve("-y")
		for _, cmd := range []string{"cat " + sbHide(theirs), "ls " + sbHide(filepath.Dir(theirs)), "cat " + sbHide(filepath.Join(filepath.Dir(filepath.Dir(theirs)), "*", "a-file"))} {
			leaked(t, sbRun(t, b, cmd, 0), mark)
		}
		leaked(t, b.call(t, "read_file", map[string]any{"path": "/tmp/a-file"}), mark)
		// -y approves the guard's ask; the file tool gets the path, but
		// the session's /tmp is its own.
		leaked(t, sbRun(t, b, "cat /tmp/a-file", 0), mark)
	})
}

// TestBenignTmp: everyday work with the session's own /tmp: a build that
// writes its work files in TMPDIR, a yielded task and the next command
// sharing temp files, and the file tools reading and writing what the
// commands see at /tmp.
func TestBenignTmp(t *testing.T) {
	t.Parallel()
	tmpNeed(t)
	t.Run("go build of a small module", func(t *testing.T) {
		t.Parallel()
		sbNeed(t, "go")
		e := newEnv(t)
		sbGoMain(e, "", `"built with a private tmp"`)
		c := e.serve()
		// go build -work keeps its work folder, in TMPDIR, and says where.
		r := sbCallLong(t, c, `echo "TMPDIR=$TMPDIR" && go mod init example.com/tmpbuild && go build -work -o app . 2> work.txt; cat work.txt && ./app`, 300*time.Second)
		allowed(t, r, "TMPDIR=/tmp", "WORK=/tmp/go-build", "built with a private tmp")
	})
	t.Run("npm ci of a package with a dependency", func(t *testing.T) {
		t.Parallel()
		sbNeed(t, "npm")
		e := newEnv(t)
		sbWriteFiles(t, e, "", map[string]string{
			"dep/package.json": `{"name": "dep", "version": "1.0.0", "main": "index.js"}`,
			"dep/index.js":     `module.exports = "installed with a private tmp";`,
			"app/package.json": `{"name": "app", "version": "1.0.0", "dependencies": {"dep": "file:../dep-1.0.0.tgz"}}`,
			"app/main.js":      `console.log(require("dep"));`,
		})
		c := e.serve()
		// Offline: the dependency is a tarball of the workspace; the lock
		// file npm install writes is what npm ci installs from.
		r := sbCallLong(t, c, `export npm_config_cache="$TMPDIR/npm-cache" && (cd dep && npm pack --silent) && mv dep/dep-1.0.0.tgz . && cd app && `+
			`npm install --offline --no-audit --no-fund --silent && rm -rf node_modules && npm ci --offline --no-audit --no-fund && node main.js && echo "cache in $npm_config_cache"`, 300*time.Second)
		allowed(t, r, "installed with a private tmp", "cache in /tmp/npm-cache")
	})
	t.Run("a yielded task and the next command", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c := e.serve()
		r := c.call(t, "run_bash", map[string]any{"command": "echo $$ > task.pid; sleep 0.3; echo from the task > /tmp/shared; exec sleep 303", "yield_time_ms": 1000})
		if sbTaskID(r) == "" {
			t.Fatalf("want a yielded task: %s", r)
		}
		if pid, ok := sbPid(e.ws("task.pid"), 5*time.Second); ok {
			t.Cleanup(func() { sbKill(pid, "sleep 303") })
		}
		allowed(t, sbRun(t, c, "cat /tmp/shared", 0), "from the task")
		allowed(t, c.call(t, "read_file", map[string]any{"path": "/tmp/shared"}), "from the task")
	})
	t.Run("file tools and commands share /tmp", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c := e.serve()
		allowed(t, sbRun(t, c, "mkdir -p /tmp/d && echo written by a command > /tmp/d/a && echo ok", 0), "ok")
		allowed(t, c.call(t, "read_file", map[string]any{"path": "/tmp/d/a"}), "written by a command")
		allowed(t, c.call(t, "write_file", map[string]any{"path": "/tmp/d/b", "content": "written by write_file\n"}), "/tmp/d/b")
		allowed(t, sbRun(t, c, "cat /tmp/d/b $TMPDIR/d/b", 0), "written by write_file")
		allowed(t, c.call(t, "list_dir", map[string]any{"path": "/tmp/d"}), "a", "b")
		allowed(t, c.call(t, "grep", map[string]any{"pattern": "written by", "path": "/tmp/d"}), "/tmp/d/a", "/tmp/d/b")
	})
}
