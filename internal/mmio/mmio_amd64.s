#include "textflag.h"

// func store64(p unsafe.Pointer, v uint64)
TEXT ·store64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, (AX)
	RET

// func store32(p unsafe.Pointer, v uint32)
TEXT ·store32(SB), NOSPLIT, $0-12
	MOVQ p+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, (AX)
	RET

// func load64(p unsafe.Pointer) uint64
TEXT ·load64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ (AX), BX
	MOVQ BX, ret+8(FP)
	RET

// func writeBarrier()
TEXT ·writeBarrier(SB), NOSPLIT, $0-0
	SFENCE
	RET

// func readBarrier()
TEXT ·readBarrier(SB), NOSPLIT, $0-0
	LFENCE
	RET
