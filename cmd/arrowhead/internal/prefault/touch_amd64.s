//go:build linux

#include "textflag.h"

// func touch(addr, n uintptr)
TEXT ·touch(SB), NOSPLIT, $0-16
	MOVQ	addr+0(FP), AX
	MOVQ	n+8(FP), CX
	ADDQ	AX, CX
loop:
	CMPQ	AX, CX
	JAE	done
	MOVB	(AX), DX
	ADDQ	$4096, AX
	JMP	loop
done:
	RET
