package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/policy"
)

// pseudoRoots are the folders of the kernel's own filesystems: what is
// written there is not a file but a setting of the machine (a sysctl, a
// cgroup's members, a raw disk).
var pseudoRoots = []string{"/proc", "/sys", "/dev"}

// PseudoWhy says why an approval never opens a pseudo filesystem, for the
// question, the refusal and the note under a command's output alike.
const PseudoWhy = "approvals never open /proc, /sys, /dev or another kernel filesystem to writes (only the admin's sandbox.write can)"

// Unopened is a path an ask approved that the call's sandbox left closed,
// and why.
type Unopened struct {
	Path string
	Why  string
}

// JudgeGrant judges a path an ask approved for writing: the root its
// approval opens to reads and writes, which is the path itself when it
// exists, else its nearest existing folder (widened is then true); or why
// it opens nothing. The host calls it to say what an approval grants and
// to send only what it grants, the plugin again on the same path before it
// opens it, so both sides decide by this one function: path must be
// absolute and resolved, and a root that resolves elsewhere now (a symlink
// put on the way since the host judged it) opens nothing. homes are the
// home folders no approval opens whole.
func JudgeGrant(path string, homes []string) (root string, widened bool, why string) {
	if path == "" || !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return "", false, fmt.Sprintf("%q is not an absolute, clean path", path)
	}
	if w := KernelFS(path); w != "" {
		return "", false, fmt.Sprintf("%s is %s: %s", path, w, PseudoWhy)
	}
	root = path
	if _, ok := policy.Existing(path); !ok {
		root, widened = nearestExistingAsNamed(path), true
	}
	if r, ok := policy.Existing(root); !ok || r != root {
		return "", false, fmt.Sprintf("%s leads elsewhere through a symlink (to %s): approve the path it leads to", root, r)
	}
	if w := KernelFS(root); w != "" {
		return "", false, fmt.Sprintf("%s is %s: %s", root, w, PseudoWhy)
	}
	for _, h := range homes {
		if policy.Within(root, h, true) {
			what := "the home folder " + h
			if root != h {
				what = root + ", which holds the home folder " + h
			}
			return "", false, fmt.Sprintf("it would open %s, and its private files with it", what)
		}
	}
	if root == "/" {
		return "", false, "it would open the root folder"
	}
	if holdsPrivateEntries(root) {
		return "", false, fmt.Sprintf("it would open %s, which holds the private files of /etc", root)
	}
	return root, widened, ""
}

// JudgeReadGrant says why an approval of a read of path opens nothing,
// "" when it opens the path: a device beyond the few every command gets
// (a raw disk reads every file past the sandbox's rules). /proc and /sys
// are read by every command anyway.
func JudgeReadGrant(path string) string {
	clean := filepath.Clean(path)
	if !filepath.IsAbs(clean) {
		return fmt.Sprintf("%q is not an absolute path", path)
	}
	refused := fmt.Sprintf("%s is a device or holds devices: approvals never open devices beyond /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/tty and the terminals (only the admin's sandbox.read can)", clean)
	if rest, ok := strings.CutPrefix(clean, "/dev/"); ok {
		first, _, _ := strings.Cut(rest, "/")
		if seenDevice("/dev/"+first) || first == "stdin" || first == "stdout" || first == "stderr" || first == "fd" {
			return ""
		}
		return refused
	}
	if clean == "/dev" || clean == "/" {
		return refused
	}
	if fi, err := os.Stat(clean); err == nil && fi.Mode()&os.ModeDevice != 0 {
		return refused
	}
	return ""
}

// seenDevice reports whether the /dev entry dev is one every sandboxed
// command sees (policy's system path table).
func seenDevice(dev string) bool {
	return slices.ContainsFunc(policy.SystemPaths(), func(sp policy.SystemPath) bool {
		return sp.Path == dev && (sp.Sandbox == policy.SandboxDevice || sp.Sandbox == policy.SandboxDeviceRead)
	})
}

// nearestExistingAsNamed is the nearest existing ancestor of path, as
// named (not resolved).
func nearestExistingAsNamed(path string) string {
	for cur := filepath.Dir(path); ; cur = filepath.Dir(cur) {
		if _, ok := policy.Existing(cur); ok || cur == "/" {
			return cur
		}
	}
}

// KernelFS says which kernel filesystem path is on ("in /proc, a kernel
// filesystem"), "" when it is on none: by where it is (/proc, /sys, /dev)
// and, where the system says it, by the filesystem's type (a cgroup
// hierarchy or a procfs mounted elsewhere).
func KernelFS(path string) string {
	for _, r := range pseudoRoots {
		if policy.Within(r, path, true) {
			return "in " + r + ", a kernel filesystem"
		}
	}
	return kernelFSType(path)
}
