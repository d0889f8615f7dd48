//go:build darwin || ios || freebsd || netbsd

package filestat

import "syscall"

// changed is the status change time of st.
func changed(st *syscall.Stat_t) syscall.Timespec { return st.Ctimespec }
