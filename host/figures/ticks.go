package figures

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Ticks places ticks as gonum's plot.DefaultTicks does and labels each
// major tick with enough digits to tell it from its neighbours:
// DefaultTicks labels with three significant digits below a magnitude of
// 0.1 of the spacing, so a posterior on [40.000, 40.075] got ticks
// labelled "40", "40", "40" (audit 8). A label is kept when it reads back
// within a millionth of the tick spacing of its value, else every major
// label is rewritten with the fewest digits that do.
type Ticks struct{}

// Ticks implements plot.Ticker.
func (Ticks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	var major []int
	for i, t := range ts {
		if t.Label != "" {
			major = append(major, i)
		}
	}
	// The tolerance: a millionth of the smallest spacing between major
	// ticks (of the range for a single one).
	gap := max - min
	for k := 1; k < len(major); k++ {
		gap = math.Min(gap, math.Abs(ts[major[k]].Value-ts[major[k-1]].Value))
	}
	tol := gap * 1e-6
	if len(major) == 0 || !(tol > 0) || math.IsInf(tol, 0) {
		return ts
	}
	reads := func(label string, v float64) bool {
		x, err := strconv.ParseFloat(label, 64)
		return err == nil && math.Abs(x-v) <= tol
	}
	good := true
	for _, i := range major {
		good = good && reads(ts[i].Label, ts[i].Value)
	}
	if good {
		return ts
	}
	// Fixed-point decimals for ordinary magnitudes, significant digits
	// (with an exponent where %g takes one) beyond them.
	big := 0.0
	for _, i := range major {
		big = math.Max(big, math.Abs(ts[i].Value))
	}
	format := func(v float64, n int) string { return strconv.FormatFloat(v, 'g', n, 64) }
	if big >= 1e-4 && big < 1e7 {
		format = func(v float64, n int) string { return strconv.FormatFloat(v, 'f', n-1, 64) }
	}
	for n := 1; n <= 17; n++ {
		ok := true
		for _, i := range major {
			ok = ok && reads(format(ts[i].Value, n), ts[i].Value)
		}
		if ok {
			for _, i := range major {
				ts[i].Label = format(ts[i].Value, n)
			}
			break
		}
	}
	return ts
}
