//go:build unix

package chrome

import (
	"errors"
	"os/exec"
	"syscall"
)

// Prepare makes cmd start the browser in a process group of its own (so
// the browser and every child it forks can be killed at once) and, on
// Linux, killed by the kernel when the plugin dies, even by SIGKILL.
// Cancelling cmd's context kills the whole group; cmd must come from
// exec.CommandContext (chromedp's allocator makes it so).
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return KillGroup(cmd.Process.Pid)
	}
}

// KillGroup sends SIGKILL to every process of group pgid. A group that is
// already gone is not an error.
func KillGroup(pgid int) error {
	if pgid <= 1 {
		return errors.New("chrome: refusing to kill process group <= 1")
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
