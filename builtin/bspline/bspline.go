package bspline

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Basis is n B-spline basis functions of degree p on a clamped uniform
// knot vector over [A, B].
type Basis struct {
	N, Degree int
	A, B      float64
	// Knots are the n+p+1 knots: A repeated p+1 times, the n−p−1 interior
	// knots spaced uniformly, B repeated p+1 times.
	Knots []float64
}

// New returns n basis functions of degree p (p ≥ 0, n ≥ p+1) over [a, b],
// a < b.
func New(n, p int, a, b float64) (*Basis, error) {
	switch {
	case p < 0:
		return nil, fmt.Errorf("bspline: degree %d, want ≥ 0", p)
	case n < p+1:
		return nil, fmt.Errorf("bspline: %d functions of degree %d, want at least %d", n, p, p+1)
	case !(a < b) || math.IsInf(a, 0) || math.IsInf(b, 0):
		return nil, fmt.Errorf("bspline: interval [%g, %g] is not a finite a < b", a, b)
	}
	k := make([]float64, n+p+1)
	spans := n - p
	for i := range k {
		j := i - p // interior index 0..spans
		switch {
		case j <= 0:
			k[i] = a
		case j >= spans:
			k[i] = b
		default:
			k[i] = a + (b-a)*float64(j)/float64(spans)
		}
	}
	return &Basis{N: n, Degree: p, A: a, B: b, Knots: k}, nil
}

// span returns the knot interval μ with t_μ ≤ x < t_{μ+1}, p ≤ μ ≤ n−1; x
// = B falls in the last non-empty interval, and x outside [A, B] in the
// first or last one (the polynomial pieces extend).
func (s *Basis) span(x float64) int {
	p, n := s.Degree, s.N
	if x >= s.Knots[n] {
		return n - 1
	}
	if x <= s.Knots[p] {
		return p
	}
	lo, hi := p, n // t_lo ≤ x < t_hi
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if x < s.Knots[m] {
			hi = m
		} else {
			lo = m
		}
	}
	return lo
}

// local computes the p+1 non-zero basis functions of degree p−d at x in
// span mu (de Boor's BSPLVB), into v[0..p−d]: v[j] = B_{mu−(p−d)+j, p−d}(x).
func (s *Basis) local(x float64, mu, deg int, v []float64) {
	t := s.Knots
	v[0] = 1
	for q := 1; q <= deg; q++ {
		// Raise degree q−1 → q: B_{mu−q+j,q}, j = 0..q.
		saved := 0.0
		for j := 0; j < q; j++ {
			// v[j] = B_{mu−q+1+j, q−1}
			left, right := t[mu+1+j-q], t[mu+1+j]
			term := 0.0
			if right != left {
				term = v[j] / (right - left)
			}
			v[j] = saved + (right-x)*term
			saved = (x - left) * term
		}
		v[q] = saved
	}
}

// Eval writes the n basis values at x into out (len n) and returns the
// index of the first of the p+1 that may be non-zero.
func (s *Basis) Eval(x float64, out []float64) int {
	return s.Deriv(x, 0, out)
}

// Deriv writes the order-th derivatives of the n basis functions at x into
// out (len n) and returns the index of the first of the p+1 that may be
// non-zero. Derivatives above the degree are 0.
func (s *Basis) Deriv(x float64, order int, out []float64) int {
	if len(out) != s.N {
		panic(fmt.Sprintf("bspline: out has %d entries, want %d", len(out), s.N))
	}
	for i := range out {
		out[i] = 0
	}
	p := s.Degree
	mu := s.span(x)
	first := mu - p
	if order > p || order < 0 {
		return first
	}
	var buf [32]float64
	v := buf[:]
	if p+1 > len(v) {
		v = make([]float64, p+1)
	}
	// Values of degree p−order, then differentiate up by the derivative
	// recursion (X.12): each step maps degree q−1 values to degree-q
	// derivatives of one more order.
	s.local(x, mu, p-order, v)
	t := s.Knots
	for q := p - order + 1; q <= p; q++ {
		// v[j] holds (derivative of order q−1−(p−order)) of B_{mu−q+1+j, q−1}, j=0..q−1.
		// New w[j] for B_{mu−q+j, q}, j = 0..q:
		// w[j] = q·(v[j−1]/(t_{i+q}−t_i) − v[j]/(t_{i+q+1}−t_{i+1})), i = mu−q+j.
		prev := 0.0
		for j := 0; j <= q; j++ {
			i := mu - q + j
			cur := 0.0
			if j < q {
				cur = v[j]
			}
			a := 0.0
			if d := t[i+q] - t[i]; d != 0 && j > 0 {
				a = prev / d
			}
			bb := 0.0
			if d := t[i+q+1] - t[i+1]; d != 0 && j < q {
				bb = cur / d
			}
			prev = cur
			v[j] = float64(q) * (a - bb)
		}
	}
	for j := 0; j <= p; j++ {
		out[first+j] = v[j]
	}
	return first
}

// Curve evaluates Σ c_i B_i^{(order)}(x) for coefficients c (len n).
func (s *Basis) Curve(c []float64, x float64, order int) float64 {
	if len(c) != s.N {
		panic(fmt.Sprintf("bspline: %d coefficients, want %d", len(c), s.N))
	}
	out := make([]float64, s.N)
	first := s.Deriv(x, order, out)
	sum := 0.0
	for j := first; j <= first+s.Degree && j < s.N; j++ {
		sum += c[j] * out[j]
	}
	return sum
}

// Matrix returns the len(xs)×n design matrix of the order-th derivatives:
// row k holds B_i^{(order)}(xs[k]), so the curve at the points is M·c.
func (s *Basis) Matrix(xs []float64, order int) (*mat.Dense, error) {
	if len(xs) == 0 {
		return nil, errors.New("bspline: no points")
	}
	m := mat.NewDense(len(xs), s.N, nil)
	row := make([]float64, s.N)
	for k, x := range xs {
		if math.IsNaN(x) {
			return nil, fmt.Errorf("bspline: point %d is NaN", k)
		}
		s.Deriv(x, order, row)
		m.SetRow(k, row)
	}
	return m, nil
}
