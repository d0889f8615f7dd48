package wsroot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/yagent/yagent/internal/filestat"
	"github.com/yagent/yagent/policy"
)

// maxKeptRoots bounds the workspaces whose roots a Roots keeps open while
// no call uses them.
const maxKeptRoots = 8

// Roots keeps each workspace's os.Root open from one call to the next, so
// a call does not resolve the workspace's symlinks and open it again. At
// the start of every call the folder the workspace's name means now is
// compared with the one the kept root holds (device and inode): a
// workspace renamed away, replaced or swapped for a symlink gets a new
// root, as it did when every call opened its own. A root replaced while
// calls use it is closed when the last of them ends.
//
// The zero value is ready to use; it is safe for concurrent use.
type Roots struct {
	mu   sync.Mutex
	kept map[string]*keptRoot
}

// keptRoot is one workspace's open root and the calls using it.
type keptRoot struct {
	root *os.Root
	raw  *rawDir     // root's folder for raw calls, or nil
	real string      // the workspace with its symlinks resolved, when opened
	dir  fs.FileInfo // the folder root holds
	refs int         // calls using root
	gone bool        // replaced: closed when refs drops to 0
}

// New returns a Resolver for a call whose workspace is the absolute folder
// workspace and whose approved external paths are approved, on the
// workspace's kept root when it still holds the folder the name means.
// Close it when the call ends.
func (s *Roots) New(workspace string, approved []string) (*Resolver, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return nil, fmt.Errorf("workspace root %q is not an absolute path", workspace)
	}
	ws := filepath.Clean(workspace)
	now, err := statFollow(ws)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	s.mu.Lock()
	k := s.kept[ws]
	if k != nil && sameFile(k.dir, now) {
		k.refs++
		s.mu.Unlock()
		return s.resolver(ws, approved, k), nil
	}
	s.mu.Unlock()

	k, err = openKept(ws)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.kept == nil {
		s.kept = map[string]*keptRoot{}
	}
	if old := s.kept[ws]; old != nil {
		s.retire(old)
	}
	s.kept[ws] = k
	for name, idle := range s.kept {
		if len(s.kept) <= maxKeptRoots {
			break
		}
		if idle != k && idle.refs == 0 {
			delete(s.kept, name)
			s.retire(idle)
		}
	}
	s.mu.Unlock()
	return s.resolver(ws, approved, k), nil
}

func openKept(ws string) (*keptRoot, error) {
	root, real, err := openWorkspace(ws)
	if err != nil {
		return nil, err
	}
	dir, err := root.Stat(".")
	if err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &keptRoot{root: root, raw: newRawDir(root, real), real: real, dir: dir, refs: 1}, nil
}

// statFollow is os.Stat of the workspace's name, read component by
// component as the guard reads a path (policy.Resolve on the machine's
// files): raw system calls where the mounts are local, so that the call's
// first look at the workspace leaves the runtime's monitor asleep. A name
// that does not resolve to an existing folder gets os.Stat's own answer.
func statFollow(ws string) (fs.FileInfo, error) {
	if r, err := policy.Resolve(policy.OS, ws, nil); err == nil && r.Exists {
		return r.Info, nil
	}
	return os.Stat(ws)
}

// sameFile is os.SameFile, for infos of a raw stat as well.
func sameFile(a, b fs.FileInfo) bool {
	da, ia, okA := filestat.Inode(a)
	db, ib, okB := filestat.Inode(b)
	if okA && okB {
		return da == db && ia == ib
	}
	return os.SameFile(a, b)
}

// retire marks k replaced, closing it when no call uses it. s.mu is held.
func (s *Roots) retire(k *keptRoot) {
	k.gone = true
	if k.refs == 0 {
		k.close()
	}
}

// release ends one call's use of k.
func (s *Roots) release(k *keptRoot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k.refs--
	if k.refs == 0 && k.gone {
		k.close()
	}
}

func (k *keptRoot) close() {
	k.raw.close()
	_ = k.root.Close()
}

func (s *Roots) resolver(ws string, approved []string, k *keptRoot) *Resolver {
	r := newResolver(ws, k.real, approved, k.root)
	r.raw = k.raw
	r.release = func() { s.release(k) }
	return r
}
