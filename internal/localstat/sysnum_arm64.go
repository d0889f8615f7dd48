//go:build linux

package localstat

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
