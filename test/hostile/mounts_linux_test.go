package hostile

import (
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// unmountUnder detaches what is mounted under dir, deepest first: the
// session temp folders (tmpfs) of a host a test killed, which a host that
// stops unmounts itself.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	slices.Sort(points)
	for _, p := range slices.Backward(points) {
		_ = unix.Unmount(p, unix.MNT_DETACH)
	}
}
