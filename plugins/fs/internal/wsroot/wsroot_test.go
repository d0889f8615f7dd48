package wsroot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	out, _ := filepath.EvalSymlinks(t.TempDir())
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, "a/b"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "a/b/f"), nil, 0o644))
	must(os.Symlink("a/b", filepath.Join(ws, "rel")))
	must(os.Symlink(filepath.Join(ws, "a"), filepath.Join(ws, "abs")))
	must(os.Symlink(out, filepath.Join(ws, "escape")))
	must(os.Symlink("loop", filepath.Join(ws, "loop")))
	must(os.WriteFile(filepath.Join(out, "ok"), nil, 0o644))

	r, err := New(ws, []string{filepath.Join(out, "ok")})
	must(err)
	t.Cleanup(func() { r.Close() })
	tests := []struct {
		path     string
		rel      string
		exists   bool
		external bool
		code     string
	}{
		{path: "a/b/f", rel: "a/b/f", exists: true},
		{path: filepath.Join(ws, "a/b/f"), rel: "a/b/f", exists: true},
		{path: ".", rel: ".", exists: true},
		{path: "rel/f", rel: "a/b/f", exists: true},
		{path: "abs/b/f", rel: "a/b/f", exists: true},
		{path: "a/new/deeper", rel: "a/new/deeper"},
		{path: "a/../a/b/f", rel: "a/b/f", exists: true},
		{path: filepath.Join(out, "ok"), rel: "ok", exists: true, external: true},
		{path: "escape/ok", rel: "ok", exists: true, external: true},
		{path: "escape/other", code: sdk.CodeNeedsAuth},
		{path: "../x", code: sdk.CodeNeedsAuth},
		{path: "loop", code: sdk.CodeInvalidInput},
		{path: "", code: sdk.CodeInvalidInput},
		{path: "a\x00b", code: sdk.CodeInvalidInput},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.path)
		if tt.code != "" {
			if te, ok := sdk.AsToolError(err); !ok || te.Code != tt.code {
				t.Errorf("Resolve(%q): got %+v, %v; want %s", tt.path, got, err, tt.code)
			}
			continue
		}
		if err != nil || got.Rel != tt.rel || got.Exists != tt.exists || got.External != tt.external {
			t.Errorf("Resolve(%q): got rel %q exists %v external %v, %v; want %q %v %v",
				tt.path, got.Rel, got.Exists, got.External, err, tt.rel, tt.exists, tt.external)
		}
	}
}

// TestRoots_KeptWhileTheFolderStays: the calls of one workspace share one
// open root while its name still means the same folder.
func TestRoots_KeptWhileTheFolderStays(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	var s Roots
	r1, err := s.New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	r1.Close()
	r2, err := s.New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if _, a := r1.Workspace(); a != r2.workspaceR {
		t.Error("the second call opened the workspace again")
	}
	if _, err := r2.workspaceR.Stat("."); err != nil {
		t.Errorf("the kept root was closed by the first call's end: %v", err)
	}
}

// TestRoots_FolderReplaced: a workspace renamed away and made anew, or
// swapped for a symlink, is the folder its name means now for the next
// call, never the one a kept root still holds.
func TestRoots_FolderReplaced(t *testing.T) {
	t.Parallel()
	for _, swap := range []string{"folder", "symlink"} {
		t.Run(swap, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			ws := filepath.Join(parent, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "old"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var s Roots
			during, err := s.New(ws, nil) // a call in flight across the swap
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(ws, filepath.Join(parent, "ws.old")); err != nil {
				t.Fatal(err)
			}
			now := ws
			if swap == "symlink" {
				now = t.TempDir()
				if err := os.Symlink(now, ws); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(now, "new"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			after, err := s.New(ws, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer after.Close()
			for name, want := range map[string]bool{"new": true, "old": false} {
				if tg, err := after.Resolve(name); err != nil || tg.Exists != want {
					t.Errorf("after the swap, %s: exists=%v (%v); want %v", name, tg.Exists, err, want)
				}
			}
			// The call in flight keeps the folder it began on until it ends.
			if _, err := during.workspaceR.Stat("old"); err != nil {
				t.Errorf("the call in flight lost its root: %v", err)
			}
			old := during.workspaceR
			during.Close()
			if _, err := old.Stat("."); err == nil {
				t.Error("the replaced root is still open after its last call ended")
			}
		})
	}
}

// TestResolve_SessionTemp: the session's temp folder is a root of the
// call; a symlink met on the way is followed as the session's commands see
// it, so an absolute target under a temp folder it stands for stays in it,
// and ".." from its top climbs the temp folder's parent, never into
// another session's folder beside it.
func TestResolve_SessionTemp(t *testing.T) {
	t.Parallel()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mine, theirs := filepath.Join(root, "s.1.2.aa"), filepath.Join(root, "s.1.2.bb")
	for _, d := range []string{mine, theirs} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(mine, "f"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(theirs, "f"), []byte("theirs"), 0o644)
	os.Symlink("/var/tmp/f", filepath.Join(mine, "abs"))
	os.Symlink("../s.1.2.bb/f", filepath.Join(mine, "up"))
	// From the top of the folder, ".." is /var, so this is /var/tmp/f:
	// the session's own f, not a "tmp" folder beside the session folder.
	os.Symlink("../tmp/f", filepath.Join(mine, "round"))
	os.Mkdir(filepath.Join(root, "tmp"), 0o700)
	os.WriteFile(filepath.Join(root, "tmp", "f"), []byte("beside"), 0o644)
	os.Symlink("/var/tmp/f", filepath.Join(ws, "totmp"))
	r, err := New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.SetTemp(&sdk.TempFolder{Dir: mine, Over: []string{"/var/tmp"}})
	for _, p := range []string{filepath.Join(mine, "f"), filepath.Join(mine, "abs"), filepath.Join(ws, "totmp"), filepath.Join(mine, "round")} {
		got, err := r.Resolve(p)
		if err != nil || got.Abs != filepath.Join(mine, "f") || !got.Exists {
			t.Errorf("Resolve(%s) = %+v, %v; want the session's own f", p, got, err)
		}
	}
	if got, err := r.Resolve(filepath.Join(mine, "up")); err == nil {
		t.Errorf("Resolve(up) = %s: '..' from the top of the session's folder reached %s", got.Abs, theirs)
	}
	if got, err := r.Resolve(filepath.Join(theirs, "f")); err == nil {
		t.Errorf("another session's folder resolved: %s", got.Abs)
	}
	// Nothing bound: the folder is still a root (TMPDIR), /var/tmp is the
	// machine's.
	r2, _ := New(ws, nil)
	t.Cleanup(func() { r2.Close() })
	r2.SetTemp(&sdk.TempFolder{Dir: mine})
	if got, err := r2.Resolve(filepath.Join(mine, "f")); err != nil || !got.Exists {
		t.Errorf("the folder by its own name with nothing bound: %+v, %v", got, err)
	}
	if _, err := r2.Resolve(filepath.Join(ws, "totmp")); err == nil {
		t.Error("with nothing bound, a link to /var/tmp/f reached the session's folder or the machine's /var/tmp")
	}
}
