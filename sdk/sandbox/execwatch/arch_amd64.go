//go:build linux

package execwatch

import "golang.org/x/sys/unix"

// The syscalls the filter catches on amd64. A process can also enter the
// kernel through the x32 ABI (the same arch with __X32_SYSCALL_BIT in the
// number) or the i386 ABI (int 0x80, arch I386); the supervisor reads
// pointers as 64-bit values, so those execs cannot be judged here and fail
// with EACCES instead. A 32-bit program under the filter therefore cannot
// exec anything.
const (
	nativeArch   = unix.AUDIT_ARCH_X86_64
	sysExecve    = unix.SYS_EXECVE
	sysExecveat  = unix.SYS_EXECVEAT
	x32Bit       = 0x40000000
	compatArch   = unix.AUDIT_ARCH_I386
	ptrSize      = 8
	compatExecve = 11
	compatExecat = 358
)

// x32Execs are the x32 numbers (with x32Bit) of execve and execveat: the
// x32 table's own (520, 545) and, should a kernel route them, the 64-bit ones.
var x32Execs = []uint32{x32Bit | 520, x32Bit | 545, x32Bit | sysExecve, x32Bit | sysExecveat}

// The calls that give a file a mode, natively (x32 numbers them alike) and
// in the i386 ABI.
var (
	nativeModeCalls = append(pathCalls(unix.SYS_OPEN, unix.SYS_CREAT, unix.SYS_MKDIR, unix.SYS_MKNOD, unix.SYS_CHMOD),
		atCalls(unix.SYS_FCHMOD, unix.SYS_OPENAT, unix.SYS_MKDIRAT, unix.SYS_MKNODAT, unix.SYS_FCHMODAT)...)
	compatModeCalls = append(pathCalls(5, 8, 39, 14, 15), atCalls(94, 295, 296, 297, 306)...)
)

// The socket calls the socket rules catch, natively (x32 numbers them
// alike) and in the i386 ABI, whose socketcall multiplexes them.
var (
	nativeSockets = socketCalls{socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, connect: unix.SYS_CONNECT}
	compatSockets = socketCalls{socket: 359, socketpair: 360, connect: 362, socketcall: 102}
)
