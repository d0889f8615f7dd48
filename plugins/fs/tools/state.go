package tools

import (
	"crypto/sha256"
	"io/fs"
	"slices"
	"sync"
	"time"
)

// maxStates bounds the file-state cache; the oldest records go first.
const maxStates = 8192

// fileState is what a session last saw of a file: the sha256 of its bytes
// when it had them all, else the size and modification time.
type fileState struct {
	hashed bool
	sum    [32]byte
	size   int64
	mtime  time.Time
}

func stateOfBytes(b []byte) fileState {
	return fileState{hashed: true, sum: sha256.Sum256(b), size: int64(len(b))}
}

func stateOfInfo(fi fs.FileInfo) fileState {
	return fileState{size: fi.Size(), mtime: fi.ModTime()}
}

// matches reports whether a file whose bytes are b (info fi) is still the
// one the state recorded.
func (st fileState) matches(b []byte, fi fs.FileInfo) bool {
	if st.hashed {
		return st.size == int64(len(b)) && st.sum == sha256.Sum256(b)
	}
	return st.size == fi.Size() && st.mtime.Equal(fi.ModTime())
}

type stateKey struct{ session, path string }

// stateCache remembers, per session and canonical path, the state of the
// bytes the session last read or wrote.
type stateCache struct {
	mu    sync.Mutex
	m     map[stateKey]fileState
	order []stateKey
	max   int
}

func newStateCache(max int) *stateCache {
	return &stateCache{m: map[stateKey]fileState{}, max: max}
}

func (c *stateCache) get(session, path string) (fileState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[stateKey{session, path}]
	return st, ok
}

// dropSession forgets everything session read or wrote.
func (c *stateCache) dropSession(session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order = slices.DeleteFunc(c.order, func(k stateKey) bool {
		if k.session != session {
			return false
		}
		delete(c.m, k)
		return true
	})
}

func (c *stateCache) put(session, path string, st fileState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := stateKey{session, path}
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
		for len(c.order) > c.max {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.m[k] = st
}
