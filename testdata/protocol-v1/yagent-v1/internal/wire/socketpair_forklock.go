//go:build darwin || ios || aix

package wire

import "syscall"

// socketpairCloexec makes a stream socket pair closed on exec. These
// systems have no SOCK_CLOEXEC: the descriptors are marked under
// syscall.ForkLock, as os/exec does for its pipes, so no process forked
// meanwhile inherits them.
func socketpairCloexec() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
