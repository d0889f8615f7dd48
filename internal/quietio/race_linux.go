//go:build race

package quietio

import "syscall"

// Under the race detector the reads and writes go through the syscall
// package after all: its annotations tie every write to every later read
// in the process, and tests that run a host and a plugin in one binary
// (whose frames carry the order between them) rely on that edge. The raw
// path is what builds without the detector run (make test also runs this
// package's tests without it).
const raceEnabled = true

func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return n, errno(err)
}

func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return n, errno(err)
}

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return err.(syscall.Errno)
}
