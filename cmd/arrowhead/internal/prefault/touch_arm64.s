//go:build linux

#include "textflag.h"

// func touch(addr, n uintptr)
TEXT ·touch(SB), NOSPLIT, $0-16
	MOVD	addr+0(FP), R0
	MOVD	n+8(FP), R1
	ADD	R0, R1, R1
loop:
	CMP	R1, R0
	BHS	done
	MOVBU	(R0), R2
	ADD	$4096, R0
	B	loop
done:
	RET
