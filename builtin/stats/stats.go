package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Scale is 1, or, when the largest finite |x| is beyond 2^500 (where the
// sums of squares, and the sums of values near ±MaxFloat64, overflow), the
// power of two s that brings the largest into [1, 2), so every finite
// |x/s| < 2 (a divisor bringing them below 1 could be 2^1024, beyond
// float64). Dividing by a power of two
// is exact (up to values that underflow, negligible beside the largest),
// so a statistic computed on x/s and scaled back is the one on x, without
// the overflow (audit 9: the sd of values near 1e160, and the mean of
// values near ±1.7e308, came out null).
func Scale(x []float64) float64 {
	big := 0.0
	for _, v := range x {
		if a := math.Abs(v); a > big && !math.IsInf(a, 0) {
			big = a
		}
	}
	if !(big > 0x1p500) {
		return 1
	}
	_, e := math.Frexp(big) // big = f·2^e, f ∈ [0.5, 1)
	return math.Ldexp(1, e-1)
}

// scaled is x/s.
func scaled(x []float64, s float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v / s
	}
	return out
}

// Mean is the arithmetic mean of x (gonum's stat.Mean, on x/Scale(x));
// NaN for an empty slice.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	if s := Scale(x); s != 1 {
		return s * stat.Mean(scaled(x, s), nil)
	}
	return stat.Mean(x, nil)
}

// MeanSD is Mean and SD together (gonum's stat.MeanStdDev, on
// x/Scale(x)); NaN for an empty slice, and SD NaN for one value.
func MeanSD(x []float64) (mean, sd float64) {
	switch len(x) {
	case 0:
		return math.NaN(), math.NaN()
	case 1:
		return x[0], math.NaN()
	}
	if s := Scale(x); s != 1 {
		m, d := stat.MeanStdDev(scaled(x, s), nil)
		return s * m, s * d
	}
	return stat.MeanStdDev(x, nil)
}

// Var is the unbiased sample variance Σ(x−x̄)²/(n−1) by gonum's
// stat.Variance: the corrected two-pass algorithm of Chan, Golub & LeVeque
// 1983 (Am. Stat. 37:242, Eq. 1.7), which subtracts the rounding error of
// the mean, (Σ(x−x̄))²/n; NaN for fewer than two values.
func Var(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	if s := Scale(x); s != 1 {
		return s * s * stat.Variance(scaled(x, s), nil) // +Inf beyond MaxFloat64
	}
	return stat.Variance(x, nil)
}

// SD is the sample standard deviation √Var (n−1 denominator), computed on
// x/Scale(x) and scaled back: finite wherever the values are, though their
// variance may overflow.
func SD(x []float64) float64 {
	if s := Scale(x); s != 1 && len(x) >= 2 {
		return s * math.Sqrt(stat.Variance(scaled(x, s), nil))
	}
	return math.Sqrt(Var(x))
}

// Quantile is the p-quantile of x by linear interpolation between order
// statistics (Hyndman & Fan 1996, definition 7; numpy's default): with the
// sorted values x₍₀₎ ≤ … ≤ x₍ₙ₋₁₎ and h = (n−1)p, Q = x₍⌊h⌋₎ +
// (h−⌊h⌋)(x₍⌊h⌋+1₎ − x₍⌊h⌋₎). x is not modified (a sorted copy is used).
// NaN for an empty slice or p outside [0, 1].
func Quantile(x []float64, p float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return QuantileSorted(s, p)
}

// QuantileSorted is Quantile for an already ascending slice.
func QuantileSorted(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	h := float64(n-1) * p // Hyndman & Fan 1996, definition 7
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Summary describes the marginal distribution of one parameter.
type Summary struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	P05  float64 `json:"p05"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
}

// Summarize computes the Summary of x (quantiles as in Quantile).
func Summarize(x []float64) Summary {
	s := slices.Clone(x)
	slices.Sort(s)
	return Summary{
		Mean: Mean(x),
		SD:   SD(x),
		P05:  QuantileSorted(s, 0.05),
		P50:  QuantileSorted(s, 0.50),
		P95:  QuantileSorted(s, 0.95),
	}
}
