//go:build !unix

package chrome

import (
	"errors"
	"os"
	"os/exec"
)

// Prepare kills the browser process when cmd's context is cancelled; cmd
// must come from exec.CommandContext.
func Prepare(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return cmd.Process.Kill()
	}
}

// KillGroup kills process pgid; there are no process groups here.
func KillGroup(pgid int) error {
	p, err := os.FindProcess(pgid)
	if err != nil {
		return err
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func alive(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
