//go:build !purego

#include "textflag.h"

// func trmvBlocksFMA(y, x, l, z *float64, b0, nb, ds int, scale float64)
//
// Blocks b0 ≤ b < nb, y and x pointing at row 4·b0: the blocks of trmvBlocksGo (trmv.go) with its operations in its
// order. Block b (rows 4b … 4b+3) keeps one accumulator per row, Y0–Y3,
// lane ℓ summing the entries k ≡ ℓ (mod 4) of k < 4(b+1) by FMAs, each z
// block loaded once for the four rows; the lanes are added as
// (s₀+s₁)+(s₂+s₃) by two horizontal adds, two lane permutes and one add,
// giving the four rows' sums in one register; then y = x + scale·s.
TEXT ·trmvBlocksFMA(SB), NOSPLIT, $0-64
	MOVQ  y+0(FP), DI
	MOVQ  x+8(FP), SI
	MOVQ  l+16(FP), R8
	MOVQ  z+24(FP), R9
	MOVQ  b0+32(FP), R11     // block b
	MOVQ  nb+40(FP), R10
	MOVQ  ds+48(FP), R12
	SHLQ  $3, R12            // bytes per row of l
	VBROADCASTSD scale+56(FP), Y8
	MOVQ  R11, AX
	SHLQ  $2, AX
	IMULQ R12, AX
	ADDQ  AX, R8             // row 4·b0
	MOVQ  R11, AX
	SHLQ  $5, AX
	SUBQ  AX, DI             // y and x as if they pointed at row 0
	SUBQ  AX, SI

block:
	CMPQ  R11, R10
	JGE   done
	LEAQ  (R8)(R12*1), R13   // row 4b+1
	LEAQ  (R13)(R12*1), DX   // row 4b+2
	LEAQ  (DX)(R12*1), BX    // row 4b+3
	LEAQ  1(R11), CX         // b+1 blocks of four entries
	XORQ  AX, AX             // byte offset of the entry block
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

inner:
	VMOVUPD (R9)(AX*1), Y4
	VFMADD231PD (R8)(AX*1), Y4, Y0
	VFMADD231PD (R13)(AX*1), Y4, Y1
	VFMADD231PD (DX)(AX*1), Y4, Y2
	VFMADD231PD (BX)(AX*1), Y4, Y3
	ADDQ  $32, AX
	DECQ  CX
	JNZ   inner

	VHADDPD Y1, Y0, Y5             // s01 of rows 0,1 (low half), s23 (high half)
	VHADDPD Y3, Y2, Y6             // the same for rows 2,3
	VPERM2F128 $0x20, Y6, Y5, Y7   // s01 of rows 0..3
	VPERM2F128 $0x31, Y6, Y5, Y5   // s23 of rows 0..3
	VADDPD Y5, Y7, Y7
	VMULPD Y8, Y7, Y7
	MOVQ  R11, AX
	SHLQ  $5, AX                   // 32 bytes per block of y and x
	VADDPD (SI)(AX*1), Y7, Y7
	VMOVUPD Y7, (DI)(AX*1)

	LEAQ  (BX)(R12*1), R8          // row 4(b+1)
	INCQ  R11
	JMP   block

done:
	VZEROUPPER
	RET
