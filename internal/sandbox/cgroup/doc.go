// Package cgroup gives each command a cgroup v2 of its own, so that its
// whole tree, setsid and double-forked children included, is killed at
// once (cgroup.kill) while the call that started it is in flight, and let
// go, never killed later, once the call has returned.
package cgroup
