package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// TestEdit_ConcurrentEditsAllLand: 16 callers of one session edit 16
// different lines of one file at once, four times each; the striped lock
// serializes them, so every edit lands and none meets a write_conflict.
func TestEdit_ConcurrentEditsAllLand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const workers, rounds = 16, 4
	var content strings.Builder
	for i := range workers {
		fmt.Fprintf(&content, "slot %02d = 0\n", i)
	}
	e.write("shared.txt", content.String())
	ctx := e.ctx("s1")
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for i := range workers {
		wg.Go(func() {
			for r := range rounds {
				_, err := e.call(ctx, "search_replace_in_file", map[string]any{
					"path":       "shared.txt",
					"old_string": fmt.Sprintf("slot %02d = %d\n", i, r),
					"new_string": fmt.Sprintf("slot %02d = %d\n", i, r+1),
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", i, r, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want strings.Builder
	for i := range workers {
		fmt.Fprintf(&want, "slot %02d = %d\n", i, rounds)
	}
	if got := e.read("shared.txt"); got != want.String() {
		t.Errorf("file after %d concurrent edits:\n got %q\nwant %q", workers*rounds, got, want.String())
	}
}

// setHook installs beforeRenameHook for one serial test.
func setHook(t *testing.T, hook func(ctx context.Context, absPath string)) {
	t.Helper()
	beforeRenameHook = hook
	t.Cleanup(func() { beforeRenameHook = nil })
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".yagent-tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEdit_ExternalWriteBeforeRenameConflicts injects a write by someone
// else between the edit's read and its rename (the seam): the edit must
// fail with write_conflict and leave that write intact. Serial: it sets
// the hook.
func TestEdit_ExternalWriteBeforeRenameConflicts(t *testing.T) {
	e := newEnv(t)
	path := e.write("f.txt", "a\nb\nc\n")
	const external = "written by someone else\n"
	fired := 0
	setHook(t, func(_ context.Context, abs string) {
		if abs == path {
			fired++
			if err := os.WriteFile(path, []byte(external), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "b", "new_string": "B"}},
		{"multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{{"old_string": "a", "new_string": "A"}}}},
		{"write_file", map[string]any{"path": "f.txt", "content": "mine\n"}},
	} {
		e.write("f.txt", "a\nb\nc\n")
		e.svc = New() // no session state: only the check before the rename can see the write
		te := e.fail(tc.tool, tc.input, sdk.CodeWriteConflict)
		mustContain(t, tc.tool+" error", te.Message, "file changed before write", "Read it again")
		if got := e.read("f.txt"); got != external {
			t.Errorf("%s: file is %q, want the external write %q intact", tc.tool, got, external)
		}
		if tmp := tempFiles(t, e.ws); len(tmp) > 0 {
			t.Errorf("%s: temp files left: %v", tc.tool, tmp)
		}
	}
	if fired != 3 {
		t.Errorf("hook ran %d times, want 3", fired)
	}
}

// TestWriteFile_CreatedMeanwhileConflicts: write_file meant to create a
// file that someone else created meanwhile must not overwrite it. Serial:
// it sets the hook.
func TestWriteFile_CreatedMeanwhileConflicts(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.ws, "new.txt")
	setHook(t, func(_ context.Context, abs string) {
		if abs == path {
			if err := os.WriteFile(path, []byte("theirs\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	te := e.fail("write_file", map[string]any{"path": "new.txt", "content": "mine\n"}, sdk.CodeWriteConflict)
	mustContain(t, "error", te.Message, "file was created before write")
	if got := e.read("new.txt"); got != "theirs\n" {
		t.Errorf("file is %q, want the other writer's %q", got, "theirs\n")
	}
}

// TestEdit_StaleReadConflicts: a session that read a file and then edits
// it after someone else changed it gets write_conflict; after reading it
// again the edit goes through. A session that never read it is not held.
func TestEdit_StaleReadConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := e.write("f.txt", "a\nb\nc\n")
	e.run("read_file", map[string]any{"path": "f.txt"})
	if err := os.WriteFile(path, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "b", "new_string": "B"}},
		{"multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{{"old_string": "b", "new_string": "B"}}}},
		{"write_file", map[string]any{"path": "f.txt", "content": "mine\n"}},
	} {
		te := e.fail(tc.tool, tc.input, sdk.CodeWriteConflict)
		mustContain(t, tc.tool+" error", te.Message, "changed on disk since you last read", "read_file")
	}
	if got := e.read("f.txt"); got != "a\nb\nc\nd\n" {
		t.Errorf("file: got %q", got)
	}
	if _, err := e.call(e.ctx("s2"), "search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "d", "new_string": "D"}); err != nil {
		t.Errorf("a session that never read the file: %v", err)
	}
	e.run("read_file", map[string]any{"path": "f.txt"})
	e.run("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "b", "new_string": "B"})
	if got := e.read("f.txt"); got != "a\nB\nc\nD\n" {
		t.Errorf("file after reading again and editing: got %q", got)
	}
}

// TestEdit_LargeFileStateByStat: files over maxHashOnRead are remembered by
// size and modification time; a change of either is still a conflict.
// Serial: it lowers the seam.
func TestEdit_LargeFileStateByStat(t *testing.T) {
	old := maxHashOnRead
	maxHashOnRead = 16
	t.Cleanup(func() { maxHashOnRead = old })
	e := newEnv(t)
	content := "0123456789\nabcdefghij\n"
	if int64(len(content)) <= maxHashOnRead {
		t.Fatalf("fixture of %d bytes does not exceed maxHashOnRead %d", len(content), maxHashOnRead)
	}
	path := e.write("f.txt", content)
	e.run("read_file", map[string]any{"path": "f.txt", "limit": 1})
	// Same size, new bytes and a new modification time.
	if err := os.WriteFile(path, []byte("0123456789\nABCDEFGHIJ\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	e.fail("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "0123", "new_string": "x"}, sdk.CodeWriteConflict)
}
