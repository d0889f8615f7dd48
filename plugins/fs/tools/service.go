package tools

import (
	"context"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/yagent/yagent/plugins/fs/internal/atomicfile"
	"github.com/yagent/yagent/plugins/fs/internal/wsroot"
	"github.com/yagent/yagent/sdk"
)

// lockStripes is how many locks serialize calls on one path; two paths
// share a lock only when their FNV hashes collide modulo this number.
const lockStripes = 64

// maxSweepDirs bounds the folders swept on the first call for a workspace.
const maxSweepDirs = 2000

// beforeRenameHook, when set, runs in every write and edit after the new
// bytes are in their temp file and before the check that the file is still
// as read and the rename over it. It is the seam tests use to change a file
// "behind the edit's back". Set it only from tests that do not run in
// parallel, and reset it when done.
var beforeRenameHook func(ctx context.Context, absPath string)

// Service serves the fs tools. It is safe for concurrent use; one Service
// serves every session of a plugin process.
type Service struct {
	locks  [lockStripes]sync.Mutex
	states *stateCache
	roots  wsroot.Roots // each workspace's root, kept from call to call

	mu         sync.Mutex
	sweptTrees map[string]bool // workspaces swept on their first call
	sweptDirs  map[string]bool // folders swept before their first write
}

// New returns a Service with empty state.
func New() *Service {
	return &Service{
		states:     newStateCache(maxStates),
		sweptTrees: map[string]bool{},
		sweptDirs:  map[string]bool{},
	}
}

// EndSession forgets what session id read and wrote: a later session that
// reuses the id starts with no file marked as read. It is the plugin's
// OnSessionEnd.
func (s *Service) EndSession(_ context.Context, id string) error {
	s.states.dropSession(id)
	return nil
}

// Tools returns the fs tools, sorted by name.
func (s *Service) Tools() []sdk.Tool {
	return []sdk.Tool{
		validUTF8{s.listDirTool()},
		validUTF8{s.multiEditTool()},
		validUTF8{s.readFileTool()},
		validUTF8{s.searchReplaceTool()},
		validUTF8{s.writeFileTool()},
	}
}

// call is the state of one tool call on one path.
type call struct {
	info   sdk.CallInfo
	res    *wsroot.Resolver
	target wsroot.Target // the path, resolved
	shown  string        // the path as results name it
}

func (c *call) close() { _ = c.res.Close() }

// begin opens the call's roots, on the first call for a workspace sweeps
// it of temp files left by a killed write, and resolves path. The caller
// closes the call it returns.
func (s *Service) begin(ctx context.Context, path string) (*call, error) {
	info := sdk.CallFrom(ctx)
	res, err := s.roots.New(info.Workspace, info.ApprovedPaths)
	if err != nil {
		return nil, err
	}
	res.SetTemp(info.Temp)
	s.sweepWorkspace(ctx, res)
	t, err := res.Resolve(path)
	if err != nil {
		_ = res.Close()
		return nil, err
	}
	return &call{info: info, res: res, target: t, shown: shownPath(ctx, path)}, nil
}

func (s *Service) sweepWorkspace(ctx context.Context, res *wsroot.Resolver) {
	ws, root := res.Workspace()
	s.mu.Lock()
	done := s.sweptTrees[ws]
	s.sweptTrees[ws] = true
	s.mu.Unlock()
	if !done {
		_, _ = atomicfile.SweepTree(ctx, root, ".", maxSweepDirs)
	}
}

// sweepDir sweeps the folder of t once per process, before the first write
// into it, so a leftover from a killed write there never outlives the next.
func (s *Service) sweepDir(t wsroot.Target) {
	dir := filepath.Dir(t.Abs)
	s.mu.Lock()
	done := s.sweptDirs[dir]
	s.sweptDirs[dir] = true
	s.mu.Unlock()
	if !done {
		_, _ = atomicfile.Sweep(t.Root, filepath.Dir(t.Rel))
	}
}

// lock takes the stripe locks of paths in ascending stripe order (so two
// calls never wait on each other crosswise) and returns the unlock.
func (s *Service) lock(paths ...string) func() {
	idx := make([]int, 0, len(paths))
	for _, p := range paths {
		h := fnv.New32a()
		_, _ = h.Write([]byte(p))
		idx = append(idx, int(h.Sum32()%lockStripes))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for _, i := range slices.Backward(idx) {
			s.locks[i].Unlock()
		}
	}
}

// errConflict builds the write_conflict error.
func errConflict(path, reason string) error {
	return sdk.Errorf(sdk.CodeWriteConflict, "%s: %s. Read it again (read_file) and redo the change on its current content.", path, reason)
}

// shownPath is how a path argument appears in messages and results. The
// host sends every path absolute and resolved; inside the workspace it is
// shown relative to it, as the model names its files, and in the session's
// temp folder as its commands name it (/tmp/a).
func shownPath(ctx context.Context, p string) string {
	info := sdk.CallFrom(ctx)
	ws := info.Workspace
	if ws == "" || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(filepath.Clean(ws), p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return info.Temp.Shown(p)
	}
	return filepath.ToSlash(rel)
}
