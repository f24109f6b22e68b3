package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Mean is the arithmetic mean of x (gonum's stat.Mean); NaN for an empty
// slice.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return stat.Mean(x, nil)
}

// Var is the unbiased sample variance Σ(x−x̄)²/(n−1) by gonum's
// stat.Variance: the corrected two-pass algorithm of Chan, Golub & LeVeque
// 1983 (Am. Stat. 37:242, Eq. 1.7), which subtracts the rounding error of
// the mean, (Σ(x−x̄))²/n; NaN for fewer than two values.
func Var(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	return stat.Variance(x, nil)
}

// SD is the sample standard deviation √Var (n−1 denominator).
func SD(x []float64) float64 { return math.Sqrt(Var(x)) }

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
