package nav

import (
	"os/exec"
	"syscall"
)

// loaderConfines: on Linux the sandbox's layers apply to the loader.
const loaderConfines = true

// ownGroup starts cmd in a process group of its own, so that go list, cgo
// and the compiler die with it when the call ends; and kills it if the
// plugin dies first.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup kills what is left of the process group of the loader pid.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
