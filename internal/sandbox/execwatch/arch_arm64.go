//go:build linux

package execwatch

import "golang.org/x/sys/unix"

// The syscalls the filter catches on arm64. The 32-bit ARM compat ABI (arch
// ARM) cannot be judged here (the supervisor reads 64-bit pointers), so its
// execs fail with EACCES.
const (
	nativeArch   = unix.AUDIT_ARCH_AARCH64
	sysExecve    = unix.SYS_EXECVE
	sysExecveat  = unix.SYS_EXECVEAT
	x32Bit       = 0
	compatArch   = unix.AUDIT_ARCH_ARM
	ptrSize      = 8
	compatExecve = 11
	compatExecat = 387
)

var x32Execs []uint32
