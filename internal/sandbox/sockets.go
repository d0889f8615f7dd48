package sandbox

import (
	"os"
	"slices"
)

// socketRulesOff turns the socket rules off, for a benchmark that measures
// what they cost.
var socketRulesOff bool

// MayConnect says whether a command under p may connect to the unix
// socket file at path (absolute, its links followed, in the command's
// view): one the profile's sandbox.unix_sockets names or an approval named
// exactly; one inside the workspace, a sandbox.write root or an approved
// path; one in a toolchain cache; but none in the temp folders every
// process of the machine shares (/tmp, /var/tmp, /dev/shm, $TMPDIR), where
// other programs keep theirs (a terminal multiplexer's, an agent's), and
// none elsewhere (the home folder, /run).
func (p Policy) MayConnect(path string) bool {
	if slices.Contains(p.UnixSockets, path) || slices.Contains(p.Read, path) || slices.Contains(p.Granted, path) {
		return true
	}
	for _, root := range append(append([]string{p.Workspace}, p.Write...), p.Granted...) {
		if root != "" && (path == root || within(root, path)) {
			return true
		}
	}
	for _, t := range sharedTemp(p) {
		if within(t, path) {
			return false
		}
	}
	return p.Permits(path, true)
}

// sharedTemp are the temp folders every process of the machine shares, as
// named and resolved.
func sharedTemp(p Policy) []string {
	var out []string
	for _, t := range []string{"/tmp", "/var/tmp", "/dev/shm", lookupEnv(p.Env, "TMPDIR"), os.TempDir()} {
		if t == "" || t[0] != '/' {
			continue
		}
		out = append(out, t, resolvePath(t))
	}
	return out
}
