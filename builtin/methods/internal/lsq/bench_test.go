package lsq

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func randProblem(n, p int, seed uint64) (jac, r, d []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	jac = make([]float64, n*p)
	for i := range jac {
		jac[i] = rng.NormFloat64()
	}
	r = make([]float64, n)
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	d = make([]float64, p)
	for j := range d {
		d[j] = 1
	}
	return
}

func BenchmarkSmall(b *testing.B) {
	for _, sz := range [][2]int{{14, 2}, {154, 3}, {250, 8}} {
		n, p := sz[0], sz[1]
		jac, r, _ := randProblem(n, p, 1)
		free := make([]int, p)
		for j := range free {
			free[j] = j
		}
		b.Run(fmt.Sprintf("factorize_n%d_p%d", n, p), func(b *testing.B) {
			for b.Loop() {
				Factorize(jac, r, p)
			}
		})
		f, _ := Factorize(jac, r, p)
		b.Run(fmt.Sprintf("sub_n%d_p%d", n, p), func(b *testing.B) {
			for b.Loop() {
				f.NewSub(free)
			}
		})
	}
}

// BenchmarkIterationJacksonSize is the method's own linear algebra for one
// Levenberg–Marquardt iteration at the size of Jackson et al. (2016)'s
// foot-contact calibration (about 150 parameters; 10 000 residuals): the
// factorisation of [J·D⁻¹ | r] (QR), the SVD of the free columns of R,
// the trust-region λ and the step, and the predicted reduction, on a
// random J. The residual and Jacobian evaluation (the host's, by finite
// differences: 151 model evaluations) is not included.
func BenchmarkIterationJacksonSize(b *testing.B) {
	const n, p = 10_000, 150
	jac, r, _ := randProblem(n, p, 2)
	free := make([]int, p)
	for j := range free {
		free[j] = j
	}
	pt := make([]float64, p)
	b.Run("factorize", func(b *testing.B) {
		for b.Loop() {
			Factorize(jac, r, p)
		}
	})
	f, _ := Factorize(jac, r, p)
	b.Run("svd_step", func(b *testing.B) {
		for b.Loop() {
			s, _ := f.NewSub(free)
			lambda := s.SolveTrustRegion(1e-3, 0, 1e-12)
			s.Step(lambda, 1e-12, pt)
			s.Reduction(pt)
		}
	})
	b.Run("iteration", func(b *testing.B) {
		for b.Loop() {
			f, _ := Factorize(jac, r, p)
			s, _ := f.NewSub(free)
			lambda := s.SolveTrustRegion(1e-3, 0, 1e-12)
			s.Step(lambda, 1e-12, pt)
			s.Reduction(pt)
		}
	})
}
