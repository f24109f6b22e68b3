package testfunc

import (
	"math"
	"testing"
)

// The value at the published minimiser is the published minimum,
// −3.32237 (Surjanovic & Bingham), to its 6 digits.
func TestHartmann6Minimum(t *testing.T) {
	xs := []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}
	if v := Hartmann6(xs); math.Abs(v+3.32237) > 1e-5 {
		t.Fatalf("hartmann6 at its minimiser = %v, want −3.32237", v)
	}
}
