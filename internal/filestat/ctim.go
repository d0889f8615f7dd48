//go:build unix && !darwin && !ios && !freebsd && !netbsd

package filestat

import (
	"os"
	"syscall"
)

// Ctime is fi's status change time in nanoseconds since the epoch, 0 when
// fi does not come from a stat of this system.
func Ctime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sec, nsec := st.Ctim.Unix()
		return sec*1e9 + nsec
	}
	return 0
}
