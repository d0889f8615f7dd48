package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/sdk"
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
// component by component (see resolvePhysical), as the session's commands
// see the files: a path under a temp folder its own temp folder stands for
// names a file in it (see resolveIn).
func resolveArg(root, home, p string, temp *sdk.TempFolder) (string, error) {
	if err := plain(p); err != nil {
		return "", err
	}
	p = expandHome(p, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return resolveIn(filepath.Clean(p), temp)
}

// resolvePhysical resolves the absolute path p as the kernel would: each
// component in turn, following symlinks (relative targets from the link's
// folder, chains, ".." applied to the real parent). From the first
// component that does not exist on, the rest is joined as named, so a file
// not created yet is judged by its nearest existing ancestor, and a dangling
// symlink by where it points.
func resolvePhysical(p string) (string, error) {
	return resolveIn(p, nil)
}

// resolveIn is resolvePhysical in the session's view of the files, where
// its temp folder stands for /tmp, /var/tmp or /dev/shm (temp.Over): the
// walk goes as the kernel walks it in the session's mount namespace (a
// symlink to /tmp/x leads into the temp folder, ".." above /tmp is "/"),
// each component read from where it is on disk (temp.Map), and the path
// it ends at is returned as it is on disk, in the temp folder. Nothing
// under one of those folders reaches the machine's own.
func resolveIn(p string, temp *sdk.TempFolder) (string, error) {
	v, err := resolveView(p, temp)
	if err != nil {
		return "", err
	}
	r, _ := temp.Map(v)
	return r, nil
}

// resolveView is resolveIn's walk, its end as the session names it (under
// /tmp, not in the temp folder).
func resolveView(p string, temp *sdk.TempFolder) (string, error) {
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
		disk, _ := temp.Map(next)
		fi, err := os.Lstat(disk)
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
		target, err := os.Readlink(disk)
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

// worktreeMain returns the main checkout of the git worktree holding ws,
// "" when there is none to trust. Everything it reads may have been
// shipped by the repository or written by the model, so it is data, never
// policy: the main checkout counts only when its own
// .git/worktrees/<name>/gitdir points back at the ".git" file found (at ws
// or above it), and it is never / or a folder holding the home folder.
func worktreeMain(ws, home string) string {
	for dir := ws; ; dir = filepath.Dir(dir) {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil {
			if !fi.Mode().IsRegular() {
				return "" // a main checkout itself, or something odd
			}
			return mainOfGitFile(dir, dotgit, home)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

// mainOfGitFile follows the worktree file dotgit ("gitdir: <dir>") to its
// main checkout, which git records as <dir>/commondir, and checks the
// pointer back that git keeps in the main repository.
func mainOfGitFile(dir, dotgit, home string) string {
	gitdir, ok := gitPointer(dotgit, "gitdir:")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	gitdir = resolveRoot(gitdir)
	common, ok := gitPointer(filepath.Join(gitdir, "commondir"), "")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	common = resolveRoot(common)
	if filepath.Base(common) != ".git" {
		return "" // a bare repository has no checkout to read
	}
	// git keeps a linked worktree's folder at <common>/worktrees/<name>,
	// whose gitdir file names the worktree's .git file.
	if filepath.Dir(gitdir) != filepath.Join(common, "worktrees") {
		return ""
	}
	back, ok := gitPointer(filepath.Join(gitdir, "gitdir"), "")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(back) {
		back = filepath.Join(gitdir, back)
	}
	if resolveRoot(back) != resolveRoot(dotgit) {
		return ""
	}
	main := filepath.Dir(common)
	if !mayBeMain(main, home) {
		return ""
	}
	return main
}

// mayBeMain reports whether main may be a worktree's main checkout, a read
// root: never / and never the home folder or a folder holding it.
func mayBeMain(main, home string) bool {
	if main == string(filepath.Separator) {
		return false
	}
	return home == "" || !within(main, resolveRoot(home), true)
}

// gitPointer reads the first line of one of git's small pointer files,
// without the prefix when one is given; ok is false when the file is
// missing, too big to be one, or lacks the prefix.
func gitPointer(file, prefix string) (string, bool) {
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if prefix != "" {
		if line, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(line), strings.TrimSpace(line) != ""
		}
		return "", false
	}
	return line, line != ""
}
