package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

func TestWriteFile_KeepsTheFilesConventions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, old, content, want string
		notes                          []string // line_endings details
	}{
		{name: "new file as given", path: "a.txt", content: "x\ny\n", want: "x\ny\n"},
		{name: "new .bat gets CRLF", path: "run.bat", content: "@echo off\necho hi\n", want: "@echo off\r\necho hi\r\n", notes: []string{"crlf-applied"}},
		{name: "new .CMD gets CRLF", path: "run.CMD", content: "echo\n", want: "echo\r\n", notes: []string{"crlf-applied"}},
		{name: "new .ps1 stays LF", path: "run.ps1", content: "Write-Host hi\n", want: "Write-Host hi\n"},
		{name: "CRLF file keeps CRLF", path: "w.txt", old: "a\r\nb\r\n", content: "c\nd\n", want: "c\r\nd\r\n", notes: []string{"crlf-applied"}},
		{name: "LF file keeps LF", path: "u.txt", old: "a\nb\n", content: "c\r\nd\r\n", want: "c\nd\n", notes: []string{"lf-applied"}},
		{name: "mixed file, nothing kept: content as written", path: "m.txt", old: "a\r\nb\n", content: "c\nd\n", want: "c\nd\n", notes: []string{"mixed-not-converted"}},
		{name: "mixed file keeps each kept line's ending", path: "m2.txt", old: "a\r\nb\nc\r\n", content: "a\nb\nc\n", want: "a\r\nb\nc\r\n", notes: []string{"mixed-kept-per-line"}},
		{name: "mixed file: a changed line takes the ending of the kept line before it", path: "m3.txt", old: "a\r\nb\nc\r\nd\n", content: "a\nB\nc\nd\ne\n", want: "a\r\nB\r\nc\r\nd\ne\n", notes: []string{"mixed-kept-per-line"}},
		{name: "mixed file: a line added at the top takes the ending after it", path: "m4.txt", old: "a\nb\r\n", content: "top\na\nb\n", want: "top\na\nb\r\n", notes: []string{"mixed-kept-per-line"}},
		{name: "mixed file: a last line without a break keeps none", path: "m5.txt", old: "a\r\nb\nc", content: "a\nb\nc", want: "a\r\nb\nc", notes: []string{"mixed-kept-per-line"}},
		{name: "UTF-8 BOM kept", path: "bom.txt", old: "\xEF\xBB\xBFold\n", content: "new\n", want: "\xEF\xBB\xBFnew\n"},
		{name: "a mark the content repeats is not doubled", path: "bom2.txt", old: "\xEF\xBB\xBFold\n", content: "\uFEFFnew\n", want: "\xEF\xBB\xBFnew\n"},
		{name: "UTF-16LE BOM and CRLF kept", path: "w16.txt", old: "\xFF\xFEa\x00\r\x00\n\x00", content: "hé\n", want: "\xFF\xFEh\x00\xe9\x00\r\x00\n\x00", notes: []string{"crlf-applied"}},
		{name: "GB18030 kept", path: "gb.txt", old: "\xc4\xe3\xba\xc3\n", content: "再见\n", want: "\xd4\xd9\xbc\xfb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tt.old != "" {
				e.write(tt.path, tt.old)
			}
			res := e.run("write_file", map[string]any{"path": tt.path, "content": tt.content})
			if got := e.read(tt.path); got != tt.want {
				t.Errorf("file: got %q, want %q", got, tt.want)
			}
			if got := noteDetails(res, "line_endings"); !slices.Equal(got, tt.notes) {
				t.Errorf("line_endings notes: got %q, want %q", got, tt.notes)
			}
		})
	}
}

func TestWriteFile_KeepsModeAndCreatesFolders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.write("bin/tool.sh", "#!/bin/sh\n")
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	e.run("write_file", map[string]any{"path": "bin/tool.sh", "content": "#!/bin/sh\necho\n"})
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("mode after overwrite: %v, %v; want 0751", fi.Mode(), err)
	}
	e.run("write_file", map[string]any{"path": "deep/er/new.txt", "content": "x"})
	if got := e.read("deep/er/new.txt"); got != "x" {
		t.Errorf("new file in new folders: %q", got)
	}
	te := e.fail("write_file", map[string]any{"path": "deep", "content": "x"}, sdk.CodeInvalidInput)
	mustContain(t, "error", te.Message, "is a directory")
	if tmp := tempFiles(t, filepath.Join(e.ws, "bin")); len(tmp) > 0 {
		t.Errorf("temp files left: %v", tmp)
	}
}

func TestWriteFile_SameContentWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.write("f.txt", "same\n")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	res := e.run("write_file", map[string]any{"path": "f.txt", "content": "same\n"})
	mustContain(t, "result", res.Text, "nothing written")
	if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
		t.Errorf("file was rewritten: mtime %v, want %v", fi.ModTime(), old)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

// TestSweep_RemovesLeftoversOfKilledWrites: temp files of a dead writer are
// removed by the first call for the workspace (anywhere in its tree) and by
// the first write into a folder; a live writer's are kept.
func TestSweep_RemovesLeftoversOfKilledWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dead := ".yagent-tmp-" + strconv.Itoa(deadPID(t)) + "-0123456789abcdef"
	live := ".yagent-tmp-" + strconv.Itoa(os.Getpid()) + "-0123456789abcdef"
	liveOld := ".yagent-tmp-1-0123456789abcdef" // pid 1 runs, but the file is old
	e.write(dead, "half a write")
	e.write("deep/sub/"+dead, "half a write")
	e.write(live, "in flight")
	e.write(liveOld, "stale")
	e.write("keep.txt", "keep")
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(e.ws, liveOld), old, old); err != nil {
		t.Fatal(err)
	}

	e.run("list_dir", map[string]any{}) // any first call sweeps the workspace
	for _, name := range []string{dead, "deep/sub/" + dead, liveOld} {
		if _, err := os.Stat(filepath.Join(e.ws, name)); !os.IsNotExist(err) {
			t.Errorf("%s survived the sweep (%v)", name, err)
		}
	}
	for _, name := range []string{live, "keep.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}

	// A leftover appearing later is gone after the first write into its folder.
	e.write("later/"+dead, "half")
	e.run("write_file", map[string]any{"path": "later/f.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(e.ws, "later", dead)); !os.IsNotExist(err) {
		t.Errorf("leftover in later/ survived the first write there (%v)", err)
	}
}
