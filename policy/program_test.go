package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// later is a clock an hour ahead: every file looks old enough to keep.
func later() time.Time { return time.Now().Add(time.Hour) }

// ruleProgram writes a rule program's file and describes it the way the
// host does.
func ruleProgram(t *testing.T, dir, name string, data []byte) RuleProgram {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return RuleProgram{Name: name, Files: []RuleFile{{Path: p, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}}}
}

func writeFile(t *testing.T, p string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// files stats each path as the guard does.
func files(t *testing.T, paths ...string) []ExecFile {
	t.Helper()
	var out []ExecFile
	for _, p := range paths {
		if f, ok := StatExecFile(p); ok {
			out = append(out, f)
		}
	}
	return out
}

// TestProgramMatcher_Match: a rule program is known by its name, by its
// file through any path or link, and by a byte-identical copy under any
// name, whether the host sent the sums or the matcher hashes the rule's
// files itself; a file of the same size with other bytes, or another
// file, is not it.
func TestProgramMatcher_Match(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := []byte("\x7fELF pretend program body")
	pe := ruleProgram(t, dir, "printenv", body)
	curl := ruleProgram(t, dir, "curl", []byte("another"))
	same := writeFile(t, filepath.Join(dir, "pe"), body)
	modified := slices.Clone(body)
	modified[len(modified)-1] ^= 1 // same size, other bytes
	other := writeFile(t, filepath.Join(dir, "pe2"), modified)
	link := filepath.Join(dir, "ln")
	if err := os.Symlink(filepath.Join(dir, "printenv"), link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	if err := os.Link(filepath.Join(dir, "printenv"), hard); err != nil {
		t.Fatal(err)
	}
	unrelated := writeFile(t, filepath.Join(dir, "true"), []byte("unrelated, of its own size"))

	lazy := []RuleProgram{pe, curl}
	for i := range lazy {
		lazy[i].Files = slices.Clone(lazy[i].Files)
		lazy[i].Files[0].SHA256 = ""
	}
	for _, progs := range [][]RuleProgram{{pe, curl}, lazy} {
		m := NewProgramMatcher(progs, NewProgramHashes("", later))
		cases := []struct {
			name  string
			names []string
			files []ExecFile
			want  []string
		}{
			{"by name", []string{"/usr/bin/printenv"}, nil, []string{"printenv"}},
			{"by another name", []string{other, "curl"}, files(t, other), []string{"curl"}},
			{"byte-identical copy", []string{same}, files(t, same), []string{"printenv"}},
			{"same size, other bytes", []string{other}, files(t, other), nil},
			{"same file through a symlink", []string{link}, files(t, link), []string{"printenv"}},
			{"same file through a hard link", []string{hard}, files(t, hard), []string{"printenv"}},
			{"both", []string{"curl"}, files(t, same), []string{"printenv", "curl"}},
			{"unrelated", []string{unrelated}, files(t, unrelated), nil},
		}
		for _, c := range cases {
			if got := m.Match(c.names, c.files); !slices.Equal(got, c.want) {
				t.Errorf("%s (sums sent: %v): Match(%q, files) = %q, want %q", c.name, progs[0].Files[0].SHA256 != "", c.names, got, c.want)
			}
		}
		if got := m.Programs(); !slices.Equal(got, []string{"printenv", "curl"}) {
			t.Errorf("Programs() = %q", got)
		}
	}
}

// TestProgramMatcher_SameFileWhateverItsContent: the rule's own file is
// its program through any link even when its content is not what the
// host hashed (the file was rewritten since): identity does not depend on
// the sum.
func TestProgramMatcher_SameFileWhateverItsContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := ruleProgram(t, dir, "printenv", []byte("body"))
	p.Files[0].Size, p.Files[0].SHA256 = 99, hex.EncodeToString(make([]byte, 32))
	hard := filepath.Join(dir, "hard")
	if err := os.Link(filepath.Join(dir, "printenv"), hard); err != nil {
		t.Fatal(err)
	}
	m := NewProgramMatcher([]RuleProgram{p}, nil)
	if got := m.Match(nil, files(t, hard)); !slices.Equal(got, []string{"printenv"}) {
		t.Errorf("Match(hard link) = %q, want printenv", got)
	}
}

// TestProgramMatcher_HashesOnlySameSize: a file no rule file has the size
// of is never read, a file's hash is computed once while it is unchanged,
// and a file rewritten with the same size is hashed again.
func TestProgramMatcher_HashesOnlySameSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := NewProgramHashes("", later)
	m := NewProgramMatcher([]RuleProgram{ruleProgram(t, dir, "printenv", []byte("12345678"))}, h)
	small := writeFile(t, filepath.Join(dir, "small"), []byte("1234"))
	m.Match(nil, files(t, small))
	if h.Hashed() != 0 {
		t.Errorf("a file of another size was hashed")
	}
	copyOf := writeFile(t, filepath.Join(dir, "copy"), []byte("12345678"))
	for range 3 {
		if got := m.Match(nil, files(t, copyOf)); !slices.Equal(got, []string{"printenv"}) {
			t.Fatalf("Match(copy) = %q", got)
		}
	}
	if h.Hashed() != 1 || len(h.files) != 1 {
		t.Errorf("%d files hashed, %d sums kept; want 1 and 1", h.Hashed(), len(h.files))
	}
	fi, err := os.Stat(copyOf)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, copyOf, []byte("87654321")) // same size, new content
	if err := os.Chtimes(copyOf, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := m.Match(nil, files(t, copyOf)); got != nil {
		t.Errorf("Match(rewritten copy) = %q, want nil: the cache kept a stale hash", got)
	}
	if len(h.files) != 1 {
		t.Errorf("%d sums kept after a rewrite, want 1: one per file", len(h.files))
	}
}

// TestProgramHashes_FreshFileHashedEachTime: a file that changed within
// the racy window is not kept: a second change in the same clock tick
// would not show in its key.
func TestProgramHashes_FreshFileHashedEachTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := NewProgramHashes("", nil)
	f := files(t, writeFile(t, filepath.Join(dir, "fresh"), []byte("fresh")))[0]
	for range 2 {
		if _, ok := h.Sum(f); !ok {
			t.Fatal("Sum failed")
		}
	}
	if h.Hashed() != 2 || len(h.files) != 0 {
		t.Errorf("fresh file: %d hashes, %d kept; want 2 and none", h.Hashed(), len(h.files))
	}
}

// TestProgramHashes_Bounded: past its bound the cache starts over.
func TestProgramHashes_Bounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := NewProgramHashes("", later)
	h.max = 3
	for i := range 10 {
		f := files(t, writeFile(t, filepath.Join(dir, string(rune('a'+i))), []byte{byte(i)}))[0]
		if _, ok := h.Sum(f); !ok {
			t.Fatal("Sum failed")
		}
		if len(h.files) > h.max {
			t.Fatalf("%d sums kept, bound %d", len(h.files), h.max)
		}
	}
}

// TestProgramHashes_KeptAcrossStarts: a second cache on the same file
// reads the sums the first one saved, and hashes nothing; a file it
// cannot read is an empty cache.
func TestProgramHashes_KeptAcrossStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	saved := filepath.Join(dir, "sums", "exec-sums.json")
	f := files(t, writeFile(t, filepath.Join(dir, "prog"), []byte("#!/bin/sh\n")))[0]
	first := NewProgramHashes(saved, later)
	want, _ := first.Sum(f)
	first.Save()
	second := NewProgramHashes(saved, later)
	if got, ok := second.Sum(f); !ok || got != want || second.Hashed() != 0 {
		t.Errorf("second start: %s, %d hashed; want %s from the file", got, second.Hashed(), want)
	}
	if err := os.WriteFile(saved, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := NewProgramHashes(saved, later)
	if got, ok := third.Sum(f); !ok || got != want || third.Hashed() != 1 {
		t.Errorf("a broken file: %s, %d hashed; want %s hashed again", got, third.Hashed(), want)
	}
}

// TestProgramMatcher_ReadsTheOpenFile: a file held open is judged by what
// it holds, whatever its path names since.
func TestProgramMatcher_ReadsTheOpenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := []byte("the denied program's bytes")
	m := NewProgramMatcher([]RuleProgram{ruleProgram(t, dir, "printenv", body)}, nil)
	p := writeFile(t, filepath.Join(dir, "x"), body)
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	decoy := writeFile(t, filepath.Join(dir, "decoy"), []byte("something else, same size!"))
	if err := os.Rename(decoy, p); err != nil {
		t.Fatal(err)
	}
	f, ok := OpenedExecFile(fh)
	if !ok {
		t.Fatal("OpenedExecFile failed")
	}
	if got := m.Match(nil, []ExecFile{f}); !slices.Equal(got, []string{"printenv"}) {
		t.Errorf("Match(open copy, its path since replaced) = %q, want printenv", got)
	}
}

// TestStatExecFile_RegularOnly: a FIFO or a folder is no program file,
// and is never opened.
func TestStatExecFile_RegularOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{fifo, dir, filepath.Join(dir, "missing")} {
		if _, ok := StatExecFile(p); ok {
			t.Errorf("StatExecFile(%s) = ok, want false", p)
		}
	}
	h := NewProgramHashes("", later)
	fi, err := os.Stat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		_, ok := h.Sum(ExecFile{Path: fifo, Info: fi})
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("Sum(FIFO) = ok")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sum(FIFO) blocked")
	}
}

// TestProgramMatcher_Concurrent: one matcher serves many calls at once.
func TestProgramMatcher_Concurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := []byte("12345678")
	m := NewProgramMatcher([]RuleProgram{ruleProgram(t, dir, "printenv", body)}, NewProgramHashes("", later))
	var paths []string
	for i := range 8 {
		paths = append(paths, writeFile(t, filepath.Join(dir, string(rune('a'+i))), body))
	}
	var wg sync.WaitGroup
	for _, p := range paths {
		for range 4 {
			wg.Go(func() {
				if got := m.Match(nil, files(t, p)); !slices.Equal(got, []string{"printenv"}) {
					t.Errorf("Match(%s) = %q", p, got)
				}
			})
		}
	}
	wg.Wait()
}
