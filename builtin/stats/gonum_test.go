package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// Mean and Var (gonum) agree with the plain sum and the textbook two-pass
// variance to rounding on a sample with a large offset, where the naive
// one-pass Σx² − n·x̄² would lose every digit.
func TestMeanVarMatchTwoPass(t *testing.T) {
	const agreeTol = 1e-12
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 10001)
	for i := range x {
		x[i] = 1e9 + rng.NormFloat64()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	v := ss / float64(len(x)-1)
	if got := Mean(x); math.Abs(got-m) > agreeTol*m {
		t.Errorf("Mean = %v, plain sum %v", got, m)
	}
	if got := Var(x); math.Abs(got-v) > 1e-6*v || math.Abs(got-1) > 0.05 {
		t.Errorf("Var = %v, two-pass %v (want ≈ 1)", got, v)
	}
}

// gonum's stat.Quantile is not Hyndman & Fan's definition 7 (summary.json's
// p05/p50/p95, numpy's and R's default): on {1, 2, 3, 4} its LinInterp
// gives 2 for the median (definition 4, interpolating the ECDF at p·n),
// Empirical gives 2 (definition 1), definition 7 gives 2.5. This is why
// QuantileSorted stays (RATIONALE.md).
func TestGonumQuantileIsNotType7(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	if got := Quantile(x, 0.5); got != 2.5 {
		t.Fatalf("Quantile = %v, want 2.5", got)
	}
	lin, emp := stat.Quantile(0.5, stat.LinInterp, x, nil), stat.Quantile(0.5, stat.Empirical, x, nil)
	if lin == 2.5 || emp == 2.5 {
		t.Fatalf("gonum gives %v (LinInterp) and %v (Empirical): if one is definition 7 now, use it", lin, emp)
	}
	// Definition 4 at p = 0.9: p·n = 3.6, 3 + 0.6·(4−3).
	if got := stat.Quantile(0.9, stat.LinInterp, x, nil); math.Abs(got-3.6) > 1e-12 {
		t.Errorf("gonum LinInterp(0.9) = %v, want definition 4's 3.6", got)
	}
}

// ECDF equals gonum's stat.CDF (Empirical: the fraction of the sample ≤ q)
// at every grid point, ties and points outside the sample included.
func TestECDFMatchesGonumCDF(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		x := make([]float64, 1+rng.IntN(200))
		for i := range x {
			x[i] = math.Round(10*rng.NormFloat64()) / 4 // many ties
		}
		grid := make([]float64, 40)
		for g := range grid {
			grid[g] = math.Round(12*rng.NormFloat64()) / 4
		}
		got, err := ECDF(x, grid)
		if err != nil {
			t.Fatal(err)
		}
		s := slices.Clone(x)
		slices.Sort(s)
		for g, q := range grid {
			if want := stat.CDF(q, stat.Empirical, s, nil); got[g] != want {
				t.Fatalf("trial %d: ECDF(%v) = %v, gonum %v", trial, q, got[g], want)
			}
		}
	}
}

// BenchmarkECDF: ECDF (sort once, binary search per grid point) against
// gonum's stat.CDF on the sorted sample (a scan per point), for n samples
// and a grid of 100 points (RATIONALE.md, "Why are the sample quantile and
// the ECDF hand-written?").
func BenchmarkECDF(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		grid, _ := MidpointGrid(-4, 4, DefaultGridPoints)
		b.Run(fmt.Sprintf("search/n=%d", n), func(b *testing.B) {
			for range b.N {
				ECDF(x, grid)
			}
		})
		b.Run(fmt.Sprintf("gonum/n=%d", n), func(b *testing.B) {
			for range b.N {
				s := slices.Clone(x)
				slices.Sort(s)
				f := make([]float64, len(grid))
				for g, q := range grid {
					f[g] = stat.CDF(q, stat.Empirical, s, nil)
				}
			}
		})
	}
}
