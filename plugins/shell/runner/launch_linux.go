package runner

import "syscall"

// bornIn makes the process start inside the cgroup open as fd (clone3
// CLONE_INTO_CGROUP): none of its children can get out before it is in.
func bornIn(attr *syscall.SysProcAttr, fd int) {
	attr.UseCgroupFD = true
	attr.CgroupFD = fd
}
