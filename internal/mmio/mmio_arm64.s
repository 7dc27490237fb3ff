#include "textflag.h"

// func store64(p unsafe.Pointer, v uint64)
TEXT ·store64(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD v+8(FP), R1
	MOVD R1, (R0)
	RET

// func store32(p unsafe.Pointer, v uint32)
TEXT ·store32(SB), NOSPLIT, $0-12
	MOVD p+0(FP), R0
	MOVWU v+8(FP), R1
	MOVW R1, (R0)
	RET

// func load64(p unsafe.Pointer) uint64
TEXT ·load64(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD (R0), R1
	MOVD R1, ret+8(FP)
	RET

// func writeBarrier()
TEXT ·writeBarrier(SB), NOSPLIT, $0-0
	DMB $0x2 // DMB OSHST: order stores as seen by devices (outer shareable)
	RET

// func readBarrier()
TEXT ·readBarrier(SB), NOSPLIT, $0-0
	DMB $0x1 // DMB OSHLD: order loads of device-written memory
	RET
