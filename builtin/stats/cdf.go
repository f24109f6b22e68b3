package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// DefaultGridPoints is the number G of grid points of the CDF comparison
// unless the caller chooses otherwise.
const DefaultGridPoints = 100

// MidpointGrid is the grid of the CDF comparison: the n midpoints
// lower + (g − ½)·(upper − lower)/n, g = 1 … n, of n equal cells of
// [lower, upper] (the prior range), ascending.
func MidpointGrid(lower, upper float64, n int) ([]float64, error) {
	if math.IsNaN(lower) || math.IsNaN(upper) || math.IsInf(lower, 0) || math.IsInf(upper, 0) || !(lower < upper) {
		return nil, fmt.Errorf("stats: grid range [%g, %g]: want finite lower < upper", lower, upper)
	}
	if n < 1 {
		return nil, fmt.Errorf("stats: grid of %d points", n)
	}
	w := (upper - lower) / float64(n)
	g := make([]float64, n)
	for i := range g {
		g[i] = lower + (float64(i)+0.5)*w
	}
	return g, nil
}

// ECDF is the empirical CDF of the sample at each grid point:
// F(x) = #{i: sampleᵢ ≤ x}/n. The grid may be in any order; the sample is
// not modified.
func ECDF(sample, grid []float64) ([]float64, error) {
	if len(sample) == 0 {
		return nil, errors.New("stats: CDF of no samples")
	}
	if err := allFinite("sample", sample); err != nil {
		return nil, err
	}
	if err := allFinite("grid point", grid); err != nil {
		return nil, err
	}
	s := slices.Clone(sample)
	slices.Sort(s)
	n := float64(len(s))
	f := make([]float64, len(grid))
	for g, x := range grid {
		f[g] = float64(sort.Search(len(s), func(i int) bool { return s[i] > x })) / n
	}
	return f, nil
}

// CDFRMSE is the root mean square difference of the empirical CDFs of two
// samples of one parameter over the grid (Bartsoen 2023 Fig. 7: the
// change of a marginal between successive TMCMC stages).
func CDFRMSE(a, b, grid []float64) (float64, error) {
	if len(grid) == 0 {
		return 0, errors.New("stats: empty grid")
	}
	fa, err := ECDF(a, grid)
	if err != nil {
		return 0, err
	}
	fb, err := ECDF(b, grid)
	if err != nil {
		return 0, err
	}
	ss := 0.0
	for g := range grid {
		d := fa[g] - fb[g]
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(grid))), nil
}

// SuccessiveCDFRMSE is CDFRMSE of every pair of successive stages of one
// parameter: out[j] compares stages[j] and stages[j+1] (Fig. 7's curve over
// TMCMC iterations).
func SuccessiveCDFRMSE(stages [][]float64, grid []float64) ([]float64, error) {
	if len(stages) < 2 {
		return nil, fmt.Errorf("stats: %d stages, need at least 2 to compare", len(stages))
	}
	out := make([]float64, len(stages)-1)
	for j := range out {
		r, err := CDFRMSE(stages[j], stages[j+1], grid)
		if err != nil {
			return nil, fmt.Errorf("stages %d and %d: %w", j, j+1, err)
		}
		out[j] = r
	}
	return out, nil
}

// allFinite refuses a NaN or infinite value of xs.
func allFinite(what string, xs []float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("stats: %s %d is %g", what, i, x)
		}
	}
	return nil
}

// MidpointCDFRMSE is CDFRMSE(a, b, grid) on grid = MidpointGrid(lower,
// upper, n), computed by counting each sample into the grid's cells
// instead of sorting: O(len(a) + len(b) + n) time, for a diagnostic taken
// on every TMCMC stage. Each value is placed by the first grid point at or
// above it, found by arithmetic and corrected against the grid values
// themselves, so the result equals CDFRMSE's.
func MidpointCDFRMSE(a, b []float64, lower, upper float64, n int) (float64, error) {
	if _, err := MidpointGrid(lower, upper, 1); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("stats: grid of %d points", n)
	}
	fa, err := midpointECDF(a, lower, upper, n)
	if err != nil {
		return 0, err
	}
	fb, err := midpointECDF(b, lower, upper, n)
	if err != nil {
		return 0, err
	}
	ss := 0.0
	for g := range n {
		d := fa[g] - fb[g]
		ss += d * d
	}
	return math.Sqrt(ss / float64(n)), nil
}

// midpointECDF is ECDF(sample, MidpointGrid(lower, upper, n)) by counting.
func midpointECDF(sample []float64, lower, upper float64, n int) ([]float64, error) {
	if len(sample) == 0 {
		return nil, errors.New("stats: CDF of no samples")
	}
	w := (upper - lower) / float64(n)
	grid := func(g int) float64 { return lower + (float64(g)+0.5)*w } // as MidpointGrid
	counts := make([]float64, n+1)                                    // counts[g]: values whose first grid point ≥ them is g (n: none)
	for i, x := range sample {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("stats: sample %d is %g", i, x)
		}
		g := int(math.Ceil(math.Min(math.Max((x-lower)/w-0.5, -1), float64(n))))
		g = min(max(g, 0), n)
		for g > 0 && grid(g-1) >= x {
			g--
		}
		for g < n && grid(g) < x {
			g++
		}
		counts[g]++
	}
	f := make([]float64, n)
	c, m := 0.0, float64(len(sample))
	for g := range n {
		c += counts[g]
		f[g] = c / m
	}
	return f, nil
}
