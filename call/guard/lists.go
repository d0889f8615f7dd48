package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
)

// safeSystemPaths returns the absolute paths a command may name without
// asking: the rows of policy's system path table marked NoAsk (devices by
// their exact name: /dev/stdout is a symlink into /proc; folders with
// everything below them) and $TMPDIR.
func safeSystemPaths(tmpdir string) (devices, dirs []string) {
	for _, p := range policy.SystemPaths() {
		switch {
		case !p.NoAsk:
		case p.Tree:
			dirs = append(dirs, p.Path)
		default:
			devices = append(devices, p.Path)
		}
	}
	if filepath.IsAbs(tmpdir) && filepath.Clean(tmpdir) != "/" {
		dirs = append(dirs, filepath.Clean(tmpdir))
	}
	return devices, dirs
}

// safeList is the resolved safe system paths.
type safeList struct {
	devices []string
	// dirs holds each folder as named and, when it is a symlink (/bin on a
	// merged-/usr system), where it leads.
	dirs []string
}

func newSafeList() safeList {
	devices, dirs := safeSystemPaths(os.Getenv("TMPDIR"))
	s := safeList{devices: devices}
	for _, d := range dirs {
		s.dirs = append(s.dirs, d)
		if r, err := resolvePhysical(d); err == nil && r != d {
			s.dirs = append(s.dirs, r)
		}
	}
	return s
}

// device reports whether clean, as named, is one of the safe devices.
func (s safeList) device(clean string) bool { return slices.Contains(s.devices, clean) }

// holds reports whether the resolved path r is a safe folder or below one.
func (s safeList) holds(r string) bool {
	return slices.ContainsFunc(s.dirs, func(d string) bool { return policy.Within(d, r, true) })
}

// readRoots are the folders outside the workspace a read may reach without
// asking, resolved once: the main checkout of a git worktree, the profile's
// skill folders and read_paths. The workspace itself, and the paths the
// user approved in the session, join them per call (readWhitelist).
//
// A configured folder named inside the workspace that resolves outside it
// (a .yagent/skills symlink the repository ships) is workspace content, not
// policy: it is dropped, and a warning names it.
func readRoots(ws, home string, prof *policy.Rules) (roots, warnings []string) {
	if m := worktreeMain(ws, home); m != "" {
		roots = append(roots, m)
	}
	if prof != nil {
		for _, l := range []struct {
			key  string
			dirs []string
		}{{"skill_dirs", prof.SkillDirs}, {"read_paths", prof.ReadPaths}} {
			for _, d := range l.dirs {
				named := policy.ExpandHome(d, home)
				if !filepath.IsAbs(named) {
					named = filepath.Join(ws, named)
				}
				named = filepath.Clean(named)
				r := resolveRoot(named)
				if policy.Within(ws, named, true) && !policy.Within(ws, r, true) {
					warnings = append(warnings, fmt.Sprintf("%s entry %s is in the workspace but leads outside it, to %s: ignored, the workspace cannot widen what is read without asking; name %s itself in the user's profile to allow it", l.key, named, r, r))
					continue
				}
				roots = append(roots, r)
			}
		}
	}
	slices.Sort(roots)
	return slices.Compact(roots), warnings
}

// readWhitelist is every root a read of sess may reach without asking.
func (g *WorkspaceGuard) readWhitelist(sess *session.Session) []string {
	out := append([]string{g.ws}, g.readRoots...)
	if sess != nil {
		out = append(out, sess.ApprovedPaths()...)
	}
	return out
}
