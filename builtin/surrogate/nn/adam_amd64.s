//go:build !purego

#include "textflag.h"

// func adamAVX512(p, gr, m, v *float64, n int, c *[8]float64) int
//
// The update of adamGo (train.go) on eight elements a step, with its
// operations in its order, each rounded alone (no fused multiply-add), so
// the same bits; c = {b1, b2, c1 = 1 − b1, c2 = 1 − b2, a, eps, l2x2}.
// Returns the number of elements done (n rounded down to 8).
TEXT ·adamAVX512(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), DI
	MOVQ gr+8(FP), DX
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), SI
	ANDQ $-8, CX
	MOVQ CX, ret+48(FP)
	VBROADCASTSD 0(SI), Z25           // b1
	VBROADCASTSD 8(SI), Z26           // b2
	VBROADCASTSD 16(SI), Z27          // c1
	VBROADCASTSD 24(SI), Z28          // c2
	VBROADCASTSD 32(SI), Z29          // a
	VBROADCASTSD 40(SI), Z30          // eps
	VBROADCASTSD 48(SI), Z24          // l2x2
	XORQ AX, AX
	MOVQ 48(SI), BX
	SHLQ $1, BX                       // l2x2 ≠ 0 (±0 ignored)
	JZ nol2
withl2:
	CMPQ CX, $8
	JLT withl2tail
	VMOVUPD (DX)(AX*1), Z0            // g
	VMOVUPD (DI)(AX*1), Z1            // p
	VMULPD Z1, Z24, Z2
	VADDPD Z2, Z0, Z0                 // g + l2x2·p
	VMOVUPD (R8)(AX*1), Z3            // m
	VMOVUPD (R9)(AX*1), Z4            // v
	VMULPD Z3, Z25, Z3                // b1·m
	VMULPD Z0, Z27, Z5                // c1·g
	VADDPD Z5, Z3, Z3                 // m
	VMULPD Z4, Z26, Z4                // b2·v
	VMULPD Z0, Z28, Z6                // c2·g
	VMULPD Z0, Z6, Z6                 // (c2·g)·g
	VADDPD Z6, Z4, Z4                 // v
	VMOVUPD Z3, (R8)(AX*1)
	VMOVUPD Z4, (R9)(AX*1)
	VMULPD Z3, Z29, Z3                // a·m
	VSQRTPD Z4, Z4
	VADDPD Z30, Z4, Z4                // √v + eps
	VDIVPD Z4, Z3, Z3
	VSUBPD Z3, Z1, Z1                 // p − a·m/(√v + eps)
	VMOVUPD Z1, (DI)(AX*1)
	ADDQ $64, AX
	SUBQ $8, CX
	JMP withl2
withl2tail:
	JMP done
nol2:
	CMPQ CX, $8
	JLT nol2tail
	VMOVUPD (DX)(AX*1), Z0            // g
	VMOVUPD (DI)(AX*1), Z1            // p
	VMOVUPD (R8)(AX*1), Z3            // m
	VMOVUPD (R9)(AX*1), Z4            // v
	VMULPD Z3, Z25, Z3                // b1·m
	VMULPD Z0, Z27, Z5                // c1·g
	VADDPD Z5, Z3, Z3                 // m
	VMULPD Z4, Z26, Z4                // b2·v
	VMULPD Z0, Z28, Z6                // c2·g
	VMULPD Z0, Z6, Z6                 // (c2·g)·g
	VADDPD Z6, Z4, Z4                 // v
	VMOVUPD Z3, (R8)(AX*1)
	VMOVUPD Z4, (R9)(AX*1)
	VMULPD Z3, Z29, Z3                // a·m
	VSQRTPD Z4, Z4
	VADDPD Z30, Z4, Z4                // √v + eps
	VDIVPD Z4, Z3, Z3
	VSUBPD Z3, Z1, Z1                 // p − a·m/(√v + eps)
	VMOVUPD Z1, (DI)(AX*1)
	ADDQ $64, AX
	SUBQ $8, CX
	JMP nol2
nol2tail:
	JMP done
done:
	VZEROUPPER
	RET
