#include "textflag.h"

// func copyFiniteAVX2(dst, src *uint64, n int) uint64
//
// Copies n values (n a multiple of 8) from src to dst and returns the OR,
// over all of them, of (v & expMask) + 1<<52: bit 63 is set exactly when
// some value is ±Inf or NaN (f64.go, allFinite). One pass: each 32-byte
// load is stored and checked.
TEXT ·copyFiniteAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ $0x7ff0000000000000, AX
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0
	MOVQ $0x0010000000000000, AX
	MOVQ AX, X1
	VPBROADCASTQ X1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

loop:
	CMPQ CX, $8
	JLT  done
	VMOVDQU (SI), Y4
	VMOVDQU 32(SI), Y5
	VMOVDQU Y4, (DI)
	VMOVDQU Y5, 32(DI)
	VPAND   Y0, Y4, Y4
	VPAND   Y0, Y5, Y5
	VPADDQ  Y1, Y4, Y4
	VPADDQ  Y1, Y5, Y5
	VPOR    Y4, Y2, Y2
	VPOR    Y5, Y3, Y3
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VPOR         Y3, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPOR         X3, X2, X2
	VPSHUFD      $0x4e, X2, X3
	VPOR         X3, X2, X2
	MOVQ         X2, AX
	VZEROUPPER
	MOVQ         AX, ret+24(FP)
	RET
