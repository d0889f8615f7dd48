package guard

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
)

// What an approval grants. A command's approval lets its sandbox write the
// paths the command writes and read the others (Decision.Writes); each
// write is judged by sandbox.JudgeGrant, the function the plugin judges it
// by again before it opens it, so the question says what the sandbox will
// open. No approval opens a kernel filesystem (/proc, /sys, /dev: a
// sysctl, a cgroup's members, a raw disk) or yagent's own folders outside
// the workspace (where the host loads plugins, pins, caches and policy
// from): only the admin's sandbox.write opens the former, nothing the
// latter.

// ownFolder says why r is one of yagent's own folders, or holds one: the
// folders the host loads code or policy from (Options.Protected). "" when
// it is neither.
func (g *WorkspaceGuard) ownFolder(r string) string {
	for _, f := range g.own {
		if policy.Within(f, r, true) || policy.Within(r, f, true) {
			return fmt.Sprintf("%s is or holds %s, where yagent loads its plugins, pins, caches or policy from; nothing a call does may change them (the user runs yagent plugins pin, the admin edits the managed layer)", r, f)
		}
	}
	return ""
}

// adminWrites reports whether the profile's sandbox.write, the admin's
// word, covers r.
func (g *WorkspaceGuard) adminWrites(r string) bool {
	if g.sandbox == nil {
		return false
	}
	return slices.ContainsFunc(g.sandbox.Sandbox.Write, func(w string) bool { return policy.Within(filepath.Clean(w), r, true) })
}

// closedToWrites says why no approval lets a tool write r (resolved): one
// of yagent's own folders, or a kernel filesystem the admin's
// sandbox.write does not name. "" when an approval may.
func (g *WorkspaceGuard) closedToWrites(r string) string {
	if why := g.ownFolder(r); why != "" {
		return why
	}
	if w := sandbox.KernelFS(r); w != "" && !g.adminWrites(r) {
		return fmt.Sprintf("%s is %s: %s", r, w, sandbox.PseudoWhy)
	}
	return ""
}

// grantWrite says what approving a write of p (resolved) opens to the
// call's sandbox: root, which is p or, when p does not exist yet, its
// nearest folder (widened); or why it opens nothing.
func (g *WorkspaceGuard) grantWrite(p string) (root string, widened bool, why string) {
	if why := g.notGranted(p); why != "" {
		return "", false, why
	}
	root, widened, why = sandbox.JudgeGrant(p, g.homes)
	if why != "" {
		return "", false, why
	}
	if why := g.notGranted(root); why != "" {
		return "", false, why
	}
	return root, widened, ""
}

// grantRead says why approving a read of p opens nothing to the call's
// sandbox, "" when it opens p.
func (g *WorkspaceGuard) grantRead(p string) string {
	if why := g.notGranted(p); why != "" {
		return why
	}
	return sandbox.JudgeReadGrant(p)
}

// notGranted says why no approval opens p to a sandbox, whatever it does
// with it: "/", a home folder or a folder holding one, a folder holding
// the workspace, yagent's own folders. A command that names such a folder
// ($HOME, "..") was approved for that name, not for everything below it: a
// file the command needs there is approved by naming it.
func (g *WorkspaceGuard) notGranted(p string) string {
	p = filepath.Clean(p)
	switch {
	case p == "/":
		return "it would open the root folder"
	case policy.Within(p, g.home, true):
		return fmt.Sprintf("it would open %s, which is or holds the home folder", p)
	case policy.Within(p, g.ws, true) && p != g.ws:
		return fmt.Sprintf("it would open %s, which holds the workspace", p)
	}
	return g.ownFolder(p)
}

// grants returns what approving d opens to the call's sandbox: the
// paths it may write and those it may read; the others stay closed.
func (g *WorkspaceGuard) grants(d adapter.Decision) (write, read []string) {
	for _, p := range d.Paths {
		if slices.Contains(d.Writes, p) {
			if _, _, why := g.grantWrite(p); why == "" {
				write = append(write, p)
				continue
			}
		}
		if g.grantRead(p) == "" {
			read = append(read, p)
		}
	}
	return write, read
}

// grantText says, for the question, what approving d lets the command do
// under its sandbox, path by path.
func (g *WorkspaceGuard) grantText(d adapter.Decision) string {
	var write, create, read, closed []string
	for _, p := range d.Paths {
		if slices.Contains(d.Writes, p) {
			root, widened, why := g.grantWrite(p)
			switch {
			case why == "" && widened:
				create = append(create, fmt.Sprintf("%s (for %s, which does not exist yet)", root, p))
				continue
			case why == "":
				write = append(write, p)
				continue
			}
			if g.grantRead(p) == "" {
				read = append(read, p)
			}
			closed = append(closed, fmt.Sprintf("%s stays closed to writes: %s", p, why))
			continue
		}
		if why := g.grantRead(p); why != "" {
			closed = append(closed, fmt.Sprintf("%s stays closed: %s", p, why))
			continue
		}
		read = append(read, p)
	}
	var parts []string
	if len(write) > 0 {
		parts = append(parts, "write "+strings.Join(write, ", "))
	}
	if len(create) > 0 {
		parts = append(parts, "create and change files anywhere under "+strings.Join(create, ", "))
	}
	if len(read) > 0 {
		parts = append(parts, "read "+strings.Join(read, ", "))
	}
	text := ""
	if len(parts) > 0 {
		text = "approving it lets the command " + strings.Join(parts, "; ")
	}
	if len(closed) > 0 {
		if text != "" {
			text += "; "
		}
		text += strings.Join(closed, "; ")
	}
	return text
}
