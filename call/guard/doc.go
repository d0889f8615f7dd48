// Package guard decides whether a validated call may run without asking
// the user, from its Effect and parameter roles, never its name: paths
// against the workspace (symlinks resolved) and the read whitelist,
// commands on a real bash parse (paths they name resolved as the kernel
// will, symlinks before "..", through the folders cd moves to and every
// match of a glob; their programs against the profile's exec rules, by
// name and by the file they run, wrappers and shell options unwrapped,
// script files read; a read-only classifier that trusts git only in a
// repository whose config runs nothing), network hosts against the
// profile, browser risk.
//
// Paths are judged as the session's commands see the files: a path under a
// temp folder the session's own stands for (GuardRequest.Temp, mapped by
// sdk.TempFolder.Map, symlink targets too) names the file in that folder,
// which tools and commands read and write without asking; none reaches the
// machine's /tmp.
//
// The guard returns allow, ask or deny. It refuses on an admin's exec deny
// rule, and a command past the bounds of what it parses (bound.go: a size,
// a depth no real command comes near), which would otherwise end the
// process; every other flagged call asks. It knows no passes: host/authz
// is their one owner and turns an ask into allow, never a deny, so a deny
// stands under -y.
//
// Behind that parse-time check the guard also says what the kernel sandbox
// holds for each call (Sandbox: the read roots, the paths an ask approved
// for the call, the exec rules' programs with their files hashed), and
// judges the programs a running command's tree is about to exec
// (JudgeExec) with the same rules, by name, by file and by copy.
//
// It reads the profile as policy.Rules (config.Profile.Rules), not through
// the profile loader, so sdk/plugintest runs this same guard in plugin
// authors' tests without the host's dependencies; what it decides with
// the plugins (a path's resolution, containment, the system paths, the
// REPL table, program identity) is policy's, the same code the plugins
// call (docs/ARCHITECTURE.md#decisions-in-policy).
package guard
