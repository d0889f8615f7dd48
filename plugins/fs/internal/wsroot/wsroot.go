package wsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// maxLinks bounds how many symlinks one path may pass through.
const maxLinks = 40

// Target is a path resolved for one call.
type Target struct {
	// Root is the os.Root every operation on the path goes through.
	Root *os.Root
	// RootDir is the absolute folder Root was opened on.
	RootDir string
	// Rel is the path inside Root with every symlink resolved; "." is the
	// root itself. Components past the first missing one are kept as named.
	Rel string
	// Abs is RootDir joined with Rel: the canonical name of the file.
	Abs string
	// Exists says the whole path exists.
	Exists bool
	// Info is what the last component was when resolved (lstat, not a
	// symlink); nil for the root itself or a path that does not exist.
	Info fs.FileInfo
	// External says the path is outside the workspace, under an approved path.
	External bool
	// Via names the symlinks passed through, for messages.
	Via []string
}

// Resolver resolves paths for one call and owns the roots it opens.
type Resolver struct {
	workspace  string
	wsReal     string
	approved   []string
	temp       *sdk.TempFolder
	roots      map[string]*os.Root
	workspaceR *os.Root
	// release, when set, gives a kept workspace root back to its Roots
	// instead of closing it.
	release func()
}

// New returns a Resolver for a call whose workspace is the absolute folder
// workspace and whose approved external paths are approved. Close it when
// the call ends.
func New(workspace string, approved []string) (*Resolver, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return nil, fmt.Errorf("workspace root %q is not an absolute path", workspace)
	}
	ws := filepath.Clean(workspace)
	root, real, err := openWorkspace(ws)
	if err != nil {
		return nil, err
	}
	return newResolver(ws, real, approved, root), nil
}

// openWorkspace opens the workspace ws, clean and absolute, and names it
// with its symlinks resolved.
func openWorkspace(ws string) (root *os.Root, real string, err error) {
	real = ws
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		real = r
	}
	if root, err = os.OpenRoot(ws); err != nil {
		return nil, "", fmt.Errorf("open workspace: %w", err)
	}
	return root, real, nil
}

// newResolver returns a Resolver on the workspace ws, clean and absolute,
// opened as root; real is ws with its symlinks resolved.
func newResolver(ws, real string, approved []string, root *os.Root) *Resolver {
	r := &Resolver{workspace: ws, wsReal: real, roots: map[string]*os.Root{ws: root}, workspaceR: root}
	for _, a := range approved {
		if filepath.IsAbs(a) {
			r.approved = append(r.approved, filepath.Clean(a))
		}
	}
	return r
}

// SetTemp makes the session's own temp folder a root of the call, as the
// workspace is, and resolves the symlinks met on the way as the session's
// commands see them: a target under a temp folder it stands for is in it
// (sdk.TempFolder.Map), and ".." climbs from /tmp, not from the folder.
// The path Resolve is given is not mapped: the host sent it mapped.
func (r *Resolver) SetTemp(t *sdk.TempFolder) {
	if t != nil && filepath.IsAbs(t.Dir) {
		r.temp = t
	}
}

// Workspace returns the workspace folder and its os.Root.
func (r *Resolver) Workspace() (string, *os.Root) { return r.workspace, r.workspaceR }

// Close closes every root the Resolver opened; a kept workspace root goes
// back to its Roots.
func (r *Resolver) Close() error {
	var errs []error
	for _, root := range r.roots {
		if root == r.workspaceR && r.release != nil {
			continue
		}
		errs = append(errs, root.Close())
	}
	if r.release != nil {
		r.release()
		r.release = nil
	}
	return errors.Join(errs...)
}

// Resolve resolves the path a model gave: relative to the workspace, or
// absolute; "~/" is the home folder. Failures are *sdk.ToolError.
func (r *Resolver) Resolve(path string) (Target, error) {
	switch {
	case path == "":
		return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path is empty: give a file path relative to the workspace or absolute")
	case strings.ContainsRune(path, 0):
		return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path contains a NUL byte")
	case strings.HasPrefix(path, "file://"):
		return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path %q is a URL: give a plain file path", path)
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[1:])
		}
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.workspace, abs)
	}
	return r.resolveAbs(filepath.Clean(abs), path, 0, nil)
}

func (r *Resolver) resolveAbs(abs, asked string, hops int, via []string) (Target, error) {
	rootDir, rel, external, ok := r.locate(abs)
	if !ok {
		if len(via) > 0 {
			return Target{}, sdk.Errorf(sdk.CodeNeedsAuth,
				"path %q leads outside the workspace through the symlink %s (to %s), which was not approved for this call: edit the target by a path the user approved, or ask the user",
				asked, r.temp.Shown(via[len(via)-1]), r.temp.Shown(abs))
		}
		return Target{}, sdk.Errorf(sdk.CodeNeedsAuth,
			"path %q is outside the workspace (%s) and was not approved for this call: use a path inside the workspace, or ask the user to approve this one",
			asked, r.workspace)
	}
	root, err := r.root(rootDir)
	if err != nil {
		return Target{}, err
	}
	parts := splitRel(rel)
	var done []string
	var last fs.FileInfo
	for i, p := range parts {
		cur := filepath.Join(append(done, p)...)
		fi, err := root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			rest := filepath.Join(append(done, parts[i:]...)...)
			return Target{Root: root, RootDir: rootDir, Rel: rest, Abs: filepath.Join(rootDir, rest), External: external, Via: via}, nil
		}
		if err != nil {
			return Target{}, describe(asked, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if hops >= maxLinks {
				return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path %q passes through more than %d symlinks", asked, maxLinks)
			}
			link, err := root.Readlink(cur)
			if err != nil {
				return Target{}, describe(asked, err)
			}
			if !filepath.IsAbs(link) {
				// From the link's folder as the session names it.
				link = filepath.Join(r.temp.Shown(filepath.Join(rootDir, filepath.Dir(cur))), link)
			}
			next := filepath.Clean(filepath.Join(append([]string{link}, parts[i+1:]...)...))
			next, _ = r.temp.Map(next)
			return r.resolveAbs(next, asked, hops+1, append(via, filepath.Join(rootDir, cur)))
		}
		done = append(done, p)
		last = fi
	}
	rel = "."
	if len(done) > 0 {
		rel = filepath.Join(done...)
	}
	return Target{Root: root, RootDir: rootDir, Rel: rel, Abs: filepath.Join(rootDir, rel), Exists: true, Info: last, External: external, Via: via}, nil
}

// locate finds the root a clean absolute path belongs to: the workspace
// (named as given or with its symlinks resolved), else the session's temp
// folder, else the parent folder of the approved path that holds it.
func (r *Resolver) locate(abs string) (rootDir, rel string, external, ok bool) {
	for _, ws := range []string{r.workspace, r.wsReal} {
		if rel, ok := within(ws, abs); ok {
			return r.workspace, rel, false, true
		}
	}
	if r.temp != nil {
		if rel, ok := within(r.temp.Dir, abs); ok {
			return r.temp.Dir, rel, true, true
		}
	}
	for _, a := range r.approved {
		if _, ok := within(a, abs); ok {
			dir := filepath.Dir(a)
			rel, _ := within(dir, abs)
			return dir, rel, true, true
		}
	}
	return "", "", false, false
}

func within(base, abs string) (string, bool) {
	rel, err := filepath.Rel(base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, string(filepath.Separator))
}

func (r *Resolver) root(dir string) (*os.Root, error) {
	if root, ok := r.roots[dir]; ok {
		return root, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeNotFound, "cannot open folder %s: %v", dir, err)
	}
	r.roots[dir] = root
	return root, nil
}

// describe turns an fs error on a path into a message for the model.
func describe(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sdk.Errorf(sdk.CodeNotFound, "%s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return sdk.Errorf(sdk.CodeDenied, "%s: permission denied", path)
	case isNotDir(err):
		return sdk.Errorf(sdk.CodeInvalidInput, "%s: a component of the path is a file, not a folder", path)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Describe is describe for callers outside the package.
func Describe(path string, err error) error { return describe(path, err) }
