package design

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// LHSOptions configure LatinHypercube.
type LHSOptions struct {
	// Centred puts every point at the centre of its cell, (π_j(i)+½)/n,
	// instead of uniformly inside it (McKay et al. 1979).
	Centred bool
	// Maximin improves the design by swapping two entries of one column
	// (which keeps it a Latin hypercube) whenever the swap lowers the
	// Morris & Mitchell (1995, Eq. 2.1) criterion
	// φ_p = (Σ_{i<j} d_ij^{−p})^{1/p}, d_ij the Euclidean distance; as p → ∞
	// minimising φ_p maximises the smallest distance.
	Maximin bool
	// P is the exponent p of φ_p (default 50).
	P float64
	// Iterations is the number of proposed swaps (default 20·n; each
	// costs O(n·d)).
	Iterations int
	// Done, when it is closed, stops the maximin search (about a minute at
	// n = 10 000): LatinHypercube then returns ErrStopped. nil: never.
	Done <-chan struct{}
}

// ErrStopped is LatinHypercube's error when LHSOptions.Done stopped it.
var ErrStopped = errors.New("design: the latin hypercube's maximin search was stopped")

// LatinHypercube returns an n-point Latin hypercube in [0,1)^d: in every
// coordinate each of the n intervals [k/n, (k+1)/n) holds exactly one
// point. It is a deterministic function of seed and the options.
func LatinHypercube(n, d int, seed uint64, opt LHSOptions) ([][]float64, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("design: latin hypercube needs n ≥ 1 and d ≥ 1, got n=%d d=%d", n, d)
	}
	if opt.P == 0 {
		opt.P = 50
	}
	if opt.P < 1 {
		return nil, fmt.Errorf("design: latin hypercube maximin exponent p = %g, need ≥ 1", opt.P)
	}
	if opt.Iterations == 0 {
		opt.Iterations = 20 * n
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c68735f64657369)) // "lhs_desi"
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = make([]float64, d)
	}
	for j := range d {
		perm := rng.Perm(n)
		for i := range n {
			u := 0.5
			if !opt.Centred {
				u = rng.Float64()
			}
			pts[i][j] = (float64(perm[i]) + u) / float64(n)
		}
	}
	if opt.Maximin && n > 2 {
		if !maximin(pts, rng, opt.P, opt.Iterations, opt.Done) {
			return nil, ErrStopped
		}
	}
	return pts, nil
}

// maximin is a greedy random-swap search on φ_p^p. Distances are divided
// by the initial smallest one so that d^{−p} stays representable. It
// returns false when done was closed before the search ended (checked
// every 64 swaps, each O(n·d)).
func maximin(pts [][]float64, rng *rand.Rand, p float64, iters int, done <-chan struct{}) bool {
	n, d := len(pts), len(pts[0])
	c := MinDistance(pts)
	if c == 0 {
		c = 1 / float64(n)
	}
	half := p / 2
	ik := int(half)
	intPow := float64(ik) == half && ik <= 64
	ic2 := 1 / (c * c)
	term := func(a, b []float64) float64 {
		var s float64
		for k := range a {
			t := a[k] - b[k]
			s += t * t
		}
		s *= ic2
		if intPow { // s^(−p/2) by repeated squaring: math.Pow is 10× slower
			r, x := 1.0, 1/s
			for e := ik; e > 0; e >>= 1 {
				if e&1 == 1 {
					r *= x
				}
				x *= x
			}
			return r
		}
		return math.Pow(s, -half)
	}
	// rowSum is Σ_{l ∉ {i, j}} of the terms of rows i and j.
	rowSum := func(i, j int) float64 {
		var s float64
		for l := range n {
			if l != i && l != j {
				s += term(pts[i], pts[l]) + term(pts[j], pts[l])
			}
		}
		return s
	}
	for it := range iters {
		if it%64 == 0 && done != nil {
			select {
			case <-done:
				return false
			default:
			}
		}
		i, j, k := rng.IntN(n), rng.IntN(n), rng.IntN(d)
		if i == j {
			continue
		}
		before := rowSum(i, j)
		pts[i][k], pts[j][k] = pts[j][k], pts[i][k]
		if rowSum(i, j) >= before { // the (i, j) term itself is unchanged
			pts[i][k], pts[j][k] = pts[j][k], pts[i][k]
		}
	}
	return true
}

// MinDistance is the smallest Euclidean distance between two points.
func MinDistance(pts [][]float64) float64 {
	best := math.Inf(1)
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			var s float64
			for k := range pts[i] {
				t := pts[i][k] - pts[j][k]
				s += t * t
			}
			best = min(best, s)
		}
	}
	return math.Sqrt(best)
}
