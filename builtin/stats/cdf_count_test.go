package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// MidpointCDFRMSE (counting) equals CDFRMSE on MidpointGrid (sorting and
// searching, an independent computation), also for values exactly on grid
// points, on the bounds and outside them.
func TestMidpointCDFRMSEMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		lo, hi := -3+rng.Float64(), 2+3*rng.Float64()
		n := 1 + rng.IntN(120)
		grid, _ := MidpointGrid(lo, hi, n)
		a, b := make([]float64, 1+rng.IntN(300)), make([]float64, 1+rng.IntN(300))
		for _, s := range [][]float64{a, b} {
			for i := range s {
				switch rng.IntN(4) {
				case 0:
					s[i] = grid[rng.IntN(n)] // exactly on a grid point
				case 1:
					s[i] = []float64{lo, hi, lo - 1, hi + 1}[rng.IntN(4)]
				default:
					s[i] = lo + (hi-lo)*rng.Float64()
				}
			}
		}
		want, err := CDFRMSE(a, b, grid)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MidpointCDFRMSE(a, b, lo, hi, n)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-15 {
			t.Fatalf("trial %d: counting %v, sorting %v", trial, got, want)
		}
	}
	if _, err := MidpointCDFRMSE([]float64{math.NaN()}, []float64{1}, 0, 1, 10); err == nil {
		t.Error("NaN sample accepted")
	}
	if _, err := MidpointCDFRMSE([]float64{1}, []float64{1}, 0, math.Inf(1), 10); err == nil {
		t.Error("infinite range accepted")
	}
}
