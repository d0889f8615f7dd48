//go:build linux

#include "textflag.h"

// func primeOnce(fd int32, ready *uint32, pfd *unix.PollFd, ts *unix.Timespec, notif *uint64, resp *uint64) uintptr
//
// Sets *ready, waits (ppoll, up to *ts) for the listener's first
// notification, receives it and answers it with resp (whose id it fills in),
// all without returning to Go: the runtime never preempts assembly, so a
// stop-the-world begun while the child is in vfork cannot park this
// goroutine before it has let the child's exec go on. Returns 1 when it
// answered, 0 when it found nothing to answer.
TEXT ·primeOnce(SB),NOSPLIT,$0-56
	MOVQ	ready+8(FP), AX
	MOVL	$1, (AX)
poll:
	MOVQ	pfd+16(FP), DI
	MOVQ	$1, SI
	MOVQ	ts+24(FP), DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	MOVQ	$271, AX // ppoll
	SYSCALL
	CMPQ	AX, $-4 // EINTR
	JEQ	poll
	CMPQ	AX, $1
	JNE	fail
	MOVQ	pfd+16(FP), BX
	MOVWLZX	6(BX), CX // revents
	TESTL	$1, CX // POLLIN
	JZ	fail
recv:
	MOVLQSX	fd+0(FP), DI
	MOVQ	$0xc0502100, SI // SECCOMP_IOCTL_NOTIF_RECV
	MOVQ	notif+32(FP), DX
	MOVQ	$16, AX // ioctl
	SYSCALL
	CMPQ	AX, $-4
	JEQ	recv
	TESTQ	AX, AX
	JNZ	fail
	MOVQ	notif+32(FP), BX
	MOVQ	0(BX), CX
	MOVQ	resp+40(FP), BX
	MOVQ	CX, 0(BX)
send:
	MOVLQSX	fd+0(FP), DI
	MOVQ	$0xc0182101, SI // SECCOMP_IOCTL_NOTIF_SEND
	MOVQ	resp+40(FP), DX
	MOVQ	$16, AX
	SYSCALL
	CMPQ	AX, $-4
	JEQ	send
	MOVQ	$1, ret+48(FP)
	RET
fail:
	MOVQ	$0, ret+48(FP)
	RET
