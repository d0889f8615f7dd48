// Package guard decides whether a validated call may run without asking
// the user, from its Effect and parameter roles, never its name: paths
// against the workspace (symlinks resolved) and the read whitelist,
// commands on a real bash parse (paths they name against the safe system
// paths, their programs against the profile's exec rules, wrappers
// unwrapped, a read-only classifier), network hosts against the profile,
// browser risk.
//
// The guard's only refusal is an admin's exec deny rule, which stands under
// -y; every other flagged call asks, and a pass turns the ask into allow.
package guard
