//go:build unix && !aix && !darwin && !ios && !freebsd && !netbsd

package policy

import "syscall"

func statCtime(st *syscall.Stat_t) syscall.Timespec { return st.Ctim }
