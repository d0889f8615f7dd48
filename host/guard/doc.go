// Package guard decides whether a validated call may run without asking the
// user, and asks when it must. It is the interim guard: it judges Effect and
// parameter roles (workspace boundary on resolved paths, absolute paths in
// commands against one list of safe system paths, network hosts against the
// profile, browser risk), never a tool's name. Exec rules, the read-only
// command classifier, worktree main checkouts and project passes come with
// the full guard.
//
// The guard has no hard deny: every flagged call asks. YOLO allows all.
package guard
