package walk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/yagent/yagent/plugins/search/internal/ignore"
)

// Entry is one path the walk reached.
type Entry struct {
	// Path is the absolute path.
	Path string
	// Rel is the path relative to the root, slash-separated; for a root
	// that is a file it is the file's name.
	Rel string
	// Type holds the type bits: 0 for a regular file, fs.ModeDir,
	// fs.ModeSymlink, or another special type.
	Type fs.FileMode
}

// IsRegular reports whether e is a regular file.
func (e Entry) IsRegular() bool { return e.Type&fs.ModeType == 0 }

// Options tunes a walk; the zero value walks with GOMAXPROCS workers,
// reads no ignore file and skips hidden names.
type Options struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Ignore supplies the ignore rules; nil reads none.
	Ignore *ignore.Tree
	// Hidden includes names starting with a dot.
	Hidden bool
	// Filter, when set, is asked about every entry below the root that the
	// ignore rules keep; false skips it (a directory is not entered).
	Filter func(rel string, isDir bool) bool
	// Dirs also reports directories to the callback.
	Dirs bool
}

// Error is a path the walk could not read.
type Error struct {
	Path string
	Err  error
}

// Walk reports to fn every entry under root that the rules keep: regular
// files, symbolic links (not followed) and, with Options.Dirs, directories.
// A root that is a file is reported alone, whatever the rules say. fn and
// onErr are called concurrently from the workers. Walk returns ctx's error
// when it was cancelled and an error when root cannot be read.
func Walk(ctx context.Context, root string, opts Options, fn func(Entry), onErr func(*Error)) error {
	root = filepath.Clean(root)
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		fn(Entry{Path: root, Rel: filepath.Base(root), Type: info.Mode().Type()})
		return nil
	}
	if onErr == nil {
		onErr = func(*Error) {}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	w := &walker{ctx: ctx, opts: opts, fn: fn, onErr: onErr}
	w.cond = sync.NewCond(&w.mu)
	rootDir := opts.Ignore.Lookup(root)
	w.push(item{path: root, rel: "", parent: rootDir, isDir: true, isRoot: true})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
	return ctx.Err()
}

type item struct {
	path, rel string
	parent    *ignore.Dir // for a directory: the rules of the directory itself when isRoot, else its parent's
	typ       fs.FileMode
	isDir     bool
	isRoot    bool
}

type walker struct {
	ctx   context.Context
	opts  Options
	fn    func(Entry)
	onErr func(*Error)

	mu      sync.Mutex
	cond    *sync.Cond
	stack   []item
	pending int
}

func (w *walker) push(it item) {
	w.mu.Lock()
	w.stack = append(w.stack, it)
	w.pending++
	w.mu.Unlock()
	w.cond.Signal()
}

func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.pending > 0 {
			w.cond.Wait()
		}
		if len(w.stack) == 0 {
			w.mu.Unlock()
			w.cond.Broadcast()
			return
		}
		it := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.mu.Unlock()

		if w.ctx.Err() == nil {
			if it.isDir {
				w.readDir(it)
			} else {
				w.fn(Entry{Path: it.path, Rel: it.rel, Type: it.typ})
			}
		}

		w.mu.Lock()
		w.pending--
		done := w.pending == 0
		w.mu.Unlock()
		if done {
			w.cond.Broadcast()
		}
	}
}

// readDir lists the directory it and reports or queues its children.
func (w *walker) readDir(it item) {
	f, err := os.Open(it.path)
	if err != nil {
		w.onErr(&Error{Path: it.path, Err: unwrapPath(err)})
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ents) == 0 {
		w.onErr(&Error{Path: it.path, Err: unwrapPath(err)})
		return
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	rules := it.parent
	if !it.isRoot {
		rules = w.opts.Ignore.Child(it.parent, it.path, names)
	}
	for _, e := range ents {
		if w.ctx.Err() != nil {
			return
		}
		name := e.Name()
		abs := it.path + string(filepath.Separator) + name
		if it.path == string(filepath.Separator) {
			abs = it.path + name
		}
		rel := name
		if it.rel != "" {
			rel = it.rel + "/" + name
		}
		typ := e.Type()
		isDir := typ.IsDir()
		if rules.Excluded(abs, isDir, w.opts.Hidden) {
			continue
		}
		if w.opts.Filter != nil && !w.opts.Filter(rel, isDir) {
			continue
		}
		if isDir {
			if w.opts.Dirs {
				w.fn(Entry{Path: abs, Rel: rel, Type: typ})
			}
			w.push(item{path: abs, rel: rel, parent: rules, isDir: true})
			continue
		}
		w.push(item{path: abs, rel: rel, typ: typ})
	}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
