//go:build darwin || ios || freebsd || netbsd

package policy

import "syscall"

func statCtime(st *syscall.Stat_t) syscall.Timespec { return st.Ctimespec }
