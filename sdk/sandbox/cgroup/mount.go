package cgroup

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/yagent/yagent/policy"
)

// mount is one cgroup2 mount of /proc/self/mountinfo.
type mount struct {
	root     string // the folder of the hierarchy the mount shows
	point    string // where it is mounted
	readOnly bool
}

// parseMountinfo returns the cgroup2 mounts of a mountinfo file, in order.
func parseMountinfo(data string) []mount {
	var out []mount
	for line := range strings.SplitSeq(data, "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		// id parent dev root point opts [optional...] - fstype source superopts
		if sep < 6 || len(f) < sep+4 || f[sep+1] != "cgroup2" {
			continue
		}
		ro := slices.Contains(strings.Split(f[5], ","), "ro") || slices.Contains(strings.Split(f[sep+3], ","), "ro")
		out = append(out, mount{root: unescape(f[3]), point: unescape(f[4]), readOnly: ro})
	}
	return out
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseOwnCgroup returns the cgroup v2 path of a /proc/PID/cgroup file
// (its "0::/path" line).
func parseOwnCgroup(data string) (string, error) {
	for line := range strings.SplitSeq(data, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			p = strings.TrimSuffix(p, " (deleted)")
			if !strings.HasPrefix(p, "/") {
				return "", fmt.Errorf("cgroup v2 path %q is not absolute", p)
			}
			return path.Clean(p), nil
		}
	}
	return "", errors.New("the process is in no cgroup v2 (no 0:: line: cgroup v1 only)")
}

// locate returns the folder of cgroup own (a cgroup v2 path) through the
// mounts: the one whose root holds own, the widest root first.
func locate(mounts []mount, own string) (dir string, m mount, err error) {
	if len(mounts) == 0 {
		return "", mount{}, errors.New("cgroup v2 is not mounted (no cgroup2 line in /proc/self/mountinfo)")
	}
	best := -1
	for i, mt := range mounts {
		if !policy.Within(mt.root, own, true) {
			continue
		}
		if best < 0 || len(mt.root) < len(mounts[best].root) {
			best = i
		}
	}
	if best < 0 {
		return "", mount{}, fmt.Errorf("no cgroup2 mount shows this process's cgroup %s (mounted at %s from %s)", own, mounts[0].point, mounts[0].root)
	}
	mt := mounts[best]
	rel := strings.TrimPrefix(own, mt.root)
	return path.Join(mt.point, rel), mt, nil
}

// parseV1Mounts returns, for each of ctrls, the cgroup v1 mount of
// /proc/self/mountinfo whose hierarchy holds it (its super options name
// it, alone or beside others: "rw,memory", "rw,cpu,cpuacct"); the first
// mount of a hierarchy wins.
func parseV1Mounts(data string, ctrls ...string) map[string]mount {
	out := map[string]mount{}
	for line := range strings.SplitSeq(data, "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) < sep+4 || f[sep+1] != "cgroup" {
			continue
		}
		opts := strings.Split(f[sep+3], ",")
		ro := slices.Contains(strings.Split(f[5], ","), "ro") || slices.Contains(opts, "ro")
		for _, c := range ctrls {
			if _, seen := out[c]; !seen && slices.Contains(opts, c) {
				out[c] = mount{root: unescape(f[3]), point: unescape(f[4]), readOnly: ro}
			}
		}
	}
	return out
}

// parseOwnV1 returns, for each of ctrls, this process's cgroup path in the
// v1 hierarchy that holds it, from a /proc/PID/cgroup file
// ("8:pids:/a", "4:cpu,cpuacct:/b").
func parseOwnV1(data string, ctrls ...string) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(data, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[1] == "" || !strings.HasPrefix(f[2], "/") {
			continue
		}
		names := strings.Split(f[1], ",")
		for _, c := range ctrls {
			if slices.Contains(names, c) {
				out[c] = path.Clean(strings.TrimSuffix(f[2], " (deleted)"))
			}
		}
	}
	return out
}
