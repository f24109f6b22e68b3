package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/builtin/stats"
)

// Percentiles of the spread (Sec. 2.5, Table 5).
const (
	SpreadLow  = 0.05
	SpreadHigh = 0.95
)

// Spread is one parameter's 5th–95th percentile spread (Table 5).
type Spread struct {
	P05, P95 float64
	// Absolute is P95 − P05, in the parameter's unit.
	Absolute float64
	// Range is upper − lower of the prior.
	Range float64
	// Relative is Absolute/Range, a fraction (Table 5 gives percent); NaN
	// when the prior range is not finite.
	Relative float64
}

// PercentileSpread is the Spread of the samples x of a parameter whose
// prior range is [lower, upper] (definition-7 percentiles, see the package
// documentation). x is not modified.
func PercentileSpread(x []float64, lower, upper float64) (Spread, error) {
	if len(x) == 0 {
		return Spread{}, errors.New("analysis: spread of no samples")
	}
	if err := checkFinite("sample", x); err != nil {
		return Spread{}, err
	}
	if math.IsNaN(lower) || math.IsNaN(upper) || !(lower < upper) {
		return Spread{}, fmt.Errorf("analysis: prior range [%g, %g]: want lower < upper", lower, upper)
	}
	s := slices.Clone(x)
	slices.Sort(s)
	sp := Spread{P05: stats.QuantileSorted(s, SpreadLow), P95: stats.QuantileSorted(s, SpreadHigh), Range: upper - lower}
	sp.Absolute = sp.P95 - sp.P05
	sp.Relative = math.NaN()
	if !math.IsInf(sp.Range, 0) {
		sp.Relative = sp.Absolute / sp.Range
	}
	return sp, nil
}

// checkFinite refuses a NaN or infinite value of xs.
func checkFinite(what string, xs []float64) error {
	for i, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("analysis: %s %d is %g", what, i, v)
		}
	}
	return nil
}

// Definitions of a prior's range (PriorRange).
const (
	// RangeSupport: upper − lower of a uniform prior's (truncated)
	// support, Bartsoen et al.'s prior range (their priors are uniform).
	RangeSupport = "support"
	// RangeCentral90: for any other prior, the width of the uniform prior
	// whose central 90 % interval is the (truncated) prior's:
	// (q(0.95) − q(0.05)) / 0.9, q the truncated prior's quantile function.
	RangeCentral90 = "central-90/0.9"
)

// PriorRange is the prior range that the spread of a parameter is
// compared with (Spread.Relative = Absolute / range), for the prior d
// truncated to the parameter's bounds [lo, hi], and which definition it
// is. For a uniform prior it is the support's width hi − lo (the figures
// of Bartsoen et al. 2023, Table 5). A normal, lognormal or truncated
// normal prior has no width that says how wide it is — its support is
// the model's bounds (±1e6 for the line model), so a posterior spread of
// 0.7 under a normal(0, 1) prior showed as 0.0 % of it — so its range is
// the width of the uniform whose central 90 % interval, the interval the
// posterior's spread is measured on, equals the prior's: (q(0.95) −
// q(0.05)) / 0.9 with q the quantile function of d truncated to [lo, hi]
// (prior.Truncate). For a uniform prior that formula is exactly hi − lo,
// so both definitions agree, and a posterior equal to its prior has a
// relative spread of 0.9 whatever the prior.
func PriorRange(d prior.Dist, lo, hi float64) (float64, string, error) {
	if _, ok := d.(prior.Uniform); ok {
		return hi - lo, RangeSupport, nil
	}
	q, _, err := prior.Truncate(d, lo, hi)
	if err != nil {
		return 0, "", err
	}
	return (q(SpreadHigh) - q(SpreadLow)) / (SpreadHigh - SpreadLow), RangeCentral90, nil
}
