//go:build !linux

package runner

import "syscall"

// bornIn does nothing: cgroups are Linux's (cgroup.New fails elsewhere).
func bornIn(*syscall.SysProcAttr, int) {}
