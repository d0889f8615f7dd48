//go:build unix

package filestat

import (
	"os"
	"syscall"
)

// Ctime is fi's status change time in nanoseconds since the epoch, 0 when
// fi does not come from a stat of this system.
func Ctime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ts := changed(st)
		sec, nsec := ts.Unix()
		return sec*1e9 + nsec
	}
	return 0
}

// Inode is fi's device and inode; ok is false when fi does not come from a
// stat of this system.
func Inode(fi os.FileInfo) (dev, ino uint64, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}
