package policy

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/yagent/yagent/internal/atomicfile"
)

// Program identity: the exec rules name a program (printenv), and a
// command may run it by that name, by a path, through a symlink or a hard
// link, or as a copy under any name. The guard, judging a command line,
// and the exec supervisor, judging each exec of the command's tree, both
// ask a ProgramMatcher which rule programs a file is, and both keep the
// files' SHA-256 sums in a ProgramHashes.

// ExecFile is a file a program may be: its path, what stat said of it
// and, when the caller holds it open, the open file, which is read in
// place of the path (the exec supervisor holds the very file the kernel
// is about to run).
type ExecFile struct {
	Path string
	Info os.FileInfo
	open *os.File
}

// StatExecFile returns the regular file p (symlinks followed) as an
// ExecFile; false when p is not a regular file.
func StatExecFile(p string) (ExecFile, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return ExecFile{}, false
	}
	return ExecFile{Path: p, Info: fi}, true
}

// OpenedExecFile returns the open file f as an ExecFile, read through f
// itself; false when f is not a regular file. f must stay open while the
// ExecFile is used.
func OpenedExecFile(f *os.File) (ExecFile, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ExecFile{}, false
	}
	return ExecFile{Path: f.Name(), Info: fi, open: f}, true
}

// RuleProgram is the program of an ask or deny exec rule and the files
// its name resolves to on the machine.
type RuleProgram struct {
	// Name is the rule's program, a basename such as "printenv".
	Name  string
	Files []RuleFile
}

// RuleFile is one file of a rule's program.
type RuleFile struct {
	Path string
	// Size is the file's size: only a file of this size is hashed to be
	// compared with it.
	Size int64
	// SHA256 is the file's sum, lowercase hex, as the host hashed it; ""
	// to hash Path (through the matcher's ProgramHashes) when a file of
	// Size is compared with it.
	SHA256 string
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// fileKey names one content of one file: any write or replacement of it
// changes the size, the mtime or the status change time (ctime), which no
// user can set.
type fileKey struct {
	id                 fileID
	size, mtime, ctime int64
}

// keyOf is fi's key; ok is false where the system gives no inode or no
// ctime (such a file is hashed on every use, never kept).
func keyOf(fi os.FileInfo) (k fileKey, ok bool) {
	dev, ino, ctime, ok := statIdentity(fi)
	if !ok || ino == 0 || ctime == 0 {
		return fileKey{size: fi.Size()}, false
	}
	return fileKey{id: fileID{dev, ino}, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime}, true
}

// ProgramMatcher finds the rule programs a file is, or a name names. It is
// safe for concurrent use, and holds no file open.
type ProgramMatcher struct {
	all    []string            // every rule program, in rule order
	byName map[string][]string // basename → rule programs
	byID   map[fileID][]string // device+inode of a rule file → rule programs
	// noID are the rule files the system gives no inode for, compared
	// with os.SameFile.
	noID   []ruleInfo
	bySize map[int64][]ruleFile
	hashes *ProgramHashes
}

type ruleInfo struct {
	name string
	fi   os.FileInfo
}

type ruleFile struct {
	name, path, sha256 string
}

// NewProgramMatcher returns the matcher of progs, each rule file
// identified by the device and inode a stat of its path gives now and
// by its content. hashes keeps the sums of the files it compares; nil
// keeps them for this matcher alone.
func NewProgramMatcher(progs []RuleProgram, hashes *ProgramHashes) *ProgramMatcher {
	if hashes == nil {
		hashes = NewProgramHashes("", nil)
	}
	m := &ProgramMatcher{
		byName: map[string][]string{},
		byID:   map[fileID][]string{},
		bySize: map[int64][]ruleFile{},
		hashes: hashes,
	}
	for _, p := range progs {
		if p.Name == "" || slices.Contains(m.all, p.Name) {
			continue
		}
		m.all = append(m.all, p.Name)
		m.byName[p.Name] = append(m.byName[p.Name], p.Name)
		for _, f := range p.Files {
			if f.Path == "" {
				continue
			}
			if base := filepath.Base(f.Path); base != p.Name {
				m.byName[base] = append(m.byName[base], p.Name)
			}
			if fi, err := os.Stat(f.Path); err == nil {
				if k, ok := keyOf(fi); ok {
					m.byID[k.id] = append(m.byID[k.id], p.Name)
				} else {
					m.noID = append(m.noID, ruleInfo{p.Name, fi})
				}
			}
			m.bySize[f.Size] = append(m.bySize[f.Size], ruleFile{p.Name, f.Path, f.SHA256})
		}
	}
	return m
}

// Programs returns every rule program, in rule order.
func (m *ProgramMatcher) Programs() []string {
	if m == nil {
		return nil
	}
	return slices.Clone(m.all)
}

// Match returns the rule programs, in rule order, that one of names
// (by its basename) or one of files is: the same file as a rule's (a
// path, a symlink, a hard link), or a byte-identical copy of one under
// any name; a modified copy is another program. A file is hashed only
// when a rule file has its size. Nil means none.
func (m *ProgramMatcher) Match(names []string, files []ExecFile) []string {
	if m == nil || len(m.all) == 0 {
		return nil
	}
	hit := map[string]bool{}
	for _, n := range names {
		for _, r := range m.byName[filepath.Base(n)] {
			hit[r] = true
		}
	}
	for _, f := range files {
		m.matchFile(f, hit)
	}
	var out []string
	for _, r := range m.all {
		if hit[r] {
			out = append(out, r)
		}
	}
	return out
}

// matchFile adds the rule programs f is to hit.
func (m *ProgramMatcher) matchFile(f ExecFile, hit map[string]bool) {
	if f.Info == nil {
		return
	}
	if k, ok := keyOf(f.Info); ok {
		for _, r := range m.byID[k.id] {
			hit[r] = true
		}
	} else {
		for _, r := range m.noID {
			if os.SameFile(f.Info, r.fi) {
				hit[r.name] = true
			}
		}
	}
	same := m.bySize[f.Info.Size()]
	if len(same) == 0 {
		return
	}
	sum, ok := m.hashes.Sum(f)
	if !ok {
		return
	}
	for _, r := range same {
		if hit[r.name] {
			continue
		}
		want := r.sha256
		if want == "" {
			rf, ok := StatExecFile(r.path)
			if !ok {
				continue
			}
			if want, ok = m.hashes.Sum(rf); !ok {
				continue
			}
		}
		if want == sum {
			hit[r.name] = true
		}
	}
}

// MaxProgramHashes bounds a ProgramHashes; past it, it starts over.
const MaxProgramHashes = 4096

// racyWindow is how recently a file may have changed and still have its
// sum kept: within it, a second change in the same clock tick could
// leave the size, the mtime and the ctime as they were.
const racyWindow = 2 * time.Second

// ProgramHashes keeps the SHA-256 sums of program files, one per file
// (device and inode), each while the file's size, mtime and ctime are the
// ones it was hashed at; a file that changed within the racy window, or
// whose system gives no inode or ctime, is hashed on every use. At most
// MaxProgramHashes files are kept. Safe for concurrent use.
//
// With a file it keeps them across starts too (node's binary alone is
// 99 MB: a start would hash it again otherwise): loaded on first use,
// written by Save with the sums of the files this process used.
type ProgramHashes struct {
	mu    sync.Mutex
	files map[fileID]hashEntry
	max   int
	// hashed counts the files read.
	hashed int

	file   string // "" = in memory only
	loaded bool
	dirty  bool
	now    func() time.Time
}

type hashEntry struct {
	key  fileKey
	sum  string
	used bool // looked up or hashed by this process
}

// NewProgramHashes returns an empty cache, kept in file when file is not
// "" (the file is read on first use), judging how recently a file changed
// by now (nil: time.Now).
func NewProgramHashes(file string, now func() time.Time) *ProgramHashes {
	if now == nil {
		now = time.Now
	}
	return &ProgramHashes{files: map[fileID]hashEntry{}, max: MaxProgramHashes, file: file, now: now}
}

// Hashed returns how many files h has read to hash them.
func (h *ProgramHashes) Hashed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hashed
}

// Sum returns the SHA-256 of f's content, lowercase hex; false when f
// cannot be read. A file named by its path alone is opened without
// blocking and read only if it is still a regular file; its sum is kept
// under what the open file's stat says, so a file swapped between the
// stat and the open is never kept under the other's identity.
func (h *ProgramHashes) Sum(f ExecFile) (string, bool) {
	if f.Info != nil {
		if k, ok := keyOf(f.Info); ok {
			h.mu.Lock()
			h.load()
			e, hit := h.files[k.id]
			if hit && e.key == k {
				e.used = true
				h.files[k.id] = e
				h.mu.Unlock()
				return e.sum, true
			}
			h.mu.Unlock()
		}
	}
	fh := f.open
	if fh == nil {
		var err error
		if fh, err = os.OpenFile(f.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
			return "", false
		}
		defer fh.Close()
	}
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	sum, err := sumOf(io.NewSectionReader(fh, 0, fi.Size()))
	if err != nil {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hashed++
	if k, ok := keyOf(fi); ok && h.keeps(k) {
		h.load()
		if _, ok := h.files[k.id]; !ok && len(h.files) >= h.max {
			clear(h.files)
		}
		h.files[k.id] = hashEntry{key: k, sum: sum, used: true}
		h.dirty = true
	}
	return sum, true
}

// keeps says whether k's sum may be kept: its file has not changed just
// now.
func (h *ProgramHashes) keeps(k fileKey) bool {
	return h.now().Sub(time.Unix(0, k.ctime)) > racyWindow
}

// savedSums is the file of a ProgramHashes.
type savedSums struct {
	Format int        `json:"format"`
	Files  []savedSum `json:"files"`
}

type savedSum struct {
	Dev     uint64 `json:"dev"`
	Inode   uint64 `json:"inode"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
	SHA256  string `json:"sha256"`
}

const savedSumsFormat = 1

// load reads the file once; a file that is missing, unreadable or of
// another format counts as empty. h.mu is held.
func (h *ProgramHashes) load() {
	if h.loaded || h.file == "" {
		return
	}
	h.loaded = true
	b, err := os.ReadFile(h.file)
	if err != nil {
		return
	}
	var saved savedSums
	if json.Unmarshal(b, &saved) != nil || saved.Format != savedSumsFormat {
		return
	}
	for _, e := range saved.Files {
		if len(h.files) >= h.max {
			break
		}
		k := fileKey{id: fileID{e.Dev, e.Inode}, size: e.Size, mtime: e.MtimeNS, ctime: e.CtimeNS}
		if k.id.ino != 0 && k.ctime != 0 && validSum(e.SHA256) {
			h.files[k.id] = hashEntry{key: k, sum: e.SHA256}
		}
	}
}

func validSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Save writes the sums this process used to h's file, if it hashed
// anything since the last Save; a file that cannot be written is left as
// it is.
func (h *ProgramHashes) Save() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dirty || h.file == "" {
		return
	}
	h.dirty = false
	saved := savedSums{Format: savedSumsFormat}
	for _, e := range h.files {
		if e.used {
			k := e.key
			saved.Files = append(saved.Files, savedSum{Dev: k.id.dev, Inode: k.id.ino, Size: k.size, MtimeNS: k.mtime, CtimeNS: k.ctime, SHA256: e.sum})
		}
	}
	slices.SortFunc(saved.Files, func(a, b savedSum) int { return cmp.Or(cmp.Compare(a.Dev, b.Dev), cmp.Compare(a.Inode, b.Inode)) })
	if b, err := json.MarshalIndent(saved, "", "  "); err == nil {
		_ = atomicfile.WriteFile(h.file, b, 0o600)
	}
}

// SumFile returns the sha256 of the file at path, lowercase hex: the sum a
// program is known by in exec rules, in plugin pins and in the first-party
// plugins' sums a host is built with.
func SumFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum, err := sumOf(f)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return sum, nil
}

// sumOf returns the sha256 of what r holds, lowercase hex.
func sumOf(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
