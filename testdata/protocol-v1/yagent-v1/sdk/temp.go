package sdk

import (
	"path/filepath"
	"slices"

	"github.com/yagent/yagent/policy"
)

// TempFolder is a session's own temp folder, which the host makes (mode
// 0700, outside the workspace, under a folder no command of another
// session can reach) and removes once the session and its last
// is_background command have ended.
//
// Where the session's commands run in a mount namespace of their own (the
// kernel sandbox on, with mount namespaces here), Dir is bound over the
// machine's temp folders listed in Over: a command sees Dir at /tmp,
// /var/tmp and /dev/shm, and the machine's own folders there not at all.
// A path under one of them that a tool is given names a file in Dir, for
// the file tools as for commands: the host resolves it so (Map) before it
// judges it, and sends the plugin the path in Dir. Elsewhere (the sandbox
// off, no mount namespace) Over is empty: /tmp is the machine's, as every
// command sees it, and Dir is only the commands' TMPDIR.
type TempFolder struct {
	// Dir is the folder: absolute, resolved.
	Dir string
	// Over are the temp folders of TempRoots that name Dir for this
	// session's commands and tools, in TempRoots' order; a temp folder
	// holding the workspace, the home folder or a root the profile grants
	// is left out (the bind would hide them).
	Over []string
}

// tempRoots are the machine's temp folders a session's temp folder may
// stand for, in the order Shown prefers them.
var tempRoots = []string{"/tmp", "/var/tmp", "/dev/shm"}

// TempRoots returns the machine's temp folders a session's temp folder may
// stand for: /tmp, /var/tmp and /dev/shm.
func TempRoots() []string { return slices.Clone(tempRoots) }

// Map returns the path p names for the session: p is absolute and clean,
// as the session's commands see it; when it is one of Over or beneath it,
// the path in Dir it names and true, else p and false. It is the one
// mapping the host's guard and the plugins apply (to a path a tool is
// given, and to the absolute target of a symlink met while resolving one),
// so a file tool reaches the file a command wrote at the same name. A nil
// TempFolder maps nothing.
func (t *TempFolder) Map(p string) (string, bool) {
	if t == nil || t.Dir == "" {
		return p, false
	}
	for _, o := range t.Over {
		if rest, ok := cutRoot(p, o); ok {
			return filepath.Join(t.Dir, rest), true
		}
	}
	return p, false
}

// Shown returns how the session's commands name p, a path in Dir: the
// first of Over joined with the rest (Dir/a is /tmp/a), so a result names
// a file as the model's commands would. Any other path, or every path when
// Over is empty, is returned as it is.
func (t *TempFolder) Shown(p string) string {
	if t == nil || t.Dir == "" || len(t.Over) == 0 {
		return p
	}
	if rest, ok := cutRoot(p, t.Dir); ok {
		return filepath.Join(t.Over[0], rest)
	}
	return p
}

// Holds reports whether p, a resolved absolute path, is Dir or beneath it.
func (t *TempFolder) Holds(p string) bool {
	if t == nil || t.Dir == "" {
		return false
	}
	_, ok := cutRoot(p, t.Dir)
	return ok
}

// TMPDIR is the value of TMPDIR for the session's commands: /tmp when Dir
// is bound over it, else Dir itself.
func (t *TempFolder) TMPDIR() string {
	if t == nil {
		return ""
	}
	if slices.Contains(t.Over, "/tmp") {
		return "/tmp"
	}
	return t.Dir
}

// cutRoot returns what p holds beneath root ("" for root itself), both
// clean and absolute.
func cutRoot(p, root string) (string, bool) {
	rel, ok := policy.Rel(root, p)
	if rel == "." {
		rel = ""
	}
	return rel, ok
}
