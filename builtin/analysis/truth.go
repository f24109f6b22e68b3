package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/kinfer/kinfer/builtin/stats"
)

// Truth is the check of one parameter's known true value against its
// posterior samples (see the package documentation, "Checking against a
// known truth").
type Truth struct {
	// Truth is the true value checked.
	Truth float64
	// P05 and P95 bound the central 90 % band (SpreadLow, SpreadHigh).
	P05, P95 float64
	// Percentile is the posterior probability of a value below the truth:
	// the weighted fraction of samples below it, samples equal to it
	// counting half, in [0, 1].
	Percentile float64
	// Inside is P05 ≤ Truth ≤ P95.
	Inside bool
}

// CheckTruth checks truth against the samples x of one parameter, with
// weights w (nil: equal weights). x and w are not modified.
func CheckTruth(x, w []float64, truth float64) (Truth, error) {
	if math.IsNaN(truth) || math.IsInf(truth, 0) {
		return Truth{}, fmt.Errorf("analysis: truth %g is not finite", truth)
	}
	if len(x) == 0 {
		return Truth{}, errors.New("analysis: truth check with no samples")
	}
	if err := checkFinite("sample", x); err != nil {
		return Truth{}, err
	}
	r := Truth{Truth: truth}
	if w == nil {
		s := slices.Clone(x)
		slices.Sort(s)
		r.P05, r.P95 = stats.QuantileSorted(s, SpreadLow), stats.QuantileSorted(s, SpreadHigh)
		below := sort.SearchFloat64s(s, truth)                                         // first ≥ truth
		equal := sort.Search(len(s), func(i int) bool { return s[i] > truth }) - below // = truth
		r.Percentile = (float64(below) + 0.5*float64(equal)) / float64(len(s))
	} else {
		xs, ws, err := sortWeighted(x, w)
		if err != nil {
			return Truth{}, err
		}
		r.P05, r.P95 = weightedQuantileSorted(xs, ws, SpreadLow), weightedQuantileSorted(xs, ws, SpreadHigh)
		var below, equal, total float64
		for i, v := range xs {
			switch {
			case v < truth:
				below += ws[i]
			case v == truth:
				equal += ws[i]
			}
			total += ws[i]
		}
		r.Percentile = (below + 0.5*equal) / total
	}
	r.Inside = r.P05 <= truth && truth <= r.P95
	return r, nil
}

// WeightedQuantile is the p-quantile of the samples x with weights w (see
// the package documentation: the midpoint rule, Hyndman & Fan 1996's
// definition 5 for equal weights). x and w are not modified.
func WeightedQuantile(x, w []float64, p float64) (float64, error) {
	if len(x) == 0 {
		return math.NaN(), errors.New("analysis: quantile of no samples")
	}
	if !(p >= 0 && p <= 1) {
		return math.NaN(), fmt.Errorf("analysis: quantile %g outside [0, 1]", p)
	}
	if err := checkFinite("sample", x); err != nil {
		return math.NaN(), err
	}
	xs, ws, err := sortWeighted(x, w)
	if err != nil {
		return math.NaN(), err
	}
	return weightedQuantileSorted(xs, ws, p), nil
}

// sortWeighted checks the weights and returns the samples of positive
// weight sorted ascending with their weights normalised to sum 1.
func sortWeighted(x, w []float64) ([]float64, []float64, error) {
	if len(w) != len(x) {
		return nil, nil, fmt.Errorf("analysis: %d weights for %d samples", len(w), len(x))
	}
	idx := make([]int, 0, len(x))
	largest := 0.0
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, nil, fmt.Errorf("analysis: weight %d is %g: want finite and ≥ 0", i, v)
		}
		if v > 0 {
			idx = append(idx, i)
			largest = math.Max(largest, v)
		}
	}
	// The sum of the weights scaled by the largest: a sum of finite
	// weights near 1e306 would overflow.
	total := 0.0
	for _, i := range idx {
		total += w[i] / largest
	}
	if len(idx) == 0 {
		return nil, nil, errors.New("analysis: every weight is 0")
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	xs, ws := make([]float64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		xs[k], ws[k] = x[i], w[i]/largest/total
	}
	return xs, ws, nil
}

// weightedQuantileSorted is the midpoint-rule quantile of ascending xs
// with positive weights ws summing to 1: sample k sits at the middle of its
// weight, c_k = Σ_{i<k} w_i + w_k/2; Q(p) interpolates linearly between
// the samples around p and is the smallest (largest) sample for p ≤ c_1
// (p ≥ c_n).
func weightedQuantileSorted(xs, ws []float64, p float64) float64 {
	n := len(xs)
	cum := 0.0
	prevC := math.Inf(-1)
	for k := range n {
		c := cum + ws[k]/2
		if p <= c {
			if k == 0 {
				return xs[0]
			}
			return xs[k-1] + (p-prevC)/(c-prevC)*(xs[k]-xs[k-1])
		}
		cum += ws[k]
		prevC = c
	}
	return xs[n-1]
}
