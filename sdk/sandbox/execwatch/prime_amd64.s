//go:build linux

#include "textflag.h"

// func primeLoop(epfd, out int32, ev, notif, resp, report *uint64, ready *uint32)
//
// Sets *ready, then for good: waits (epoll_wait, no timeout) for one event
// of epfd, whose data is a listener's descriptor (low 32 bits) and token;
// when the listener has a notification, receives it (into the 80
// zeroed bytes of notif) and answers it with
// resp (whose id it fills in); writes the event's data and 1 if it
// answered, 0 if not, to out. It never returns to Go: the runtime never
// preempts assembly, and in the syscall state the goroutine needs no P.
TEXT ·primeLoop(SB),NOSPLIT,$0-48
	MOVQ	ready+40(FP), AX
	MOVL	$1, (AX)
wait:
	MOVLQSX	epfd+0(FP), DI
	MOVQ	ev+8(FP), SI
	MOVQ	$1, DX
	MOVQ	$-1, R10
	MOVQ	$232, AX // epoll_wait
	SYSCALL
	CMPQ	AX, $1
	JNE	wait // EINTR
	MOVQ	ev+8(FP), BX
	MOVQ	4(BX), CX // data: struct epoll_event is packed here
	MOVQ	report+32(FP), DX
	MOVQ	CX, 0(DX)
	MOVQ	$0, 8(DX)
	MOVL	0(BX), CX // events
	TESTL	$1, CX // EPOLLIN
	JZ	tell
	// RECV wants a zeroed buffer (EINVAL otherwise).
	MOVQ	notif+16(FP), BX
	MOVQ	$10, CX
zero:
	MOVQ	$0, (BX)
	ADDQ	$8, BX
	DECQ	CX
	JNZ	zero
recv:
	MOVQ	report+32(FP), BX
	MOVLQSX	0(BX), DI
	MOVQ	$0xc0502100, SI // SECCOMP_IOCTL_NOTIF_RECV
	MOVQ	notif+16(FP), DX
	MOVQ	$16, AX // ioctl
	SYSCALL
	CMPQ	AX, $-4 // EINTR
	JEQ	recv
	TESTQ	AX, AX
	JNZ	tell // ENOENT: the notification vanished
	MOVQ	notif+16(FP), BX
	MOVQ	0(BX), CX
	MOVQ	resp+24(FP), BX
	MOVQ	CX, 0(BX)
send:
	MOVQ	report+32(FP), BX
	MOVLQSX	0(BX), DI
	MOVQ	$0xc0182101, SI // SECCOMP_IOCTL_NOTIF_SEND
	MOVQ	resp+24(FP), DX
	MOVQ	$16, AX
	SYSCALL
	CMPQ	AX, $-4
	JEQ	send
	MOVQ	report+32(FP), BX
	MOVQ	$1, 8(BX)
tell:
	MOVLQSX	out+4(FP), DI
	MOVQ	report+32(FP), SI
	MOVQ	$16, DX
	MOVQ	$1, AX // write
	SYSCALL
	CMPQ	AX, $-4
	JEQ	tell
	JMP	wait
