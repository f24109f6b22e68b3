//go:build !purego

package mcmc

import "golang.org/x/sys/cpu"

// hasFMA says whether this CPU runs trmvBlocksFMA (AVX2 and FMA3).
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// trmvBlocksFMA is trmvBlocksGo for the blocks b0 ≤ b < nb of four rows
// in AVX2 assembly (trmv_amd64.s), with the same operations in the same
// order, so the same bits. y and x point at row 4·b0 and hold 4·(nb−b0)
// values, l is the padded ds×ds factor, z holds ds values.
//
//go:noescape
func trmvBlocksFMA(y, x, l, z *float64, b0, nb, ds int, scale float64)

// trmvLower is the random walk's L·z product (see trmvLowerGo): the AVX2
// kernel where the CPU has it, the portable code elsewhere. A last partial
// block of rows goes through a padded copy of its x and y.
func trmvLower(y, x, l, z []float64, d, ds int, scale float64) {
	if !hasFMA || d == 0 {
		trmvLowerGo(y, x, l, z, d, ds, scale)
		return
	}
	// What the kernel reads, checked once.
	_, _, _, _ = y[d-1], x[d-1], l[ds*ds-1], z[ds-1]
	nb := d / 4
	if nb > 0 {
		trmvBlocksFMA(&y[0], &x[0], &l[0], &z[0], 0, nb, ds, scale)
	}
	if r0 := 4 * nb; r0 < d {
		var xs, ys [4]float64
		copy(xs[:], x[r0:d])
		trmvBlocksFMA(&ys[0], &xs[0], &l[0], &z[0], nb, nb+1, ds, scale)
		copy(y[r0:d], ys[:])
	}
}
