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
// The guard's only refusal is an admin's exec deny rule, which stands under
// -y; every other flagged call asks, and a pass turns the ask into allow.
package guard
