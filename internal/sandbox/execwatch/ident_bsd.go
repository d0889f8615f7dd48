//go:build unix && !linux && !aix && !solaris && !illumos

package execwatch

import "syscall"

func statMtime(st *syscall.Stat_t) int64 { return st.Mtimespec.Nano() }
func statCtime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
