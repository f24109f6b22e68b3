package sigfig

import (
	"math"
	"strconv"
)

// Max is the most significant digits Digits returns: a float64 holds 15
// to 17; 15 always round-trips a decimal of that many digits.
const Max = 15

// Digits is the number of significant digits that prints every one of
// vals to a tenth of the leading digit of spread (two significant digits
// of the spread), and at least least. A spread that is not finite and
// positive (a single sample, an sd of 0) asks for least; non-finite
// values and zeros are left out.
func Digits(least int, spread float64, vals ...float64) int {
	n := least
	if !(spread > 0) || math.IsInf(spread, 0) {
		return n
	}
	// The exponent of the last digit to print.
	last := int(math.Floor(math.Log10(spread))) - 1
	for _, v := range vals {
		if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		// A spread at rounding level beside the value (starts that ended
		// at one point, an sd of 1e-14 at 1.1) resolves nothing: its
		// digits would be noise (audit 14).
		if spread < 1e-12*math.Abs(v) {
			continue
		}
		n = max(n, int(math.Floor(math.Log10(math.Abs(v))))-last+1)
	}
	return min(n, max(least, Max))
}

// Format is v with Digits(least, spread, v) significant digits: the
// values of a row formatted each this way end at the same decimal place.
func Format(v float64, least int, spread float64) string {
	return G(v, Digits(least, spread, v))
}

// G formats v with n significant digits as %g does (strconv 'g').
func G(v float64, n int) string {
	return strconv.FormatFloat(v, 'g', n, 64)
}
