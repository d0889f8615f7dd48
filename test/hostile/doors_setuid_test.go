package hostile

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// setIDFiles returns the files and folders under roots whose mode has the
// setuid or setgid bit, but for those named in keep.
func setIDFiles(roots []string, keep ...string) []string {
	var found []string
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			var st unix.Stat_t
			if unix.Lstat(p, &st) == nil && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
				for _, k := range keep {
					if p == k {
						return nil
					}
				}
				found = append(found, p+" ("+strconv.FormatUint(uint64(st.Mode&0o7777), 8)+")")
			}
			return nil
		})
	}
	return found
}

// saysSetID reports whether a result tells the model that the sandbox
// refused a setuid or setgid mode and that a plain mode works.
func saysSetID(r result) bool {
	low := strings.ToLower(sbText(r))
	return strings.Contains(low, "sandbox") && strings.Contains(low, "setuid") && strings.Contains(low, "755")
}

// setIDTar returns a tar archive holding a setuid program and a setgid
// folder, as an attacker's download would.
func setIDTar(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	body := []byte("#!/bin/sh\nid\n")
	for _, h := range []*tar.Header{
		{Name: "shared/", Typeflag: tar.TypeDir, Mode: 0o2775},
		{Name: "shared/root-shell", Typeflag: tar.TypeReg, Mode: 0o4755, Size: int64(len(body))},
	} {
		h.ModTime = time.Unix(1e9, 0)
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			w.Write(body)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDoorsSetuid: under -y, no command under the sandbox leaves a file
// with the setuid or setgid bit, in the workspace, in $TMPDIR or in /tmp,
// however it asks for the mode; where the sandbox refused the mode, the
// result says so and that a plain mode works. A setuid copy of a program
// any user can run would outlive the sandbox and its user.
func TestDoorsSetuid(t *testing.T) {
	t.Parallel()
	suid, noSuid := "/usr/bin/passwd", ""
	if fi, err := os.Stat(suid); err != nil || fi.Mode()&os.ModeSetuid == 0 {
		noSuid = "no setuid " + suid + " here to copy"
	}
	mark := make([]byte, 8)
	_, _ = rand.Read(mark)
	inTmp := "/tmp/yagent-setuid-" + hex.EncodeToString(mark)
	t.Cleanup(func() { os.Remove(inTmp) })
	cases := []struct {
		name  string
		need  []string
		files map[string]string // in the case's folder
		// setID are files of the case's folder the test makes setuid
		// before the command runs.
		setID []string
		cmd   string // run in the case's folder; $T is a folder of its own in $TMPDIR
		// says: the result must say the sandbox refused a set-id mode; false
		// where nothing is refused (the kernel drops the bit) or the refusal
		// is not of a mode (io_uring).
		says  bool
		wants []string
		tmp   string // a path outside the case's folders the command may make
		skip  string // why the case cannot run here
		caps  bool   // x must be left without file capabilities
	}{
		{name: "the reported attack: cp id to /tmp, chmod 4755", cmd: "cp /usr/bin/id " + inTmp + " && chmod 4755 " + inTmp, says: true, tmp: inTmp},
		{name: "chmod 4755 in the workspace", cmd: "cp /usr/bin/id x && chmod 4755 x", says: true},
		{name: "chmod 6755 in TMPDIR", cmd: `cp /usr/bin/id "$T/x" && chmod 6755 "$T/x"`, says: true},
		{name: "chmod u+s", cmd: "cp /usr/bin/id x && chmod u+s x", says: true},
		{name: "chmod g+s", cmd: "cp /usr/bin/id x && chmod g+s x", says: true},
		{name: "chmod g+s on a folder", cmd: "mkdir d && chmod g+s d", says: true},
		{name: "install -m 4755", need: []string{"install"}, cmd: `install -m 4755 /usr/bin/id "$T/x"`, says: true},
		{name: "mkdir -m 2775", cmd: "mkdir -m 2775 d", says: true},
		{name: "python3 os.chmod", need: []string{"python3"}, cmd: `cp /usr/bin/id x && python3 -c "import os; os.chmod('x', 0o4755)"`, says: true},
		{name: "python3 os.open with O_CREAT and 04755", need: []string{"python3"},
			cmd: `python3 -c "import os; os.close(os.open('x', os.O_CREAT | os.O_WRONLY, 0o4755))"`, says: true},
		{name: "python3 O_TMPFILE with 02755", need: []string{"python3"},
			cmd: `python3 -c "import os; os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o2755)"`, says: true},
		{name: "python3 os.mkdir with 02775", need: []string{"python3"}, cmd: `python3 -c "import os; os.mkdir('d', 0o2775)"`, says: true},
		{name: "cp -p of a setuid program", cmd: `cp -p ` + suid + ` "$T/x"`, says: true, skip: noSuid},
		{name: "cp -a of a setuid file in the workspace", files: map[string]string{"src": "#!/bin/sh\nid\n"}, setID: []string{"src"},
			cmd: `cp -a src "$T/x"`, says: true},
		{name: "tar -xpf of a setuid member", need: []string{"tar"}, files: map[string]string{"a.tar": ""},
			cmd: `tar -xpf a.tar -C "$T"`, says: true},
		// The bit on a file already there goes when its content changes:
		// the command keeps no CAP_FSETID.
		{name: "new content written into a setuid file", files: map[string]string{"x": "#!/bin/sh\ntrue\n"}, setID: []string{"x"},
			cmd: "cat /usr/bin/id > x"},
		{name: "io_uring openat with mode 4755", need: []string{"python3"}, files: map[string]string{"u.py": ""},
			cmd: `python3 u.py "$T/x" 4755`, wants: []string{"io_uring_setup failed: Function not implemented", "io_uring is off"}},
		// Capabilities of a file are as good as its setuid bit: setting
		// them needs CAP_SETFCAP, which commands do not keep, and which a
		// user namespace does not give for the real root.
		{name: "setcap", need: []string{"setcap"}, cmd: "cp /usr/bin/id x && setcap cap_setuid+ep x", caps: true},
		{name: "setcap in a user namespace", need: []string{"setcap", "unshare"}, cmd: "cp /usr/bin/id x && unshare -Ur setcap cap_setuid+ep x", caps: true},
	}
	uring, err := os.ReadFile(filepath.Join(repoRoot, "test", "hostile", "testdata", "uring_openat.py"))
	if err != nil {
		t.Fatal(err)
	}
	archive := setIDTar(t)
	e := newEnv(t)
	c := e.serve("-y")
	for i, tc := range cases {
		dir := "c" + strconv.Itoa(i)
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			files := map[string]string{}
			for name, content := range tc.files {
				switch name {
				case "a.tar":
					content = archive
				case "u.py":
					content = string(uring)
				}
				files[name] = content
			}
			sbWriteFiles(t, e, dir, files)
			var keep []string
			for _, name := range tc.setID {
				p := e.ws(filepath.Join(dir, name))
				if err := unix.Chmod(p, 0o4755); err != nil {
					t.Fatal(err)
				}
				if !tc.says {
					continue // the bit must go
				}
				keep = append(keep, p)
			}
			tmp := filepath.Join(e.tmp, dir)
			r := sbRun(t, c, `T="$TMPDIR/`+dir+`" && mkdir -p "$T" && cd `+dir+` && `+tc.cmd, 0)
			roots := []string{e.ws(dir), tmp}
			if tc.tmp != "" {
				roots = append(roots, tc.tmp)
			}
			// Where the command's /tmp and $TMPDIR are its session's own
			// folder, what it made there is in that folder.
			for _, f := range sessionFolders(e) {
				roots = append(roots, filepath.Join(f, dir))
				if rest, ok := strings.CutPrefix(tc.tmp, "/tmp/"); ok {
					roots = append(roots, filepath.Join(f, rest))
				}
			}
			if found := setIDFiles(roots, keep...); len(found) > 0 {
				t.Errorf("the command left set-id files %q: %s", found, r)
			}
			if tc.says && !saysSetID(r) {
				t.Errorf("the result does not say the sandbox refused a setuid or setgid mode: %s", r)
			}
			for _, w := range tc.wants {
				if !strings.Contains(sbText(r), w) {
					t.Errorf("the result lacks %q: %s", w, r)
				}
			}
			if tc.caps {
				if _, err := unix.Getxattr(e.ws(filepath.Join(dir, "x")), "security.capability", make([]byte, 64)); err != unix.ENODATA {
					t.Errorf("the copy has file capabilities (getxattr: %v): %s", err, r)
				}
			}
		})
	}
	// The rule holds beside the exec rules, on the listener they share, and
	// under a terminal.
	t.Run("beside an exec deny rule", func(t *testing.T) {
		t.Parallel()
		sbNeed(t, "python3")
		e := newEnv(t)
		marker := e.secret("unused")
		e.extraEnv = []string{"X=" + marker}
		execConfig(e, "{action: deny, program: printenv}")
		c := e.serve("-y")
		r := sbRun(t, c, `cp /usr/bin/id x && chmod 4755 x; python3 -c "import os; os.system('printenv X')"`, 0)
		if found := setIDFiles([]string{e.workspace}); len(found) > 0 {
			t.Errorf("the command left set-id files %q: %s", found, r)
		}
		if !saysSetID(r) {
			t.Errorf("the result does not say the sandbox refused a setuid or setgid mode: %s", r)
		}
		sbRefusedExec(t, r, sbText(r), marker)
	})
	t.Run("under a terminal", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c := e.serve("-y")
		r := c.call(t, "run_bash", map[string]any{"command": "cp /usr/bin/id x && chmod u+s x; echo done", "mode": "pty", "timeout_ms": 30000})
		if found := setIDFiles([]string{e.workspace}); len(found) > 0 {
			t.Errorf("the command left set-id files %q: %s", found, r)
		}
		if !saysSetID(r) {
			t.Errorf("the result does not say the sandbox refused a setuid or setgid mode: %s", r)
		}
	})
}

// TestDoorsSetuidBenign: the modes everyday work sets still work under the
// sandbox, without a word about set-id modes.
func TestDoorsSetuidBenign(t *testing.T) {
	t.Parallel()
	type step struct {
		cmd   string
		wants []string
		slow  bool
	}
	cases := []struct {
		name  string
		need  []string
		env   func() []string
		files map[string]string
		steps []step
	}{
		{name: "chmod +x", steps: []step{{cmd: `printf '#!/bin/sh\necho ran\n' > s && chmod +x s && ./s && stat -c %a s`, wants: []string{"ran", "755"}}}},
		{name: "chmod 755", steps: []step{{cmd: "touch f && chmod 755 f && stat -c %a f", wants: []string{"755"}}}},
		{name: "chmod -R u+rwX", steps: []step{{cmd: "mkdir -p a/b && touch a/b/f && chmod 500 a/b && chmod -R u+rwX a && stat -c '%a %n' a/b a/b/f", wants: []string{"700 a/b", "644 a/b/f"}}}},
		{name: "chmod +t on a folder", steps: []step{{cmd: "mkdir d && chmod 1777 d && stat -c %a d", wants: []string{"1777"}}}},
		{name: "mkdir -p and mkdir -m 755", steps: []step{{cmd: "mkdir -p x/y/z && mkdir -m 755 m && stat -c %a x/y/z m", wants: []string{"755\n755"}}}},
		{name: "cp -p of a plain file", steps: []step{{cmd: "touch -d 2001-02-03 f && chmod 640 f && cp -p f g && stat -c '%a %y' g", wants: []string{"640 2001-02-03"}}}},
		{name: "install -m 755", need: []string{"install"}, steps: []step{{cmd: "install -m 755 /usr/bin/id myid && ./myid -u >/dev/null && stat -c %a myid", wants: []string{"755"}}}},
		{name: "python3 os.chmod and os.open with plain modes", need: []string{"python3"},
			steps: []step{{cmd: `python3 -c "import os; os.close(os.open('f', os.O_CREAT | os.O_WRONLY, 0o640)); os.chmod('f', 0o750); print(oct(os.stat('f').st_mode & 0o7777))"`, wants: []string{"0o750"}}}},
		{name: "tar -xpf of plain members", need: []string{"tar"},
			steps: []step{{cmd: "mkdir -p src/d && echo hi > src/d/f && chmod 750 src/d/f && tar -cf a.tar -C src d && mkdir out && tar -xpf a.tar -C out && stat -c %a out/d/f", wants: []string{"750"}}}},
		{name: "git init, add, commit", need: []string{"git"}, files: map[string]string{"a.txt": "first file\n"},
			steps: []step{{cmd: "git init -q && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -qm 'first commit' && git log --oneline", wants: []string{"first commit"}}}},
		{name: "go build", need: []string{"go"}, env: goCaches,
			files: map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the build\") }\n"},
			steps: []step{{cmd: "go mod init example.com/hello && go build -o hello . && ./hello && stat -c %a hello", wants: []string{"hello from the build", "755"}, slow: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			e := newEnv(t)
			if tc.env != nil {
				e.extraEnv = append(e.extraEnv, tc.env()...)
			}
			sbWriteFiles(t, e, ".", tc.files)
			c := e.serve()
			for _, s := range tc.steps {
				var r result
				if s.slow {
					r = sbCallLong(t, c, s.cmd, 300*time.Second)
				} else {
					r = sbRun(t, c, s.cmd, 0)
				}
				allowed(t, r, s.wants...)
				if strings.Contains(r.Text, "(exit code") || strings.Contains(strings.ToLower(r.Text), "setuid") {
					t.Errorf("%q failed or was refused: %s", s.cmd, r)
				}
			}
		})
	}
}

// goCaches names the machine's Go build and module caches, so the build
// case compiles only its own package.
func goCaches() []string {
	var out []string
	for _, v := range []string{"GOCACHE", "GOMODCACHE"} {
		if b, err := exec.Command("go", "env", v).Output(); err == nil && len(bytes.TrimSpace(b)) > 0 {
			out = append(out, v+"="+string(bytes.TrimSpace(b)))
		}
	}
	return out
}
