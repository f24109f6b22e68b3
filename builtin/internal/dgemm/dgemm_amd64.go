//go:build !purego

package dgemm

import "golang.org/x/sys/cpu"

// The assembly kernels of dgemm_amd64.s.
//
//go:noescape
func k4x32AVX512(k int, a, b *float64, ldb int, c *float64, ldc int, load int)

//go:noescape
func k1x32AVX512(k int, a, b *float64, ldb int, c *float64, load int)

//go:noescape
func k4x8AVX2(k int, a, b *float64, ldb int, c *float64, ldc int, load int)

//go:noescape
func k1x8AVX2(k int, a, b *float64, ldb int, c *float64, load int)

//go:noescape
func k4x32AVX512F32(k int, a *float64, b *float32, ldb int, c *float64, ldc int, load int)

//go:noescape
func k1x32AVX512F32(k int, a *float64, b *float32, ldb int, c *float64, load int)

//go:noescape
func k4x8AVX2F32(k int, a *float64, b *float32, ldb int, c *float64, ldc int, load int)

//go:noescape
func k1x8AVX2F32(k int, a *float64, b *float32, ldb int, c *float64, load int)

//go:noescape
func k1x64AVX512(k int, a *float64, b, b2 *float64, ldb int, c *float64, load int)

//go:noescape
func k1x64AVX512F32(k int, a *float64, b, b2 *float32, ldb int, c *float64, load int)

//go:noescape
func k12x16AVX512(k int, a *float64, b *float64, ldb int, c *float64, ldc int, load int)

//go:noescape
func k12x16AVX512F32(k int, a *float64, b *float32, ldb int, c *float64, ldc int, load int)

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The wrappers check once what a kernel reads and writes.
var avx512 = &kernels{name: "avx512", nr: 32,
	k4: func(k int, a, b []float64, ldb int, c []float64, ldc int, load bool) {
		_, _, _ = a[4*k-1], b[(k-1)*ldb+31], c[3*ldc+31]
		k4x32AVX512(k, &a[0], &b[0], ldb, &c[0], ldc, flag(load))
	},
	k1: func(k int, a, b []float64, ldb int, c []float64, load bool) {
		_, _, _ = a[k-1], b[(k-1)*ldb+31], c[31]
		k1x32AVX512(k, &a[0], &b[0], ldb, &c[0], flag(load))
	},
	k4s: func(k int, a []float64, b []float32, ldb int, c []float64, ldc int, load bool) {
		_, _, _ = a[4*k-1], b[(k-1)*ldb+31], c[3*ldc+31]
		k4x32AVX512F32(k, &a[0], &b[0], ldb, &c[0], ldc, flag(load))
	},
	k1s: func(k int, a []float64, b []float32, ldb int, c []float64, load bool) {
		_, _, _ = a[k-1], b[(k-1)*ldb+31], c[31]
		k1x32AVX512F32(k, &a[0], &b[0], ldb, &c[0], flag(load))
	},
	k1p: func(k int, a, b, b2 []float64, b32, b232 []float32, ldb int, c []float64, load bool) {
		_, _ = a[k-1], c[63]
		if b32 != nil {
			_, _ = b32[(k-1)*ldb+31], b232[(k-1)*ldb+31]
			k1x64AVX512F32(k, &a[0], &b32[0], &b232[0], ldb, &c[0], flag(load))
			return
		}
		_, _ = b[(k-1)*ldb+31], b2[(k-1)*ldb+31]
		k1x64AVX512(k, &a[0], &b[0], &b2[0], ldb, &c[0], flag(load))
	},
	k12: func(k int, a []float64, b []float64, b32 []float32, ldb int, c []float64, ldc int, load bool) {
		_, _ = a[12*k-1], c[11*ldc+15]
		if b32 != nil {
			_ = b32[(k-1)*ldb+15]
			k12x16AVX512F32(k, &a[0], &b32[0], ldb, &c[0], ldc, flag(load))
			return
		}
		_ = b[(k-1)*ldb+15]
		k12x16AVX512(k, &a[0], &b[0], ldb, &c[0], ldc, flag(load))
	},
}

var avx2 = &kernels{name: "avx2", nr: 8,
	k4: func(k int, a, b []float64, ldb int, c []float64, ldc int, load bool) {
		_, _, _ = a[4*k-1], b[(k-1)*ldb+7], c[3*ldc+7]
		k4x8AVX2(k, &a[0], &b[0], ldb, &c[0], ldc, flag(load))
	},
	k1: func(k int, a, b []float64, ldb int, c []float64, load bool) {
		_, _, _ = a[k-1], b[(k-1)*ldb+7], c[7]
		k1x8AVX2(k, &a[0], &b[0], ldb, &c[0], flag(load))
	},
	k4s: func(k int, a []float64, b []float32, ldb int, c []float64, ldc int, load bool) {
		_, _, _ = a[4*k-1], b[(k-1)*ldb+7], c[3*ldc+7]
		k4x8AVX2F32(k, &a[0], &b[0], ldb, &c[0], ldc, flag(load))
	},
	k1s: func(k int, a []float64, b []float32, ldb int, c []float64, load bool) {
		_, _, _ = a[k-1], b[(k-1)*ldb+7], c[7]
		k1x8AVX2F32(k, &a[0], &b[0], ldb, &c[0], flag(load))
	},
}

// available lists the kernels this CPU runs, fastest first.
var available = func() []*kernels {
	var ks []*kernels
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		ks = append(ks, avx512)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2)
	}
	return append(ks, portable)
}()

var best = available[0]
