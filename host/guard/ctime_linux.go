package guard

import (
	"os"
	"syscall"
)

// ctimeOf is fi's status change time: a file rewritten in place within
// one mtime tick, or with its mtime reset, still changes it.
func ctimeOf(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}

// inodeOf is fi's device and inode.
func inodeOf(fi os.FileInfo) (dev, ino uint64, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Dev, st.Ino, true
	}
	return 0, 0, false
}
