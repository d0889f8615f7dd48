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
