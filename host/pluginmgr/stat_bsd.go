//go:build darwin || freebsd || netbsd

package pluginmgr

import (
	"os"
	"syscall"
)

// inodeCtime returns the file's inode and its ctime in nanoseconds, the
// time of its last inode change, which no user can set.
func inodeCtime(fi os.FileInfo) (uint64, int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	sec, nsec := st.Ctimespec.Unix()
	return uint64(st.Ino), sec*1e9 + nsec
}
