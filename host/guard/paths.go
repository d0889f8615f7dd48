package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symlinks one path may pass through, like the kernel's
// ELOOP limit.
const maxLinks = 40

var (
	errNotPlain = errors.New("NUL bytes and file:// URLs are refused: give a plain file path")
	errLoop     = errors.New("too many levels of symbolic links")
)

// plain reports why p cannot be judged as a path, nil when it can.
func plain(p string) error {
	if strings.ContainsRune(p, 0) || hasFileScheme(p) {
		return errNotPlain
	}
	return nil
}

func hasFileScheme(p string) bool {
	return len(p) >= 7 && strings.EqualFold(p[:7], "file://")
}

// expandHome expands a leading "~" or "~/" with home; "~user" forms are
// left alone (a tool takes them as a relative name, as the fs plugin does).
func expandHome(p, home string) string {
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

// userHome returns the home folder of the named user, "" when unknown.
func userHome(name string) string {
	u, err := user.Lookup(name)
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// resolveArg resolves a path a tool parameter names the way the fs plugin
// will: "~" expanded, relative to root, cleaned, then its symlinks followed
// component by component (see resolvePhysical).
func resolveArg(root, home, p string) (string, error) {
	if err := plain(p); err != nil {
		return "", err
	}
	p = expandHome(p, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return resolvePhysical(filepath.Clean(p))
}

// resolvePhysical resolves the absolute path p as the kernel would: each
// component in turn, following symlinks (relative targets from the link's
// folder, chains, ".." applied to the real parent). From the first
// component that does not exist on, the rest is joined as named, so a file
// not created yet is judged by its nearest existing ancestor, and a dangling
// symlink by where it points.
func resolvePhysical(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	todo := splitPath(p)
	cur := string(filepath.Separator)
	hops := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".", "":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				// Nothing more on disk: the rest is joined as named.
				return filepath.Join(append([]string{next}, todo...)...), nil
			}
			// Unreadable (permission): judged by its name, which is
			// where the kernel would fail too.
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxLinks {
			return "", fmt.Errorf("resolve %s: %w", p, errLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(splitPath(target), todo...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// within reports whether p is root or below it; root itself counts only
// when self is true (for writes and commands the workspace itself is
// outside). Both paths must be clean and absolute: "/w" never holds "/w_evil".
func within(root, p string, self bool) bool {
	if p == root {
		return self
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// resolveRoot resolves a configured folder (the workspace, a read path, a
// skill folder): absolute, cleaned, symlinks followed.
func resolveRoot(dir string) string {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	r, err := resolvePhysical(abs)
	if err != nil {
		return abs
	}
	return r
}

// worktreeMain returns the main checkout of the git worktree holding ws:
// the nearest ".git" at or above ws is a file "gitdir: <dir>", and <dir>'s
// "commondir" names the main repository's .git folder, whose parent is the
// main checkout. "" when ws is not in a linked worktree.
func worktreeMain(ws string) string {
	for dir := ws; ; dir = filepath.Dir(dir) {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil {
			if fi.IsDir() || !fi.Mode().IsRegular() {
				return "" // a main checkout itself, or something odd
			}
			return mainOfGitFile(dir, dotgit)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

func mainOfGitFile(dir, dotgit string) string {
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	c, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	common = resolveRoot(common)
	if filepath.Base(common) != ".git" {
		return "" // a bare repository has no checkout to read
	}
	return filepath.Dir(common)
}
