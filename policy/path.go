package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/yagent/yagent/internal/localstat"
)

// MaxLinks bounds the symlinks one path may pass through, as the kernel's
// ELOOP limit does.
const MaxLinks = 40

var (
	// ErrNotPlain is Plain's answer for a path that cannot be judged.
	ErrNotPlain = errors.New("NUL bytes and file:// URLs are refused: give a plain file path")
	// ErrLoop is Resolve's answer past MaxLinks symlinks.
	ErrLoop = errors.New("too many levels of symbolic links")
)

// Plain reports why p cannot be taken as a file path, nil when it can: a
// NUL byte, or a file:// URL in any letter case.
func Plain(p string) error {
	if strings.ContainsRune(p, 0) || len(p) >= 7 && strings.EqualFold(p[:7], "file://") {
		return ErrNotPlain
	}
	return nil
}

// ExpandHome expands a leading "~" or "~/" with home; "~user" forms are
// left alone, a relative name like any other. An empty home expands
// nothing.
func ExpandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// Abs returns the path a tool parameter names as an absolute path: "~"
// expanded with home, a relative path taken from root. Its ".." are left
// for Resolve, which applies them as the kernel does, after the links
// before them: "link/../x" is beside the link's target, not in the
// workspace.
func Abs(root, home, p string) (string, error) {
	if err := Plain(p); err != nil {
		return "", err
	}
	p = ExpandHome(p, home)
	if !filepath.IsAbs(p) {
		p = root + string(filepath.Separator) + p
	}
	return p, nil
}

// Within reports whether p is root or below it; root itself counts only
// when self is true (for writes and commands the workspace itself is
// outside). Both paths must be clean and absolute ("/w" never holds
// "/w_evil"); an empty or relative root holds nothing.
func Within(root, p string, self bool) bool {
	if !filepath.IsAbs(root) {
		return false
	}
	if p == root {
		return self
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// Rel returns what p holds beneath root ("." for root itself), both clean
// and absolute; ok is false when p is not within root.
func Rel(root, p string) (rel string, ok bool) {
	if !Within(root, p, true) {
		return "", false
	}
	if p == root {
		return ".", true
	}
	return strings.TrimPrefix(p[len(root):], string(filepath.Separator)), true
}

// FS is what Resolve reads a path's components from: the machine's files
// (OS), or a plugin's os.Root confinement.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// NoLinksFS is an FS that can also answer, in one look, for a path with
// no symlink on it: Resolve asks it first, and walks the path component by
// component only when it cannot answer.
type NoLinksFS interface {
	FS
	// LstatNoLinks is Lstat of the absolute, clean name when no component
	// of name is a symlink, the last included; ok is false otherwise, or
	// when it cannot tell.
	LstatNoLinks(name string) (fi fs.FileInfo, ok bool)
}

// OS is the machine's file system, read through localstat: raw system
// calls where the path's mounts are local, so that a call's guard leaves
// the runtime's monitor thread asleep.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return localstat.Lstat(name) }
func (osFS) Readlink(name string) (string, error)   { return localstat.Readlink(name) }
func (osFS) LstatNoLinks(name string) (fs.FileInfo, bool) {
	return localstat.LstatNoLinks(name)
}

// View maps a path as the session's commands name it to where the file
// is on disk: a session's own temp folder bound over /tmp (sdk.TempFolder)
// is one. A nil View maps nothing.
type View interface {
	Map(p string) (disk string, mapped bool)
}

// Resolved is where Resolve's walk ended.
type Resolved struct {
	// Path is the resolved path as the session names it, its components
	// past the first missing one joined as named.
	Path string
	// Disk is Path where it is on disk (View.Map).
	Disk string
	// Exists says every component of Path exists.
	Exists bool
	// Info is the last component's Lstat (never a symlink) when Exists.
	Info fs.FileInfo
	// Via are the symlinks passed through, as the session names them.
	Via []string
}

// A StopError says a component could not be read for another reason than
// its absence (permission, not a folder, outside an os.Root): the
// Resolved returned with it joins the rest as named, which is where the
// kernel would fail too.
type StopError struct {
	At  string // the component, as the session names it
	Err error
}

func (e *StopError) Error() string { return fmt.Sprintf("%s: %v", e.At, e.Err) }
func (e *StopError) Unwrap() error { return e.Err }

// Resolve resolves the absolute path p as the kernel would: each
// component in turn from "/", following symlinks (a relative target from
// the link's folder, chains up to MaxLinks), ".." applied to the real
// parent, never lexically after a link. From the first component that
// does not exist on, the rest is joined as named, so a file not created
// yet is judged by its nearest existing ancestor and a dangling symlink
// by where it points.
//
// The walk goes in view's names (a symlink to /tmp/x leads into the
// session's temp folder, ".." above /tmp is "/"), each component read
// from where it is on disk. Every caller that judges or opens a path a
// model gave resolves it here, so the path the guard judged is the path
// a plugin opens.
func Resolve(fsys FS, p string, view View) (Resolved, error) {
	if !filepath.IsAbs(p) {
		return Resolved{}, fmt.Errorf("path %q is not absolute", p)
	}
	mapOf := func(v string) string {
		if view == nil {
			return v
		}
		d, _ := view.Map(v)
		return d
	}
	if nl, ok := fsys.(NoLinksFS); ok && p != string(filepath.Separator) && filepath.Clean(p) == p && unmapped(view, p) {
		// With no symlink on the way, the walk would read each component
		// as named and end on p: one look answers for all of them.
		if fi, ok := nl.LstatNoLinks(p); ok {
			return Resolved{Path: p, Disk: p, Exists: true, Info: fi}, nil
		}
	}
	todo := split(p)
	cur := string(filepath.Separator)
	var last fs.FileInfo
	var via []string
	hops := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if last != nil && !last.IsDir() {
			// Only a folder has ".", ".." or entries: f.txt/.. and f.txt/
			// fail as the kernel fails them.
			rest := filepath.Join(append([]string{cur, name}, todo...)...)
			return Resolved{Path: rest, Disk: mapOf(rest), Via: via}, &StopError{At: cur, Err: syscall.ENOTDIR}
		}
		switch name {
		case ".", "":
			continue
		case "..":
			cur, last = filepath.Dir(cur), nil
			continue
		}
		next := filepath.Join(cur, name)
		disk := mapOf(next)
		fi, err := fsys.Lstat(disk)
		if err != nil {
			rest := filepath.Join(append([]string{next}, todo...)...)
			r := Resolved{Path: rest, Disk: mapOf(rest), Via: via}
			if errors.Is(err, fs.ErrNotExist) {
				return r, nil
			}
			return r, &StopError{At: next, Err: err}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur, last = next, fi
			continue
		}
		hops++
		if hops > MaxLinks {
			return Resolved{}, fmt.Errorf("resolve %s: %w", p, ErrLoop)
		}
		target, err := fsys.Readlink(disk)
		if err != nil {
			return Resolved{}, fmt.Errorf("resolve %s: %w", p, err)
		}
		via = append(via, next)
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(split(target), todo...)
	}
	if last == nil && cur != string(filepath.Separator) {
		// Reached by "..": read what it is.
		fi, err := fsys.Lstat(mapOf(cur))
		if err != nil {
			return Resolved{Path: cur, Disk: mapOf(cur), Via: via}, &StopError{At: cur, Err: err}
		}
		last = fi
	}
	return Resolved{Path: cur, Disk: mapOf(cur), Exists: true, Info: last, Via: via}, nil
}

// unmapped reports whether view maps neither p nor any folder above it: p
// is then on disk where it is named, and so is every component of it.
func unmapped(view View, p string) bool {
	if view == nil {
		return true
	}
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != filepath.Separator {
			continue
		}
		if d, mapped := view.Map(p[:i]); mapped || d != p[:i] {
			return false
		}
	}
	return true
}

// ResolvePath is Resolve on the machine's files with no view, for paths
// that are not a model's (a profile's folders, the sandbox's rules): p
// made absolute, its symlinks and ".." resolved; a path that cannot be
// resolved (a loop) is returned as given, made absolute.
func ResolvePath(p string) string {
	abs := p
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(p)
		}
		abs = wd + string(filepath.Separator) + p
	}
	r, err := Resolve(OS, abs, nil)
	var stop *StopError
	if err != nil && !errors.As(err, &stop) {
		return abs
	}
	return r.Path
}

// Existing resolves the absolute path p on the machine's files when it
// exists: ok is false when p is not absolute, or a component is missing
// or cannot be read.
func Existing(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	r, err := Resolve(OS, p, nil)
	if err != nil || !r.Exists {
		return "", false
	}
	return r.Path, true
}

func split(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}
