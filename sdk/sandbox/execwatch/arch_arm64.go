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

// The calls that give a file a mode, natively (only the *at calls and
// fchmod) and in the 32-bit ARM ABI.
var (
	nativeModeCalls = atCalls(unix.SYS_FCHMOD, unix.SYS_OPENAT, unix.SYS_MKDIRAT, unix.SYS_MKNODAT, unix.SYS_FCHMODAT)
	compatModeCalls = append(pathCalls(5, 8, 39, 14, 15), atCalls(94, 322, 323, 324, 333)...)
)

// The socket calls the socket rules catch, natively and in the 32-bit ARM
// ABI, which has no socketcall.
var (
	nativeSockets = socketCalls{socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, connect: unix.SYS_CONNECT}
	compatSockets = socketCalls{socket: 281, socketpair: 288, connect: 283}
)
