package ignore

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The kinds of ignore file, in precedence order (highest first).
const (
	kindRgignore = iota
	kindIgnore
	kindGitignore
	kindGitExclude
	numKinds
)

// fileNames are the ignore files read in every directory, by kind.
var fileNames = [numKinds]string{".rgignore", ".ignore", ".gitignore", ".git/info/exclude"}

// Dir is the ignore rules in force inside one directory: its own files and
// those of its ancestors.
type Dir struct {
	parent *Dir
	files  [numKinds]*File
	// hasGit is set when the directory holds a .git entry: the root of a
	// git repository (or of a worktree or submodule).
	hasGit bool
}

// Match returns the verdict of the rules in force in d on the absolute path
// abs, which lies inside d (ripgrep's precedence, see the package comment).
// .gitignore files and .git/info/exclude count only inside a git
// repository, from the path up to the repository's root and not above it,
// as git and ripgrep read them; .ignore and .rgignore files count in every
// ancestor.
func (d *Dir) Match(abs string, isDir bool) Match {
	inRepo := false
	for r := d; r != nil && !inRepo; r = r.parent {
		inRepo = r.hasGit
	}
	for kind := 0; kind < numKinds; kind++ {
		gitKind := kind == kindGitignore || kind == kindGitExclude
		if gitKind && !inRepo {
			continue
		}
		for r := d; r != nil; r = r.parent {
			if f := r.files[kind]; f != nil {
				if m := f.Match(abs, isDir); m != None {
					return m
				}
			}
			if gitKind && r.hasGit {
				break
			}
		}
	}
	return None
}

// Excluded reports whether a search skips the entry abs (a child of d):
// an ignore rule excludes it, or none matches and hidden is false and its
// name starts with a dot.
func (d *Dir) Excluded(abs string, isDir, hidden bool) bool {
	switch d.Match(abs, isDir) {
	case Ignore:
		return true
	case Whitelist:
		return false
	}
	return !hidden && strings.HasPrefix(filepath.Base(abs), ".")
}

// Tree loads and caches the rules of directories; it is safe for
// concurrent use. The zero Tree reads no ignore file (every Dir is empty),
// which is what a search with ignore files turned off uses.
type Tree struct {
	read bool
	mu   sync.Mutex
	dirs map[string]*Dir
}

// NewTree returns a Tree that reads ignore files.
func NewTree() *Tree { return &Tree{read: true, dirs: map[string]*Dir{}} }

// Lookup returns the rules in force in the absolute, clean directory dir,
// loading the ignore files of dir and of every ancestor up to the root.
func (t *Tree) Lookup(dir string) *Dir {
	if t == nil {
		return &Dir{}
	}
	t.mu.Lock()
	if t.dirs == nil {
		t.dirs = map[string]*Dir{}
	}
	d, ok := t.dirs[dir]
	t.mu.Unlock()
	if ok {
		return d
	}
	var parent *Dir
	if up := filepath.Dir(dir); up != dir {
		parent = t.Lookup(up)
	}
	d = t.load(parent, dir, nil)
	t.mu.Lock()
	if prev, ok := t.dirs[dir]; ok {
		d = prev
	} else {
		t.dirs[dir] = d
	}
	t.mu.Unlock()
	return d
}

// Child returns the rules in force in dir, a child directory of parent,
// without caching it: the walk visits each directory once. names, when not
// nil, are the entries of dir, which spares a failed open for every
// absent ignore file.
func (t *Tree) Child(parent *Dir, dir string, names []string) *Dir {
	if t == nil {
		return &Dir{parent: parent}
	}
	return t.load(parent, dir, names)
}

func (t *Tree) load(parent *Dir, dir string, names []string) *Dir {
	d := &Dir{parent: parent}
	if !t.read {
		return d
	}
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	if names != nil {
		set := make(map[string]bool, 4)
		for _, n := range names {
			switch n {
			case ".rgignore", ".ignore", ".gitignore", ".git":
				set[n] = true
			}
		}
		has = func(n string) bool { return set[n] }
	}
	d.hasGit = has(".git")
	for kind, name := range fileNames {
		first, _, _ := strings.Cut(name, "/")
		if !has(first) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if f := ParseFile(dir, data); f.Len() > 0 {
			d.files[kind] = f
		}
	}
	return d
}
