package lsq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// norm2 agrees with gonum's floats.Norm to rounding at every length, and
// does not overflow or underflow where xᵀx would (a former version
// returned 0 for (3, 4)·1e-200, whose squares underflow).
func TestDotNorm2MatchGonum(t *testing.T) {
	const agreeTol = 1e-14
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		scale := 1.0
		for _, v := range x {
			scale += math.Abs(v) * math.Abs(v)
		}
		if d, g := dot(x, y), floats.Dot(x, y); math.Abs(d-g) > agreeTol*scale {
			t.Errorf("n=%d: dot %v, gonum %v", n, d, g)
		}
		if d, g := norm2(x), floats.Norm(x, 2); math.Abs(d-g) > agreeTol*math.Max(g, 1) {
			t.Errorf("n=%d: norm2 %v, gonum %v", n, d, g)
		}
	}
	for _, s := range []float64{1e-200, 1e200} {
		x := []float64{3 * s, 4 * s}
		if got := norm2(x); math.Abs(got/(5*s)-1) > agreeTol {
			t.Errorf("norm2(%v) = %v, want %v", x, got, 5*s)
		}
	}
}

// BenchmarkDot: a plain loop against gonum's floats.Dot for the short
// vectors of a small least-squares problem and beyond the switch-over at
// 32 (RATIONALE.md, "Why does lsq keep a plain dot product below 32
// values?").
func BenchmarkDot(b *testing.B) {
	for _, n := range []int{3, 8, 16, 32, 128} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i)+0.5, 1/(float64(i)+1)
		}
		loop := func(x, y []float64) float64 {
			s := 0.0
			for i, v := range x {
				s += v * y[i]
			}
			return s
		}
		var sink float64
		b.Run(fmt.Sprintf("loop/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				sink += loop(x, y)
			}
		})
		b.Run(fmt.Sprintf("gonum/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				sink += floats.Dot(x, y)
			}
		})
		_ = sink
	}
}
