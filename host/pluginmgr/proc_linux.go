package pluginmgr

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel send SIGTERM to the plugin when the
// host dies, even by SIGKILL. The sdk answers it by running the plugin's
// OnShutdown (killing the process groups of commands still in flight,
// closing a browser) and exiting, within a few seconds; a plugin that does
// not exit is also gone once it notices it was orphaned. The plugin stays in the host's process group
// (Setpgid false) so a signal to the host's group reaches it too.
//
// Pdeathsig follows the OS thread that forked the child; Go keeps its
// threads alive unless a goroutine exits while locked to one, and the
// launching goroutine never locks its thread.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	cmd.SysProcAttr.Setpgid = false
}
