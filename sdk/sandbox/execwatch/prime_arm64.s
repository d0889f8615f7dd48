//go:build linux

#include "textflag.h"

// func primeLoop(epfd, out int32, ev, notif, resp, report *uint64, ready *uint32)
//
// See prime_amd64.s.
TEXT ·primeLoop(SB),NOSPLIT,$0-48
	MOVD	ready+40(FP), R0
	MOVW	$1, R1
	STLRW	R1, (R0)
wait:
	MOVW	epfd+0(FP), R0
	MOVD	ev+8(FP), R1
	MOVD	$1, R2
	MOVD	$-1, R3
	MOVD	$0, R4
	MOVD	$8, R5
	MOVD	$22, R8 // epoll_pwait
	SVC
	CMP	$1, R0
	BNE	wait // EINTR
	MOVD	ev+8(FP), R5
	MOVD	8(R5), R6 // data: struct epoll_event is padded here
	MOVD	report+32(FP), R7
	MOVD	R6, 0(R7)
	MOVD	ZR, 8(R7)
	MOVWU	0(R5), R6 // events
	TBZ	$0, R6, tell // EPOLLIN
	// RECV wants a zeroed buffer (EINVAL otherwise).
	MOVD	notif+16(FP), R5
	MOVD	$10, R6
zero:
	MOVD	ZR, (R5)
	ADD	$8, R5
	SUB	$1, R6
	CBNZ	R6, zero
recv:
	MOVD	report+32(FP), R7
	MOVW	0(R7), R0
	MOVD	$0xc0502100, R1 // SECCOMP_IOCTL_NOTIF_RECV
	MOVD	notif+16(FP), R2
	MOVD	$29, R8 // ioctl
	SVC
	CMN	$4, R0 // EINTR
	BEQ	recv
	CBNZ	R0, tell // ENOENT: the notification vanished
	MOVD	notif+16(FP), R5
	MOVD	(R5), R6
	MOVD	resp+24(FP), R5
	MOVD	R6, (R5)
send:
	MOVD	report+32(FP), R7
	MOVW	0(R7), R0
	MOVD	$0xc0182101, R1 // SECCOMP_IOCTL_NOTIF_SEND
	MOVD	resp+24(FP), R2
	MOVD	$29, R8
	SVC
	CMN	$4, R0
	BEQ	send
	MOVD	report+32(FP), R7
	MOVD	$1, R6
	MOVD	R6, 8(R7)
tell:
	MOVW	out+4(FP), R0
	MOVD	report+32(FP), R1
	MOVD	$16, R2
	MOVD	$64, R8 // write
	SVC
	CMN	$4, R0
	BEQ	tell
	B	wait
