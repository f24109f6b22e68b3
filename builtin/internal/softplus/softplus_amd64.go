//go:build !purego

package softplus

import (
	"math"

	"golang.org/x/sys/cpu"
)

// Kernel names the implementation in use: "avx512" or "portable".
var Kernel = func() string {
	if cpu.X86.HasAVX512F {
		return "avx512"
	}
	return "portable"
}()

// consts are the constants of softplus.go in the order softplus_amd64.s
// reads them.
var consts = [16]float64{invLn2, ln2Hi, ln2Lo, minX, 1, 0.5, 2, math.Sqrt2,
	lp7, lp6, lp5, lp4, lp3, lp2, lp1, math.Float64frombits(1 << 63)}

//go:noescape
func softplusAVX512(dst, z *float64, n8 int)

//go:noescape
func sigmoidAVX512(dst, z *float64, n8 int)

// vectorSoftplus computes the whole blocks of eight values and returns how
// many it did.
func vectorSoftplus(dst, z []float64) int {
	n8 := len(z) / 8
	if Kernel != "avx512" || n8 == 0 {
		return 0
	}
	_ = dst[8*n8-1]
	softplusAVX512(&dst[0], &z[0], n8)
	return 8 * n8
}

func vectorSigmoid(dst, z []float64) int {
	n8 := len(z) / 8
	if Kernel != "avx512" || n8 == 0 {
		return 0
	}
	_ = dst[8*n8-1]
	sigmoidAVX512(&dst[0], &z[0], n8)
	return 8 * n8
}
