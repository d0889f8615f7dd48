package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/internal/filestat"
	"github.com/yagent/yagent/policy"
)

// socketRulesOff turns the socket rules off, for a benchmark that measures
// what they cost.
var socketRulesOff bool

// MayConnect says whether a command under p may connect to the unix
// socket file at path (absolute, its links followed, in the command's
// view): one the profile's sandbox.unix_sockets names or an approval named
// exactly; one inside the workspace, the session's temp folder, a
// sandbox.write root or an approved path; one in a toolchain cache; but
// none in the temp folders every process of the machine shares (/tmp,
// /var/tmp, /dev/shm, $TMPDIR), where other programs keep theirs (a
// terminal multiplexer's, an agent's), and none elsewhere (the home
// folder, /run). MayConnectFile knows the session's folder where it is
// bound over those.
func (p Policy) MayConnect(path string) bool {
	if slices.Contains(p.UnixSockets, path) || slices.Contains(p.Read, path) || slices.Contains(p.Granted, path) {
		return true
	}
	for _, root := range append(append([]string{p.Workspace, p.Tmp}, p.Write...), p.Granted...) {
		if root != "" && (path == root || policy.Within(root, path, true)) {
			return true
		}
	}
	for _, t := range sharedTemp(p) {
		if policy.Within(t, path, true) {
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
		out = append(out, t, policy.ResolvePath(t))
	}
	return out
}

// MayConnectFile is MayConnect for the socket file at path in the
// command's view, whose identity is dev and ino: under a temp folder the
// session's own is bound over (Policy.TmpOver), the path names the
// session's file when that folder holds the same file at the same place,
// as it does wherever the bind was made; where it was not, the command
// sees the machine's shared folder, and the path is judged as one of it.
func (p Policy) MayConnectFile(path string, dev, ino uint64) bool {
	if p.Tmp != "" {
		for _, o := range p.TmpOver {
			rest, ok := strings.CutPrefix(path, strings.TrimSuffix(o, "/")+"/")
			if !ok {
				continue
			}
			fi, err := os.Lstat(filepath.Join(p.Tmp, rest))
			if err != nil {
				continue
			}
			if d, i, ok := filestat.Inode(fi); ok && d == dev && i == ino {
				return true
			}
		}
	}
	return p.MayConnect(path)
}
