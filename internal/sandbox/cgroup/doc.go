// Package cgroup gives each command a cgroup v2 of its own, so that its
// whole tree, setsid and double-forked children included, is killed at
// once (cgroup.kill) while the call that started it is in flight, and let
// go, never killed later, once the call has returned.
//
// The groups of one process live under its own cgroup (found from
// /proc/self/mountinfo and /proc/self/cgroup: /sys/fs/cgroup/unified on
// hybrid hosts, /sys/fs/cgroup elsewhere), in yagent.<pid>/: live-N for a
// command in flight, bg-N for a background one. A live-N group released
// with processes still in it is marked so (an xattr; without user xattrs
// its processes move to kept-N). A dead plugin's host kills the unmarked
// live-N groups of its folder and nothing else. Where there is no writable, delegated cgroup v2, Root and
// New say why and commands run in their process groups only.
package cgroup
