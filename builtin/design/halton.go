package design

import "fmt"

// Halton is the Halton (1960) sequence: coordinate j of point i is the
// radical inverse of i in the j-th prime base. Point 0 is the origin, as in
// scipy.stats.qmc.Halton(d, scramble=False). Unscrambled Halton points are
// strongly correlated in high dimensions (pairs of large primes); use Sobol
// beyond a few tens of dimensions.
type Halton struct {
	primes []uint64
}

// NewHalton returns the d-dimensional Halton sequence, d ≥ 1.
func NewHalton(d int) (*Halton, error) {
	if d < 1 || d > 100000 {
		return nil, fmt.Errorf("design: halton dimension %d outside 1…100000", d)
	}
	return &Halton{primes: Primes(d)}, nil
}

// Dim is the dimension.
func (h *Halton) Dim() int { return len(h.primes) }

// Point writes point i into dst[:d].
func (h *Halton) Point(i uint64, dst []float64) {
	for j, b := range h.primes {
		dst[j] = RadicalInverse(i, b)
	}
}

// Points returns points first … first+n−1 as n rows.
func (h *Halton) Points(first uint64, n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, len(h.primes))
		h.Point(first+uint64(i), out[i])
	}
	return out
}

// Hammersley returns the n-point Hammersley (1960) set in d ≥ 1
// dimensions: point i = (i/n, φ_2(i), φ_3(i), …, φ_{p_{d−1}}(i)), where φ_b
// is the radical inverse in base b and p_k the k-th prime (Lin et al. 2010,
// Sec. 2.2, sample their contact model this way). Unlike Halton it is a
// fixed set for a given n, not an extensible sequence.
func Hammersley(n, d int) ([][]float64, error) {
	if n < 1 || d < 1 || d > 100000 {
		return nil, fmt.Errorf("design: hammersley needs n ≥ 1 and 1 ≤ d ≤ 100000, got n=%d d=%d", n, d)
	}
	primes := Primes(d - 1)
	out := make([][]float64, n)
	for i := range out {
		p := make([]float64, d)
		p[0] = float64(i) / float64(n)
		for j, b := range primes {
			p[j+1] = RadicalInverse(uint64(i), b)
		}
		out[i] = p
	}
	return out, nil
}

// RadicalInverse is φ_b(i) = Σ_k a_k b^{−k−1} for i = Σ_k a_k b^k: the
// base-b digits of i mirrored about the radix point.
func RadicalInverse(i, b uint64) float64 {
	inv := 1 / float64(b)
	f, x := inv, 0.0
	for i > 0 {
		x += float64(i%b) * f
		i /= b
		f *= inv
	}
	return x
}

// Primes returns the first n primes.
func Primes(n int) []uint64 {
	out := make([]uint64, 0, n)
	for c := uint64(2); len(out) < n; c++ {
		prime := true
		for _, p := range out {
			if p*p > c {
				break
			}
			if c%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			out = append(out, c)
		}
	}
	return out
}
