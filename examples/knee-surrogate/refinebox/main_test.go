package main

import (
	"math"
	"testing"
)

// quantile follows numpy.quantile's default ("linear", Hyndman & Fan type
// 7); the expected values are numpy 1.24's for the same inputs.
func TestQuantile(t *testing.T) {
	x := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {0.25, 2}, {0.5, 3}, {0.9, 4.6}, {0.995, 4.98}, {1, 5},
	} {
		if got := quantile(x, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile(%g) = %g, want %g", c.q, got, c.want)
		}
	}
	if x[0] != 5 {
		t.Error("quantile sorted its input in place")
	}
}
