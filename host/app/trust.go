package app

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
)

// pluginWritable is the judgement pluginmgr.Options.Writable gets: whether
// a command of this profile, on this machine, could have written a plugin
// binary. The folders are computed on the first judgement, which a start
// whose plugins are all vouched for never makes.
func pluginWritable(ws string, prof *config.Profile, landlock bool, env []string, temps string) func(path string) string {
	return pluginmgr.WritableIn(func() []pluginmgr.WriteRoot { return commandWriteRoots(ws, prof, landlock, env, temps) })
}

// commandWriteRoots are the folders a command can write. With the sandbox
// on and Landlock here, what the sandbox's ruleset lets it write
// (sandbox.Policy.WriteRoots: the same rules the shell plugin applies):
// the workspace, /tmp, $TMPDIR, /dev/shm, the toolchain caches, the
// profile's sandbox.write, and the sessions' temp folders (under temps,
// "" for none). Otherwise nothing walls the files, and the folders a
// command writes without an ask stand for them: the workspace, /tmp,
// /var/tmp, $TMPDIR, /dev/shm and the sessions' temp folders. Each is
// listed as named and resolved.
func commandWriteRoots(ws string, prof *config.Profile, landlock bool, env []string, temps string) []pluginmgr.WriteRoot {
	tmpdir := lookupEnv(env, "TMPDIR")
	names := map[string]string{}
	name := func(path, as string) {
		for _, p := range []string{filepath.Clean(path), resolved(path)} {
			if _, ok := names[p]; !ok {
				names[p] = as
			}
		}
	}
	name(ws, "the workspace "+ws)
	for _, w := range prof.Sandbox.Write {
		name(w, "the profile's sandbox.write "+w)
	}
	if tmpdir != "" && filepath.IsAbs(tmpdir) {
		name(tmpdir, "$TMPDIR "+tmpdir)
	}
	for _, p := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		name(p, p)
	}
	if temps != "" {
		name(temps, "the sessions' temp folders under "+temps)
	}
	var roots []pluginmgr.WriteRoot
	add := func(path string) {
		path = filepath.Clean(path)
		as := names[path]
		if as == "" {
			as = path + ", which the sandbox lets commands write"
		}
		if !slices.ContainsFunc(roots, func(r pluginmgr.WriteRoot) bool { return r.Path == path }) {
			roots = append(roots, pluginmgr.WriteRoot{Path: path, Name: as})
		}
	}
	if prof.SandboxMode() != policy.SandboxOff && landlock {
		// Each session's folder is one of temps: all of them together.
		granted := sandbox.Policy{Workspace: ws, Write: prof.Sandbox.Write, Env: env, Tmp: temps}.WriteRoots()
		for _, r := range granted {
			add(r)
		}
		// The names of the granted folders too, where a link names them.
		for _, path := range slices.Sorted(maps.Keys(names)) {
			if slices.Contains(granted, resolved(path)) {
				add(path)
			}
		}
		return roots
	}
	for _, p := range []string{ws, "/tmp", "/var/tmp", tmpdir, "/dev/shm", temps} {
		if p != "" && filepath.IsAbs(p) {
			add(p)
			add(resolved(p))
		}
	}
	return roots
}

// resolved is path with its links resolved, or path itself when it does
// not resolve.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// lookupEnv is the last value of name in env, as os/exec reads it.
func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
			v = kv[len(name)+1:]
		}
	}
	return v
}
