package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// outsideDir is a folder beside the workspace, with one file in it.
func outsideDir(t *testing.T) (dir, file string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(file, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func assertOutsideUntouched(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Errorf("outside folder holds %v, want only secret.txt", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "secret.txt")); string(b) != "outside\n" {
		t.Errorf("outside file changed: %q", b)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestSymlink_InsideIsWrittenThrough(t *testing.T) {
	t.Parallel()
	for _, absolute := range []bool{false, true} {
		e := newEnv(t)
		target := e.write("real/target.txt", "one\ntwo\n")
		link := filepath.Join(e.ws, "link.txt")
		if absolute {
			symlink(t, target, link)
		} else {
			symlink(t, "real/target.txt", link)
		}
		e.run("search_replace_in_file", map[string]any{"path": "link.txt", "old_string": "two", "new_string": "TWO"})
		e.run("write_file", map[string]any{"path": "link.txt", "content": "one\nTWO\nthree\n"})
		if got := e.read("real/target.txt"); got != "one\nTWO\nthree\n" {
			t.Errorf("absolute=%v: target is %q, want both changes", absolute, got)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("absolute=%v: link.txt is no longer a symlink (%v, %v)", absolute, fi, err)
		}
	}
}

func TestSymlink_DanglingInsideCreatesTarget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	symlink(t, "made/by/write.txt", filepath.Join(e.ws, "link.txt"))
	e.run("write_file", map[string]any{"path": "link.txt", "content": "hi\n"})
	if got := e.read("made/by/write.txt"); got != "hi\n" {
		t.Errorf("target: got %q", got)
	}
}

// TestSymlink_CannotEscape: a symlink to outside, a dangling symlink to
// outside, a parent folder that is a symlink to outside, and a "../" path
// cannot make write_file or an edit change anything outside the workspace.
func TestSymlink_CannotEscape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, ws, outDir, outFile string)
		path  string
	}{
		{"symlink to an outside file", func(t *testing.T, ws, _, outFile string) {
			symlink(t, outFile, filepath.Join(ws, "link.txt"))
		}, "link.txt"},
		{"relative symlink climbing out", func(t *testing.T, ws, outDir, _ string) {
			rel, err := filepath.Rel(ws, filepath.Join(outDir, "secret.txt"))
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, rel, filepath.Join(ws, "link.txt"))
		}, "link.txt"},
		{"dangling symlink to outside", func(t *testing.T, ws, outDir, _ string) {
			symlink(t, filepath.Join(outDir, "new.txt"), filepath.Join(ws, "link.txt"))
		}, "link.txt"},
		{"parent folder is a symlink to outside", func(t *testing.T, ws, outDir, _ string) {
			symlink(t, outDir, filepath.Join(ws, "sub"))
		}, "sub/secret.txt"},
		{"parent folder symlink, new file", func(t *testing.T, ws, outDir, _ string) {
			symlink(t, outDir, filepath.Join(ws, "sub"))
		}, "sub/new.txt"},
		{"dot-dot path", func(*testing.T, string, string, string) {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			outDir, outFile := outsideDir(t)
			tt.setup(t, e.ws, outDir, outFile)
			path := tt.path
			if path == "" { // climb out with ../
				rel, err := filepath.Rel(e.ws, outFile)
				if err != nil {
					t.Fatal(err)
				}
				path = rel
			}
			for _, call := range []struct {
				tool  string
				input map[string]any
			}{
				{"write_file", map[string]any{"path": path, "content": "pwned\n"}},
				{"search_replace_in_file", map[string]any{"path": path, "old_string": "outside", "new_string": "pwned"}},
				{"multi_edit", map[string]any{"path": path, "edits": []map[string]any{{"old_string": "outside", "new_string": "pwned"}}}},
			} {
				_, err := e.call(e.ctx("s1"), call.tool, call.input)
				t.Logf("%s(%s): %v", call.tool, path, err)
				if err == nil {
					t.Errorf("%s(%s) succeeded", call.tool, path)
				} else if te, ok := sdk.AsToolError(err); !ok || (te.Code != sdk.CodeNeedsAuth && te.Code != sdk.CodeNotFound) {
					t.Errorf("%s(%s): got %v, want needs_auth or not_found", call.tool, path, err)
				}
			}
			assertOutsideUntouched(t, outDir)
		})
	}
}

// TestSymlink_ParentSwappedMidWrite swaps the file's folder for a symlink
// to outside between the edit's read and its rename: os.Root refuses the
// rename, and nothing lands outside. Serial: it sets the hook.
func TestSymlink_ParentSwappedMidWrite(t *testing.T) {
	for _, tool := range []string{"write_file", "search_replace_in_file"} {
		e := newEnv(t)
		outDir, _ := outsideDir(t)
		e.write("sub/f.txt", "outside\n")
		sub := filepath.Join(e.ws, "sub")
		setHook(t, func(_ context.Context, abs string) {
			if abs != filepath.Join(sub, "f.txt") {
				return
			}
			if err := os.Rename(sub, sub+".moved"); err != nil {
				t.Error(err)
			}
			symlink(t, outDir, sub)
		})
		input := map[string]any{"path": "sub/f.txt", "content": "pwned\n"}
		if tool != "write_file" {
			input = map[string]any{"path": "sub/f.txt", "old_string": "outside", "new_string": "pwned"}
		}
		if _, err := e.call(e.ctx("s1"), tool, input); err == nil {
			t.Errorf("%s: succeeded through a swapped parent", tool)
		}
		assertOutsideUntouched(t, outDir)
		if got := e.read("sub.moved/f.txt"); got != "outside\n" {
			t.Errorf("%s: original file changed: %q", tool, got)
		}
		if tmp := tempFiles(t, filepath.Join(e.ws, "sub.moved")); len(tmp) > 0 {
			t.Errorf("%s: temp files left behind: %v", tool, tmp)
		}
	}
}

func TestPaths_OutsideNeedsApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outDir, outFile := outsideDir(t)
	te := e.fail("read_file", map[string]any{"path": outFile}, sdk.CodeNeedsAuth)
	mustContain(t, "error", te.Message, "outside the workspace", "not approved")

	// Approved for the call: read and edit work, through a root on its folder.
	ctx := e.ctx("s1", outFile)
	if res, err := e.call(ctx, "read_file", map[string]any{"path": outFile}); err != nil || res.Text != "outside\n" {
		t.Fatalf("approved read: %v, %v", res, err)
	}
	if _, err := e.call(ctx, "search_replace_in_file", map[string]any{"path": outFile, "old_string": "outside", "new_string": "edited"}); err != nil {
		t.Fatalf("approved edit: %v", err)
	}
	if b, _ := os.ReadFile(outFile); string(b) != "edited\n" {
		t.Errorf("approved edit: file is %q", b)
	}
	// The approval covers that file, not its neighbours.
	if _, err := e.call(ctx, "write_file", map[string]any{"path": filepath.Join(outDir, "other.txt"), "content": "x"}); err == nil {
		t.Errorf("write beside an approved file succeeded")
	}
}
