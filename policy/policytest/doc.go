// Package policytest holds the cases every resolver of a model's path is
// checked against, so that the guard, the fs plugin and the other callers
// of policy.Resolve are held to one answer: a tree of files (Tree) and
// paths into it, each with the one answer it must get (PathCases).
package policytest
