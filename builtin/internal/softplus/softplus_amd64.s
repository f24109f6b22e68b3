//go:build !purego

#include "textflag.h"

// The AVX-512 kernels of Softplus and Sigmoid: eight values a step, the
// operations of expNeg, log1pUnit, softplusGo and sigmoidGo (softplus.go)
// in their order, each rounded as there (VSCALEFPD rounds p·2ᵏ once), so
// the same bits. Constants come from the Go variables consts and
// expTaylor.

// func softplusAVX512(dst, z *float64, n8 int)
TEXT ·softplusAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ n8+16(FP), CX
	VBROADCASTSD ·consts+0(SB), Z31   // 1/ln 2
	VBROADCASTSD ·consts+8(SB), Z30   // ln2Hi
	VBROADCASTSD ·consts+16(SB), Z29  // ln2Lo
	VBROADCASTSD ·consts+24(SB), Z28  // minX
	VBROADCASTSD ·consts+32(SB), Z27  // 1
	VBROADCASTSD ·consts+40(SB), Z26  // 0.5
	VBROADCASTSD ·consts+48(SB), Z25  // 2
	VBROADCASTSD ·consts+56(SB), Z24  // √2
	VBROADCASTSD ·consts+64(SB), Z23  // lp7
	VBROADCASTSD ·consts+72(SB), Z22  // lp6
	VBROADCASTSD ·consts+80(SB), Z21  // lp5
	VBROADCASTSD ·consts+88(SB), Z20  // lp4
	VBROADCASTSD ·consts+96(SB), Z19  // lp3
	VBROADCASTSD ·consts+104(SB), Z18 // lp2
	VBROADCASTSD ·consts+112(SB), Z17 // lp1
	VPBROADCASTQ ·consts+120(SB), Z16 // sign bit
	VPXORQ Z15, Z15, Z15
	XORQ AX, AX
	TESTQ CX, CX
	JZ done
loop:
	VMOVUPD (SI)(AX*1), Z0            // z
	VPORQ Z16, Z0, Z1                 // x = −|z|
	VMAXPD Z1, Z28, Z1                // x = max(minX, x), NaN kept
	VMULPD Z31, Z1, Z2
	VRNDSCALEPD $0, Z2, Z2            // k = round(x/ln 2), ties to even
	VMOVAPD Z1, Z3
	VFNMADD231PD Z30, Z2, Z3          // r = x − k·ln2Hi
	VFNMADD231PD Z29, Z2, Z3          // r = r − k·ln2Lo
	VBROADCASTSD ·expTaylor+0(SB), Z4
	VFMADD213PD.BCST ·expTaylor+8(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+16(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+24(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+32(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+40(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+48(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+56(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+64(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+72(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+80(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+88(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+96(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+104(SB), Z3, Z4
	VSCALEFPD Z2, Z4, Z5              // t = p·2ᵏ = e^−|z|
	VADDPD Z27, Z5, Z6                // u = 1 + t
	VSUBPD Z27, Z6, Z7
	VSUBPD Z7, Z5, Z7                 // c = t − (u − 1)
	VCMPPD $0x1d, Z24, Z6, K1         // u ≥ √2
	VMOVAPD Z6, Z8
	VMULPD Z26, Z6, K1, Z8            // m = u or u/2
	VMOVAPD.Z Z27, K1, Z9             // kf = 0 or 1
	VSUBPD Z27, Z8, Z10               // f = m − 1
	VMULPD Z26, Z10, Z11
	VMULPD Z10, Z11, Z11              // hfsq = (0.5·f)·f
	VADDPD Z25, Z10, Z12
	VDIVPD Z12, Z10, Z12              // s = f/(2 + f)
	VMULPD Z12, Z12, Z13              // z = s²
	VMOVAPD Z23, Z14
	VFMADD213PD Z22, Z13, Z14
	VFMADD213PD Z21, Z13, Z14
	VFMADD213PD Z20, Z13, Z14
	VFMADD213PD Z19, Z13, Z14
	VFMADD213PD Z18, Z13, Z14
	VFMADD213PD Z17, Z13, Z14         // q
	VMULPD Z14, Z13, Z14              // R = z·q
	VDIVPD Z6, Z7, Z7                 // c/u
	VFMADD231PD Z29, Z9, Z7           // x = kf·ln2Lo + c/u
	VADDPD Z14, Z11, Z14              // hfsq + R
	VFMADD231PD Z14, Z12, Z7          // y = s·(hfsq + R) + x
	VSUBPD Z7, Z11, Z7                // hfsq − y
	VSUBPD Z10, Z7, Z7                // v = (hfsq − y) − f
	VFMSUB231PD Z30, Z9, Z7           // ln(1 + t) = kf·ln2Hi − v
	VMAXPD Z15, Z0, Z8                // max(z, 0)
	VADDPD Z7, Z8, Z8
	VMOVUPD Z8, (DI)(AX*1)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func sigmoidAVX512(dst, z *float64, n8 int)
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ n8+16(FP), CX
	VBROADCASTSD ·consts+0(SB), Z31   // 1/ln 2
	VBROADCASTSD ·consts+8(SB), Z30   // ln2Hi
	VBROADCASTSD ·consts+16(SB), Z29  // ln2Lo
	VBROADCASTSD ·consts+24(SB), Z28  // minX
	VBROADCASTSD ·consts+32(SB), Z27  // 1
	VBROADCASTSD ·consts+40(SB), Z26  // 0.5
	VBROADCASTSD ·consts+48(SB), Z25  // 2
	VBROADCASTSD ·consts+56(SB), Z24  // √2
	VBROADCASTSD ·consts+64(SB), Z23  // lp7
	VBROADCASTSD ·consts+72(SB), Z22  // lp6
	VBROADCASTSD ·consts+80(SB), Z21  // lp5
	VBROADCASTSD ·consts+88(SB), Z20  // lp4
	VBROADCASTSD ·consts+96(SB), Z19  // lp3
	VBROADCASTSD ·consts+104(SB), Z18 // lp2
	VBROADCASTSD ·consts+112(SB), Z17 // lp1
	VPBROADCASTQ ·consts+120(SB), Z16 // sign bit
	VPXORQ Z15, Z15, Z15
	XORQ AX, AX
	TESTQ CX, CX
	JZ done
loop:
	VMOVUPD (SI)(AX*1), Z0            // z
	VPORQ Z16, Z0, Z1                 // x = −|z|
	VMAXPD Z1, Z28, Z1                // x = max(minX, x), NaN kept
	VMULPD Z31, Z1, Z2
	VRNDSCALEPD $0, Z2, Z2            // k = round(x/ln 2), ties to even
	VMOVAPD Z1, Z3
	VFNMADD231PD Z30, Z2, Z3          // r = x − k·ln2Hi
	VFNMADD231PD Z29, Z2, Z3          // r = r − k·ln2Lo
	VBROADCASTSD ·expTaylor+0(SB), Z4
	VFMADD213PD.BCST ·expTaylor+8(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+16(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+24(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+32(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+40(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+48(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+56(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+64(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+72(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+80(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+88(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+96(SB), Z3, Z4
	VFMADD213PD.BCST ·expTaylor+104(SB), Z3, Z4
	VSCALEFPD Z2, Z4, Z5              // t = p·2ᵏ = e^−|z|
	VADDPD Z27, Z5, Z6                // 1 + t
	VCMPPD $0x1d, Z15, Z0, K1         // z ≥ 0
	VMOVAPD Z5, Z7
	VMOVAPD Z27, K1, Z7               // n = 1 or t
	VDIVPD Z6, Z7, Z8                 // n/(1 + t)
	VMOVUPD Z8, (DI)(AX*1)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

