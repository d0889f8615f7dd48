//go:build unix && !darwin && !ios && !aix

package wire

import "syscall"

// socketpairCloexec makes a stream socket pair closed on exec from the
// start (SOCK_CLOEXEC): no process forked meanwhile inherits it.
func socketpairCloexec() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
