// Package policy owns the security decisions that the host and the plugins
// both make, so that the value the guard judged is the value a plugin uses,
// decided by the same code on both sides of the wire: path resolution and
// containment (Resolve, Within), the table of system paths, the command
// classifier (REPLs, wrappers, programs that want a terminal), program
// identity, and the sandbox modes.
//
// It imports nothing from host/ or plugins/: the guard, the fs plugin's
// os.Root confinement, the shell runner, the sandbox and the test harness
// plugin authors run all call it. Resolving paths and hashing programs
// still touch the file system; everything else is pure.
package policy
