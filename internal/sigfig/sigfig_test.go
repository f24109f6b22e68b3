package sigfig

import "testing"

// The digits asked for, from hand-worked rows: the last printed digit is
// the spread's second significant digit.
func TestDigits(t *testing.T) {
	for _, c := range []struct {
		least  int
		spread float64
		vals   []float64
		want   string // the first value printed with Digits
	}{
		// audit 8: a posterior 100000.23 ± 0.1587; 6 digits printed 100000.
		{6, 0.1587, []float64{100000.228, 99999.962, 100000.484}, "100000.23"},
		// A 5–95 % band of 0.52 at 1e5 (kinfer analyze, 5 digits: 1e+05):
		// the row's largest value sets the digits (8) for all of it.
		{5, 0.52233, []float64{99999.962, 100000.484}, "99999.962"},
		// The spread at the numbers' scale: the least is enough.
		{6, 1200, []float64{5012.3456}, "5012.35"},
		// 40.0195 ± 0.0125: 40.0195 needs 6 (= least), shown as is.
		{6, 0.0125, []float64{40.0195}, "40.0195"},
		{5, 0.0125, []float64{40.01935}, "40.019"},
		// No spread (one sample, sd 0, NaN): the least.
		{6, 0, []float64{100000.228}, "100000"},
		{6, -1, []float64{100000.228}, "100000"},
		// A spread at rounding level (audit 14: starts that ended at one
		// point printed 1.12599330769229): no digits from it.
		{6, 1.2e-14, []float64{1.12599330769229}, "1.12599"},
		{6, 1e-30, []float64{1.2345678901234567}, "1.23457"},
		// Just above it: resolved, at most Max digits.
		{6, 2e-11, []float64{1.2345678901234567}, "1.234567890123"},
		// Negative, tiny and zero values.
		{6, 2e-12, []float64{-3.0000000012e-3, 0}, "-0.0030000000012"},
		// ... and a difference below the spread's resolution is not shown.
		{6, 2e-9, []float64{-3.0000000012e-3, 0}, "-0.003"},
	} {
		n := Digits(c.least, c.spread, c.vals...)
		if got := G(c.vals[0], n); got != c.want {
			t.Errorf("Digits(%d, %g, %v) = %d: %s, want %s", c.least, c.spread, c.vals, n, got, c.want)
		}
	}
}
