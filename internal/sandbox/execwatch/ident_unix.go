//go:build unix && !aix && !solaris && !illumos

package execwatch

import (
	"os"
	"syscall"
)

func keyOf(fi os.FileInfo) (hashKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return hashKey{}, false
	}
	return hashKey{
		id:    fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		size:  st.Size,
		mtime: statMtime(st),
		ctime: statCtime(st),
	}, true
}
