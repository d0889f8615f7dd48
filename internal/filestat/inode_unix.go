//go:build unix

package filestat

import (
	"os"
	"syscall"
)

// Inode is fi's device and inode; ok is false when fi does not come from a
// stat of this system.
func Inode(fi os.FileInfo) (dev, ino uint64, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}
