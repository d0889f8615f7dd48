package guard

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// resolveArg resolves a path a tool parameter names as the fs plugin
// does, by the same code (policy.Abs, then policy.Resolve): "~" expanded,
// relative to root, cleaned, then its symlinks followed component by
// component, as the session's commands see the files: a path under a
// temp folder its own temp folder stands for names a file in it.
func resolveArg(root, home, p string, temp *sdk.TempFolder) (string, error) {
	abs, err := policy.Abs(root, home, p)
	if err != nil {
		return "", err
	}
	return resolveIn(abs, temp)
}

// resolvePhysical resolves the absolute path p on the machine's files
// (policy.Resolve with no view).
func resolvePhysical(p string) (string, error) {
	return resolveIn(p, nil)
}

// resolveIn is policy.Resolve in the session's view of the files, where
// its temp folder stands for /tmp, /var/tmp or /dev/shm (temp.Over); the
// path it ends at is returned as it is on disk, in the temp folder. A
// component that cannot be read (permission) is judged by its name,
// which is where the kernel would fail too.
func resolveIn(p string, temp *sdk.TempFolder) (string, error) {
	r, err := resolveView(p, temp)
	if err != nil {
		return "", err
	}
	d, _ := temp.Map(r)
	return d, nil
}

// resolveView is resolveIn's walk, its end as the session names it (under
// /tmp, not in the temp folder).
func resolveView(p string, temp *sdk.TempFolder) (string, error) {
	var view policy.View
	if temp != nil {
		view = temp
	}
	r, err := policy.Resolve(policy.OS, p, view)
	var stop *policy.StopError
	if err != nil && !errors.As(err, &stop) {
		return "", err
	}
	return r.Path, nil
}

// userHome returns the home folder of the named user, "" when unknown.
func userHome(name string) string {
	u, err := user.Lookup(name)
	if err != nil {
		return ""
	}
	return u.HomeDir
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
	return home == "" || !policy.Within(main, resolveRoot(home), true)
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
