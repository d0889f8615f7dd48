//go:build unix && !aix

package policy

import (
	"os"
	"syscall"
)

// statIdentity is the device, inode and status change time (in
// nanoseconds since the epoch) of fi; ok is false when fi does not come
// from a stat of this system.
func statIdentity(fi os.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	ts := statCtime(st)
	sec, nsec := ts.Unix()
	return uint64(st.Dev), uint64(st.Ino), sec*1e9 + nsec, true
}
