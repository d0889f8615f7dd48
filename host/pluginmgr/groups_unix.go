//go:build unix

package pluginmgr

import (
	"fmt"
	"syscall"
)

// checkGroup refuses process groups the host must never kill: init's, the
// kernel's, and the host's own (where its plugins run too).
func checkGroup(pgid int) error {
	if pgid <= 1 {
		return fmt.Errorf("process group %d cannot be a plugin's", pgid)
	}
	if pgid == syscall.Getpgrp() {
		return fmt.Errorf("process group %d is the host's own", pgid)
	}
	return nil
}

// killGroup sends SIGKILL to every process of group pgid.
func killGroup(pgid int) error {
	if err := checkGroup(pgid); err != nil {
		return err
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	return nil
}
