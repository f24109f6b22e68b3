package nn

import (
	"math"
	"testing"
)

// A constant input is normalised by 1 around its value, decided on the
// values: three 0.05s have a computed mean of 0.05000000000000002 and an
// sd of 2.8e-17, which made any other value 1e15 standard deviations away
// (audit 15). A varying column keeps its mean and population sd.
func TestMeanSDConstantColumn(t *testing.T) {
	x := []float64{0.05, 1, 0.05, 2, 0.05, 3}
	mean, sd := meanSD(x, 3, 2)
	if mean[0] != 0.05 || sd[0] != 1 {
		t.Errorf("constant column: mean %v sd %v, want 0.05 and 1", mean[0], sd[0])
	}
	if mean[1] != 2 || math.Abs(sd[1]-math.Sqrt(2.0/3)) > 1e-15 {
		t.Errorf("varying column: mean %v sd %v, want 2 and √(2/3)", mean[1], sd[1])
	}
}
