//go:build linux

#include "textflag.h"

// func primeOnce(fd int32, ready *uint32, pfd *unix.PollFd, ts *unix.Timespec, notif *uint64, resp *uint64) uintptr
//
// See prime_amd64.s.
TEXT ·primeOnce(SB),NOSPLIT,$0-56
	MOVD	ready+8(FP), R0
	MOVW	$1, R1
	STLRW	R1, (R0)
poll:
	MOVD	pfd+16(FP), R0
	MOVD	$1, R1
	MOVD	ts+24(FP), R2
	MOVD	$0, R3
	MOVD	$0, R4
	MOVD	$73, R8 // ppoll
	SVC
	CMN	$4, R0 // EINTR
	BEQ	poll
	CMP	$1, R0
	BNE	fail
	MOVD	pfd+16(FP), R5
	MOVHU	6(R5), R6 // revents
	TBZ	$0, R6, fail // POLLIN
recv:
	MOVW	fd+0(FP), R0
	MOVD	$0xc0502100, R1 // SECCOMP_IOCTL_NOTIF_RECV
	MOVD	notif+32(FP), R2
	MOVD	$29, R8 // ioctl
	SVC
	CMN	$4, R0
	BEQ	recv
	CBNZ	R0, fail
	MOVD	notif+32(FP), R5
	MOVD	(R5), R6
	MOVD	resp+40(FP), R5
	MOVD	R6, (R5)
send:
	MOVW	fd+0(FP), R0
	MOVD	$0xc0182101, R1 // SECCOMP_IOCTL_NOTIF_SEND
	MOVD	resp+40(FP), R2
	MOVD	$29, R8
	SVC
	CMN	$4, R0
	BEQ	send
	MOVD	$1, R0
	MOVD	R0, ret+48(FP)
	RET
fail:
	MOVD	ZR, ret+48(FP)
	RET
