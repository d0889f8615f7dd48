package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/yagent/yagent/policy/policytest"
)

// tree makes a folder of the entries named ("dir", "file" or "->target";
// "$T" in a target is the folder) and returns it, symlinks resolved.
func tree(t *testing.T, entries [][2]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(root, e[0])
		switch {
		case e[1] == "dir":
			err = os.MkdirAll(p, 0o755)
		case e[1] == "file":
			err = os.WriteFile(p, nil, 0o644)
		case strings.HasPrefix(e[1], "->"):
			err = os.Symlink(strings.ReplaceAll(e[1][2:], "$T", root), p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolve(t *testing.T) {
	t.Parallel()
	root := tree(t, [][2]string{
		{"ws", "dir"}, {"ws/f", "file"}, {"ws/d", "dir"},
		{"out", "dir"}, {"out/deep", "dir"}, {"out/f", "file"},
		{"ws/in", "->f"},
		{"ws/abs", "->$T/out/f"},
		{"ws/up", "->../out/f"},
		{"ws/todeep", "->$T/out/deep"},
		// ".." after a link is the real parent's: out, not ws.
		{"ws/dotdot", "->todeep/../f"},
		{"ws/dangling", "->$T/out/new"},
		{"ws/a", "->b"}, {"ws/b", "->a"},
		{"ws/notdir", "->f/x"},
	})
	ws := filepath.Join(root, "ws")
	for _, tc := range []struct {
		in, want string
		exists   bool
		err      error
	}{
		{in: "ws/f", want: "ws/f", exists: true},
		{in: "ws/in", want: "ws/f", exists: true},
		{in: "ws/abs", want: "out/f", exists: true},
		{in: "ws/up", want: "out/f", exists: true},
		{in: "ws/dotdot", want: "out/f", exists: true},
		{in: "ws/todeep/../f", want: "out/f", exists: true}, // ".." after the link it follows
		{in: "ws/dangling", want: "out/new"},
		{in: "ws/new/x", want: "ws/new/x"},
		{in: "ws/d", want: "ws/d", exists: true},
		{in: "ws/a", err: ErrLoop},
	} {
		r, err := Resolve(OS, root+"/"+tc.in, nil)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Resolve(%s): err %v, want %v", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || r.Path != filepath.Join(root, tc.want) || r.Exists != tc.exists {
			t.Errorf("Resolve(%s) = %s exists %v, %v; want %s exists %v", tc.in, r.Path, r.Exists, err, tc.want, tc.exists)
		}
	}
	r, err := Resolve(OS, filepath.Join(ws, "notdir"), nil)
	var stop *StopError
	if !errors.As(err, &stop) || r.Path != filepath.Join(ws, "f", "x") {
		t.Errorf("Resolve(notdir) = %s, %v; want the rest joined as named and a StopError", r.Path, err)
	}
	if r, _ := Resolve(OS, filepath.Join(ws, "abs"), nil); len(r.Via) != 1 || r.Via[0] != filepath.Join(ws, "abs") {
		t.Errorf("Resolve(abs).Via = %v; want the link passed", r.Via)
	}
}

// fakeTemp stands for /var/tmp with dir, as a session's temp folder does.
type fakeTemp string

func (d fakeTemp) Map(p string) (string, bool) {
	if rel, ok := Rel("/var/tmp", p); ok {
		return filepath.Join(string(d), rel), true
	}
	return p, false
}

func TestResolveInView(t *testing.T) {
	t.Parallel()
	root := tree(t, [][2]string{
		{"sess", "dir"}, {"sess/f", "file"}, {"sess/abs", "->/var/tmp/f"}, {"sess/up", "->../../etc"},
		{"ws", "dir"}, {"ws/totmp", "->/var/tmp/f"},
	})
	view := fakeTemp(filepath.Join(root, "sess"))
	for in, want := range map[string]string{
		"/var/tmp/abs":                  "/var/tmp/f",
		filepath.Join(root, "ws/totmp"): "/var/tmp/f",
		"/var/tmp/up":                   "/etc", // ".." above /var/tmp is /var, never the folder beside the session's
	} {
		r, err := Resolve(OS, in, view)
		if err != nil || r.Path != want {
			t.Errorf("Resolve(%s) in the session's view = %s, %v; want %s", in, r.Path, err, want)
		}
	}
	r, _ := Resolve(OS, "/var/tmp/abs", view)
	if r.Disk != filepath.Join(root, "sess", "f") || !r.Exists {
		t.Errorf("Resolve(/var/tmp/abs).Disk = %s exists %v; want the session's own f", r.Disk, r.Exists)
	}
}

// overView stands for the folder over with the folder dir, as a session's
// temp folder stands for /tmp.
type overView struct{ over, dir string }

func (v overView) Map(p string) (string, bool) {
	if rel, ok := Rel(v.over, p); ok {
		return filepath.Join(v.dir, rel), true
	}
	return p, false
}

// TestResolveInView_NamedFileOnDiskToo: a path the view maps is read where
// the view puts it, even where a file of the same name lies on disk and no
// symlink is on the way (where one look at the named path would answer).
func TestResolveInView_NamedFileOnDiskToo(t *testing.T) {
	t.Parallel()
	root := tree(t, [][2]string{{"over", "dir"}, {"over/f", "file"}, {"sess", "dir"}, {"sess/f", "file"}})
	if err := os.WriteFile(filepath.Join(root, "sess", "f"), []byte("the session's"), 0o644); err != nil {
		t.Fatal(err)
	}
	view := overView{over: filepath.Join(root, "over"), dir: filepath.Join(root, "sess")}
	for _, in := range []string{filepath.Join(root, "over", "f"), filepath.Join(root, "over")} {
		r, err := Resolve(OS, in, view)
		want, _ := view.Map(in)
		if err != nil || r.Path != in || r.Disk != want || !r.Exists {
			t.Fatalf("Resolve(%s) = %s on disk %s exists %v, %v; want %s on disk %s", in, r.Path, r.Disk, r.Exists, err, in, want)
		}
		if wfi, _ := os.Lstat(want); r.Info == nil || r.Info.Size() != wfi.Size() {
			t.Errorf("Resolve(%s).Info is not the session's file's", in)
		}
	}
	// Beside the mapped folder nothing is mapped: one look answers.
	r, err := Resolve(OS, filepath.Join(root, "sess", "f"), view)
	if err != nil || r.Disk != filepath.Join(root, "sess", "f") || r.Info == nil || r.Info.Size() != int64(len("the session's")) {
		t.Errorf("Resolve(sess/f) = %+v, %v", r, err)
	}
}

// countingFS is OS, counting the component reads of the walk.
type countingFS struct {
	NoLinksFS
	lstats int
}

func (c *countingFS) Lstat(name string) (fs.FileInfo, error) {
	c.lstats++
	return c.NoLinksFS.Lstat(name)
}

// TestResolve_OneLookWithoutLinks: a path with no symlink on it is
// answered by the file system's one look, with no walk; a path with one
// is walked.
func TestResolve_OneLookWithoutLinks(t *testing.T) {
	t.Parallel()
	root := tree(t, [][2]string{{"ws", "dir"}, {"ws/d", "dir"}, {"ws/d/f", "file"}, {"ws/in", "->d"}})
	nl, ok := OS.(NoLinksFS)
	if !ok {
		t.Fatal("OS cannot answer for a path with no symlink on it")
	}
	if _, ok := nl.LstatNoLinks(root); !ok {
		t.Skipf("no one-look answer here (%s is not on a local file system, or no openat2)", root)
	}
	c := &countingFS{NoLinksFS: nl}
	r, err := Resolve(c, filepath.Join(root, "ws", "d", "f"), nil)
	if err != nil || !r.Exists || r.Path != filepath.Join(root, "ws", "d", "f") || c.lstats != 0 {
		t.Errorf("Resolve(ws/d/f) = %s exists %v, %v after %d component reads; want it in one look", r.Path, r.Exists, err, c.lstats)
	}
	c.lstats = 0
	r, err = Resolve(c, filepath.Join(root, "ws", "in", "f"), nil)
	if err != nil || r.Path != filepath.Join(root, "ws", "d", "f") || c.lstats == 0 {
		t.Errorf("Resolve(ws/in/f) = %s, %v after %d component reads; want the link followed by the walk", r.Path, err, c.lstats)
	}
}

func TestPlain(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"a/b": true, "/x": true, "file.txt": true, "file:": true, "files://x": true,
		"file:///etc/passwd": false, "FILE:///etc/passwd": false, "File://x": false, "a\x00b": false,
	} {
		if got := Plain(p) == nil; got != want {
			t.Errorf("Plain(%q) = %v, want plain %v", p, Plain(p), want)
		}
	}
}

func TestAbs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"x", "/ws/x"}, {"~", "/home/u"}, {"~/a", "/home/u/a"}, {"~bob/a", "/ws/~bob/a"},
		{"../ws2/x", "/ws/../ws2/x"}, {"/a/../b", "/a/../b"}, {"a b/c", "/ws/a b/c"},
	} {
		if got, err := Abs("/ws", "/home/u", tc.in); err != nil || got != tc.want {
			t.Errorf("Abs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p  string
		self, in bool
	}{
		{"/w", "/w", true, true}, {"/w", "/w", false, false}, {"/w", "/w/x", false, true},
		{"/w", "/w_evil", true, false}, {"/w", "/", true, false}, {"/", "/x", false, true},
		{"/", "/", false, false}, {"/", "/", true, true}, {"/w/x", "/w", true, false},
		// A root not given (or relative) holds nothing, never every path.
		{"", "/etc/passwd", true, false}, {"", "/", true, false}, {"w", "w/x", true, false},
	} {
		if got := Within(tc.root, tc.p, tc.self); got != tc.in {
			t.Errorf("Within(%q, %q, %v) = %v, want %v", tc.root, tc.p, tc.self, got, tc.in)
		}
	}
	for _, tc := range []struct{ root, p, rel string }{
		{"/w", "/w", "."}, {"/w", "/w/a/b", "a/b"}, {"/", "/a", "a"}, {"/w", "/w2", ""},
	} {
		rel, ok := Rel(tc.root, tc.p)
		if rel != tc.rel || ok != (tc.rel != "") {
			t.Errorf("Rel(%q, %q) = %q, %v; want %q", tc.root, tc.p, rel, ok, tc.rel)
		}
	}
}

func TestSystemPaths(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, sp := range SystemPaths() {
		if !filepath.IsAbs(sp.Path) || filepath.Clean(sp.Path) != sp.Path || seen[sp.Path] {
			t.Errorf("system path %q: not absolute and clean, or listed twice", sp.Path)
		}
		seen[sp.Path] = true
		// What holds another process's or the user's secrets is never
		// named without asking.
		if sp.NoAsk && (Within("/proc", sp.Path, true) || Within("/sys", sp.Path, true) || Within("/etc", sp.Path, true) || Within("/run", sp.Path, true)) {
			t.Errorf("%s may be named without asking", sp.Path)
		}
	}
}

// TestPathCorpus: ResolvePath, what the profile loader, the sandbox's
// rules, the Go loader's confinement and the plugin trust walk resolve
// with, gives the shared corpus's answers, as the guard and the fs plugin
// do (their own TestPathCorpus).
func TestPathCorpus(t *testing.T) {
	t.Parallel()
	root := policytest.Tree(t)
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	n := 0
	for _, c := range policytest.PathCases(t, root) {
		abs, err := Abs(ws, home, c.In)
		if c.WantErr != "" {
			if _, rerr := Resolve(OS, abs, nil); err == nil && rerr == nil {
				t.Errorf("Abs, Resolve(%q) = %s; want it refused (%s)", c.In, abs, c.WantErr)
			}
			continue
		}
		n++
		if got := ResolvePath(abs); err != nil || got != c.Want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", abs, got, err, c.Want)
		}
	}
	if n < 40 {
		t.Errorf("the corpus has %d paths that resolve; want at least 40", n)
	}
}

// TestKernelCorpus: on the tree and the paths the former copies of the
// resolver disagreed on (testdata/disagree, recorded before they became
// Resolve), Resolve's answer is the kernel's: where open(2) finds the
// path, or creates it (dangling links); ELOOP and ENOTDIR where it fails
// so. Paths Plain refuses (file:// URLs, NUL) and "~" forms, which only
// the tools expand, are left out.
func TestKernelCorpus(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("testdata/disagree/resolve_fixture.txt")
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("testdata/disagree/resolve.tsv")
	if err != nil {
		t.Fatal(err)
	}
	root := policytest.Build(t, string(fixture))
	ws := filepath.Join(root, "ws")
	checked := 0
	for line := range strings.Lines(string(table)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		col := strings.Split(strings.TrimRight(line, "\n"), "\t")
		in := strings.ReplaceAll(strings.ReplaceAll(col[0], `\x00`, "\x00"), "$T", root)
		kernel, create := strings.ReplaceAll(col[9], "$T", root), strings.ReplaceAll(col[10], "$T", root)
		if in == `""` || kernel == "-" || Plain(in) != nil {
			continue
		}
		abs, err := Abs(ws, filepath.Join(root, "home"), in)
		if err != nil {
			t.Errorf("Abs(%q): %v", in, err)
			continue
		}
		r, err := Resolve(OS, abs, nil)
		var stop *StopError
		checked++
		switch {
		case kernel == "ERR:ELOOP":
			if !errors.Is(err, ErrLoop) {
				t.Errorf("Resolve(%q) = %s, %v; the kernel says ELOOP", in, r.Path, err)
			}
		case kernel == "ERR:ENOTDIR":
			if !errors.As(err, &stop) || !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("Resolve(%q) = %s, %v; the kernel says ENOTDIR", in, r.Path, err)
			}
		case filepath.IsAbs(kernel):
			if err != nil || r.Path != kernel || !r.Exists {
				t.Errorf("Resolve(%q) = %s exists %v, %v; the kernel opens %s", in, r.Path, r.Exists, err, kernel)
			}
		case kernel == "ERR:ENOENT" && filepath.IsAbs(create):
			if err != nil || r.Path != create || r.Exists {
				t.Errorf("Resolve(%q) = %s exists %v, %v; the kernel creates %s", in, r.Path, r.Exists, err, create)
			}
		case kernel == "ERR:ENOENT":
			if err != nil || r.Exists {
				t.Errorf("Resolve(%q) = %s exists %v, %v; the kernel finds nothing there", in, r.Path, r.Exists, err)
			}
		default:
			checked--
		}
	}
	if checked < 40 {
		t.Errorf("checked %d paths against the kernel; want at least 40", checked)
	}
}
