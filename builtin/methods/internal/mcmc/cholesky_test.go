package mcmc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// banachiewicz is the hand-written Cholesky–Banachiewicz loop (Golub & Van
// Loan 2013, Sec. 4.2) that Cholesky replaced: the reference of
// TestCholeskyMatchesBanachiewicz and the "hand" row of BenchmarkCholesky.
func banachiewicz(a []float64, d int) ([]float64, bool) {
	l := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			s := a[i*d+j]
			for k := range j {
				s -= l[i*d+k] * l[j*d+k]
			}
			if i == j {
				if !(s > 0) || math.IsInf(s, 1) {
					return nil, false
				}
				l[i*d+i] = math.Sqrt(s)
			} else {
				l[i*d+j] = s / l[j*d+j]
			}
		}
	}
	return l, true
}

// matCholesky is Cholesky through mat.Cholesky (with its condition
// estimate): the "mat" row of BenchmarkCholesky.
func matCholesky(a []float64, d int) ([]float64, bool) {
	s := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			s[i*d+j], s[j*d+i] = a[i*d+j], a[i*d+j]
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(d, s)) {
		return nil, false
	}
	var t mat.TriDense
	ch.LTo(&t)
	raw := t.RawTriangular()
	l := make([]float64, d*d)
	for i := range d {
		copy(l[i*d:i*d+i+1], raw.Data[i*raw.Stride:i*raw.Stride+i+1])
	}
	return l, true
}

// spd is B·Bᵀ + I for a standard normal B: positive definite.
func spd(d int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 2))
	b := make([]float64, d*d)
	for i := range b {
		b[i] = r.NormFloat64()
	}
	a := make([]float64, d*d)
	for i := range d {
		for j := range d {
			for k := range d {
				a[i*d+j] += b[i*d+k] * b[j*d+k]
			}
		}
		a[i*d+i]++
	}
	return a
}

// lapack64.Potrf gives the factor of the former hand-written loop to
// rounding (cholAgreeTol relative to the row's diagonal: dpotf2 scales a
// column by the reciprocal of its pivot, the loop divided); the same answers for indefinite, NaN and infinite input; and the
// empty matrix.
func TestCholeskyMatchesBanachiewicz(t *testing.T) {
	const cholAgreeTol = 1e-13
	for _, d := range []int{1, 2, 3, 5, 10, 30, 50} {
		for seed := uint64(1); seed <= 3; seed++ {
			a := spd(d, seed)
			want, _ := banachiewicz(a, d)
			got, ok := Cholesky(a, d)
			if !ok {
				t.Fatalf("d=%d: Cholesky failed on a positive definite matrix", d)
			}
			for i := range d {
				for j := 0; j <= i; j++ {
					g, w := got[i*d+j], want[i*d+j]
					if math.Abs(g-w) > cholAgreeTol*want[i*d+i] {
						t.Errorf("d=%d L[%d,%d] = %v, hand-written loop %v", d, i, j, g, w)
					}
				}
			}
		}
	}
	for _, a := range [][]float64{{1, 2, 2, 1}, {1, 0, math.NaN(), 1}, {math.Inf(1), 0, 0, 1}, {1, 0, math.Inf(1), 1}, {0, 0, 0, 1}} {
		_, okHand := banachiewicz(a, 2)
		if _, ok := Cholesky(a, 2); ok || okHand {
			t.Errorf("%v: Cholesky ok=%v, hand-written ok=%v, want both false", a, ok, okHand)
		}
	}
	if l, ok := Cholesky(nil, 0); !ok || len(l) != 0 {
		t.Error("the empty matrix")
	}
}

// BenchmarkCholesky: lapack64.Potrf (Cholesky) against the hand-written
// loop it replaced and mat.Cholesky (RATIONALE.md, "Why lapack64.Potrf and
// not mat.Cholesky?").
func BenchmarkCholesky(b *testing.B) {
	for _, d := range []int{2, 5, 10, 30} {
		a := spd(d, 1)
		for _, f := range []struct {
			name string
			fn   func([]float64, int) ([]float64, bool)
		}{{"potrf", Cholesky}, {"hand", banachiewicz}, {"mat", matCholesky}} {
			b.Run(fmt.Sprintf("%s/d=%d", f.name, d), func(b *testing.B) {
				for range b.N {
					f.fn(a, d)
				}
			})
		}
	}
}
