package run

import (
	"math"
	"testing"
)

// Resolution: the larger of the sd and a finite positive standard error
// of θ; the sd alone for standard errors of x or missing ones.
func TestResolution(t *testing.T) {
	ses := []StandardError{{Name: "k", Value: 78.78}, {Name: "e", Value: math.NaN()}, {Name: "z", Value: 1e-9}}
	for _, c := range []struct {
		name    string
		sd      float64
		ofTheta bool
		want    float64
	}{
		{"k", 5e-8, true, 78.78}, // starts' noise: the SE
		{"k", 5e-8, false, 5e-8}, // SEs of x: not θ's
		{"k", 300, true, 300},    // starts in different minima: their spread
		{"e", 1e-12, true, 1e-12},
		{"z", 1e-3, true, 1e-3},
		{"q", 2, true, 2},
		{"k", math.NaN(), true, 78.78}, // one start: no sd
	} {
		if got := Resolution(c.name, c.sd, ses, c.ofTheta); got != c.want {
			t.Errorf("Resolution(%s, %g, %v) = %g, want %g", c.name, c.sd, c.ofTheta, got, c.want)
		}
	}
}
