package wsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

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

	raw *rawDir // Root's folder for raw calls (the kept workspace's), or nil
}

// File is a file a Target opened for reading: an *os.File, or one read by
// raw system calls.
type File interface {
	io.ReadSeekCloser
	Stat() (fs.FileInfo, error)
}

// OpenRead opens the target for reading, as Root.OpenFile(Rel, flags)
// does; flags must not ask to write or create.
func (t Target) OpenRead(flags int) (File, error) {
	if f, ok := t.raw.openRead(t.Rel, t.Abs, flags); ok {
		return f, nil
	}
	f, err := t.Root.OpenFile(t.Rel, flags, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Resolver resolves paths for one call and owns the roots it opens.
type Resolver struct {
	workspace  string
	wsReal     string
	approved   []string
	temp       *sdk.TempFolder
	roots      map[string]*os.Root
	workspaceR *os.Root
	raw        *rawDir // the workspace's folder for raw calls, or nil
	// release, when set, gives a kept workspace root back to its Roots
	// instead of closing it.
	release func()
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
// absolute; "~/" is the home folder. It resolves by the code the host's
// guard judged the path with (policy.Abs, policy.Resolve), reading each
// component through the os.Root of the folder that holds it, so no walk
// leaves the workspace, the session's temp folder or an approved path.
// Failures are *sdk.ToolError.
func (r *Resolver) Resolve(path string) (Target, error) {
	if path == "" {
		return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path is empty: give a file path relative to the workspace or absolute")
	}
	home, _ := os.UserHomeDir()
	abs, err := policy.Abs(r.workspace, home, path)
	if err != nil {
		return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path %q: %v", path, err)
	}
	// The host sent the path as it is on disk; the walk goes in the
	// session's names, as the guard's did.
	var view policy.View
	if r.temp != nil {
		view = r.temp
	}
	res, err := policy.Resolve(rootFS{r}, r.temp.Shown(abs), view)
	var stop *policy.StopError
	switch {
	case errors.Is(err, policy.ErrLoop):
		return Target{}, sdk.Errorf(sdk.CodeInvalidInput, "path %q passes through more than %d symlinks", path, policy.MaxLinks)
	case errors.As(err, &stop) && errors.Is(stop.Err, errOutside):
		return Target{}, r.outside(path, res)
	case err != nil:
		return Target{}, describe(path, err)
	}
	via := make([]string, len(res.Via))
	for i, v := range res.Via {
		via[i], _ = r.temp.Map(v)
	}
	rootDir, rel, external, ok := r.locate(res.Disk)
	if !ok {
		return Target{}, r.outside(path, res)
	}
	root, err := r.root(rootDir)
	if err != nil {
		return Target{}, err
	}
	t := Target{Root: root, RootDir: rootDir, Rel: rel, Abs: filepath.Join(rootDir, rel), Exists: res.Exists, External: external, Via: via}
	if rootDir == r.workspace {
		t.raw = r.raw
	}
	if res.Exists && rel != "." {
		t.Info = res.Info
	}
	return t, nil
}

// outside is the error for a path whose walk left every root of the call.
func (r *Resolver) outside(asked string, res policy.Resolved) error {
	if len(res.Via) > 0 {
		return sdk.Errorf(sdk.CodeNeedsAuth,
			"path %q leads outside the workspace through the symlink %s (to %s), which was not approved for this call: edit the target by a path the user approved, or ask the user",
			asked, res.Via[len(res.Via)-1], res.Path)
	}
	return sdk.Errorf(sdk.CodeNeedsAuth,
		"path %q is outside the workspace (%s) and was not approved for this call: use a path inside the workspace, or ask the user to approve this one",
		asked, r.workspace)
}

// errOutside is rootFS's answer for a name no root of the call holds.
var errOutside = errors.New("outside the folders of the call")

// rootFS is the call's files as policy.Resolve reads them: a name in the
// workspace, the temp folder or an approved path is read through the
// os.Root of its folder; a folder above one of those is taken as the
// folder it is named (the root was opened by that name); anything else is
// errOutside.
type rootFS struct{ r *Resolver }

func (f rootFS) Lstat(name string) (fs.FileInfo, error) {
	rootDir, rel, _, ok := f.r.locate(name)
	if !ok {
		if f.r.holdsRoot(name) {
			return dirInfo(filepath.Base(name)), nil
		}
		return nil, errOutside
	}
	if rootDir == f.r.workspace {
		if fi, ok := f.r.raw.lstat(rel); ok {
			return fi, nil
		}
	}
	root, err := f.r.root(rootDir)
	if err != nil {
		return nil, err
	}
	return root.Lstat(rel)
}

// LstatNoLinks answers for a name in the workspace in one raw
// resolution beneath its folder, which refuses a symlink anywhere on the
// way (rawDir): the walk would take the folders above the workspace as
// named and read each component beneath it from the same root.
func (f rootFS) LstatNoLinks(name string) (fs.FileInfo, bool) {
	rootDir, rel, _, ok := f.r.locate(name)
	if !ok || rootDir != f.r.workspace {
		return nil, false
	}
	fi, ok := f.r.raw.lstat(rel)
	if !ok || fi.Mode()&fs.ModeSymlink != 0 {
		return nil, false
	}
	return fi, true
}

func (f rootFS) Readlink(name string) (string, error) {
	rootDir, rel, _, ok := f.r.locate(name)
	if !ok {
		return "", errOutside
	}
	root, err := f.r.root(rootDir)
	if err != nil {
		return "", err
	}
	return root.Readlink(rel)
}

// holdsRoot reports whether name is a folder above a root of the call,
// or above a folder the session's temp folder stands for (/var above
// /var/tmp).
func (r *Resolver) holdsRoot(name string) bool {
	roots := []string{r.workspace, r.wsReal}
	if r.temp != nil {
		roots = append(append(roots, r.temp.Dir), r.temp.Over...)
	}
	roots = append(roots, r.approved...)
	for _, root := range roots {
		if policy.Within(name, root, false) {
			return true
		}
	}
	return false
}

// dirInfo is the fs.FileInfo of a folder above a root of the call.
type dirInfo string

func (d dirInfo) Name() string       { return string(d) }
func (d dirInfo) Size() int64        { return 0 }
func (d dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (d dirInfo) ModTime() time.Time { return time.Time{} }
func (d dirInfo) IsDir() bool        { return true }
func (d dirInfo) Sys() any           { return nil }

// locate finds the root a clean absolute path belongs to: the workspace
// (named as given or with its symlinks resolved), else the session's temp
// folder, else the parent folder of the approved path that holds it.
func (r *Resolver) locate(abs string) (rootDir, rel string, external, ok bool) {
	for _, ws := range []string{r.workspace, r.wsReal} {
		if rel, ok := policy.Rel(ws, abs); ok {
			return r.workspace, rel, false, true
		}
	}
	if r.temp != nil {
		if rel, ok := policy.Rel(r.temp.Dir, abs); ok {
			return r.temp.Dir, rel, true, true
		}
	}
	for _, a := range r.approved {
		if policy.Within(a, abs, true) {
			dir := filepath.Dir(a)
			rel, _ := policy.Rel(dir, abs)
			return dir, rel, true, true
		}
	}
	return "", "", false, false
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
