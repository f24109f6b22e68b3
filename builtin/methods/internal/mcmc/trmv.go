package mcmc

import (
	"math"
	"math/rand/v2"
)

// Walker draws random-walk proposals y = x + scale·L·z, z ~ N(0, I_d), for
// one lower-triangular factor L (Metropolis et al. 1953; the Gaussian
// random walk of TMCMC and adaptive Metropolis). It keeps L in a padded
// layout for the product kernel; set it with SetFactor before Step. A
// Walker is not safe for concurrent use.
type Walker struct {
	d, ds int       // dimension; padded stride, d rounded up to 4
	l     []float64 // L, ds×ds row-major, zero above the diagonal and in the padding
	z     []float64 // the last proposal's normal variates, ds (zero padded)
}

// SetFactor copies the lower triangle of the row-major d×d factor chol
// (the upper triangle is not read).
func (w *Walker) SetFactor(chol []float64, d int) {
	ds := (d + 3) &^ 3
	if w.ds != ds {
		w.l, w.z = make([]float64, ds*ds), make([]float64, ds)
	} else {
		clear(w.l)
		clear(w.z)
	}
	w.d, w.ds = d, ds
	for i := range d {
		copy(w.l[i*ds:i*ds+i+1], chol[i*d:i*d+i+1])
	}
}

// Step writes y = x + scale·L·z (len(y) = len(x) = d), drawing z₀ … z_{d−1}
// from rnd in order.
func (w *Walker) Step(rnd *rand.Rand, y, x []float64, scale float64) {
	d := w.d
	z := w.z[:d]
	for j := range z {
		z[j] = rnd.NormFloat64()
	}
	trmvLower(y[:d], x[:d], w.l, w.z, d, w.ds, scale)
}

// Z is the normal variates of the last Step (d values, do not modify).
func (w *Walker) Z() []float64 { return w.z[:w.d] }

// trmvLowerGo sets y[i] = x[i] + scale·Σ_k L[i,k]·z[k], i < d, for L in
// the Walker's padded layout (stride ds, zero above the diagonal and in
// the padding; z zero padded to ds): the random walk's product L·z.
//
// Its order of operations is fixed, so that it gives the same bits on
// every machine: rows go in blocks of four; row r of block b sums its
// first 4(b+1) entries in four lanes, lane ℓ taking the entries k ≡ ℓ
// (mod 4) by fused multiply-adds in order; the lanes are added as
// (s₀+s₁)+(s₂+s₃); then y = x + round(scale·s). The AVX2 kernel of
// trmv_amd64.s does exactly these operations for the whole blocks; this is
// its portable twin, used for a last partial block and where the kernel is
// not available (math.FMA is exact everywhere, in hardware or software).
func trmvLowerGo(y, x, l, z []float64, d, ds int, scale float64) {
	trmvBlocksGo(y, x, l, z, 0, d, ds, scale)
}

// trmvBlocksGo is trmvLowerGo for the rows from0 ≤ i < d, from0 a multiple
// of 4.
func trmvBlocksGo(y, x, l, z []float64, from0, d, ds int, scale float64) {
	for r0 := from0; r0 < d; r0 += 4 {
		n := r0 + 4 // entries summed by the block's rows (zeros beyond the diagonal)
		for r := r0; r < r0+4 && r < d; r++ {
			row := l[r*ds : r*ds+n]
			var a [4]float64
			for k := 0; k < n; k += 4 {
				for ln := range 4 {
					a[ln] = math.FMA(row[k+ln], z[k+ln], a[ln])
				}
			}
			s := (a[0] + a[1]) + (a[2] + a[3])
			// The conversion rounds the product, so that no compiler fuses
			// it with the addition (the kernel multiplies, then adds).
			y[r] = x[r] + float64(scale*s)
		}
	}
}
