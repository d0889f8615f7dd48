package execwatch

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/yagent/yagent/sdk"
)

// Matcher finds the rule programs an exec may be. It is safe for
// concurrent use.
type Matcher struct {
	all    []string            // every rule program, in rule order
	byName map[string][]string // basename → rule programs
	byID   map[fileID][]string // device+inode of a rule file → rule programs
	bySize map[int64][]ruleFile

	mu     sync.Mutex
	hashes map[hashKey]string // a file's sha256, while it is unchanged
}

type ruleFile struct {
	name   string
	sha256 string
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// hashKey names one content of one file: a change to it changes the size,
// the mtime or the ctime.
type hashKey struct {
	id                 fileID
	size, mtime, ctime int64
}

// maxHashes bounds the hash cache; past it the cache starts over.
const maxHashes = 4096

// NewMatcher builds a matcher for the programs of the profile's ask and
// deny exec rules.
func NewMatcher(progs []sdk.ExecProgram) *Matcher {
	m := &Matcher{
		byName: map[string][]string{},
		byID:   map[fileID][]string{},
		bySize: map[int64][]ruleFile{},
		hashes: map[hashKey]string{},
	}
	for _, p := range progs {
		if p.Name == "" || slices.Contains(m.all, p.Name) {
			continue
		}
		m.all = append(m.all, p.Name)
		m.byName[p.Name] = append(m.byName[p.Name], p.Name)
		for _, f := range p.Files {
			if base := filepath.Base(f.Path); base != p.Name && f.Path != "" {
				m.byName[base] = append(m.byName[base], p.Name)
			}
			if fi, err := os.Stat(f.Path); err == nil {
				if k, ok := keyOf(fi); ok {
					m.byID[k.id] = append(m.byID[k.id], p.Name)
				}
			}
			if f.SHA256 != "" {
				m.bySize[f.Size] = append(m.bySize[f.Size], ruleFile{p.Name, f.SHA256})
			}
		}
	}
	return m
}

// Match returns the rule programs e may be, in rule order: by the basename
// of its Path, of argv[0] and of each interpreter, and by file identity (the
// same file as a rule's, or a byte-identical copy of one under any name; a
// modified copy is another program). An Unidentified exec may be any of
// them. Nil means no rule concerns e.
func (m *Matcher) Match(e Exec) []string {
	if m == nil || len(m.all) == 0 {
		return nil
	}
	if e.Unidentified != "" {
		return slices.Clone(m.all)
	}
	hit := map[string]bool{}
	names := []string{e.Path}
	if len(e.Argv) > 0 {
		names = append(names, e.Argv[0])
	}
	names = append(names, e.Interpreters...)
	for _, n := range names {
		for _, r := range m.byName[filepath.Base(n)] {
			hit[r] = true
		}
	}
	files := e.files
	if files == nil {
		// An Exec built by hand: open its files by name.
		for _, p := range append([]string{e.Path}, e.Interpreters...) {
			if f, err := os.Open(p); err == nil {
				defer f.Close()
				files = append(files, f)
			}
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

// matchFile adds the rule programs f is to hit. It hashes f only when a
// rule file has its size.
func (m *Matcher) matchFile(f *os.File, hit map[string]bool) {
	fi, err := f.Stat()
	if err != nil {
		return
	}
	k, ok := keyOf(fi)
	if !ok {
		return
	}
	for _, r := range m.byID[k.id] {
		hit[r] = true
	}
	same := m.bySize[k.size]
	if len(same) == 0 {
		return
	}
	sum, ok := m.hash(f, k)
	if !ok {
		return
	}
	for _, r := range same {
		if r.sha256 == sum {
			hit[r.name] = true
		}
	}
}

func (m *Matcher) hash(f *os.File, k hashKey) (string, bool) {
	m.mu.Lock()
	sum, ok := m.hashes[k]
	m.mu.Unlock()
	if ok {
		return sum, true
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, k.size)); err != nil {
		return "", false
	}
	sum = hex.EncodeToString(h.Sum(nil))
	m.mu.Lock()
	if len(m.hashes) >= maxHashes {
		clear(m.hashes)
	}
	m.hashes[k] = sum
	m.mu.Unlock()
	return sum, true
}
