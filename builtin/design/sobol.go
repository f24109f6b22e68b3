package design

import (
	"fmt"
	"math"
)

// sobolBits is the number of bits of each coordinate: a Sobol sequence
// here has at most 2^32 distinct points (Joe & Kuo's own generator uses 32
// bits as well).
const sobolBits = 32

// Sobol is the Sobol sequence in d dimensions with the Joe & Kuo (2008)
// direction numbers, in Gray-code order (Antonov & Saleev 1979), optionally
// Owen-scrambled. Unscrambled, point 0 is the origin and the first 2^m
// points form a (t, m, d)-net; they agree with scipy.stats.qmc.Sobol(d,
// scramble=False). Point is safe for concurrent use.
type Sobol struct {
	d        int
	v        [][sobolBits]uint32 // direction numbers v_{j,k} = m_{j,k}·2^{32−k}
	scramble bool
	seeds    []uint64 // per-dimension scrambling keys
}

// NewSobol returns the d-dimensional Sobol sequence, 1 ≤ d ≤ MaxSobolDim.
// With scramble, every coordinate is nested-uniform (Owen 1995) scrambled
// with keys derived from seed; the same seed gives the same points.
func NewSobol(d int, scramble bool, seed uint64) (*Sobol, error) {
	if d < 1 || d > MaxSobolDim {
		return nil, fmt.Errorf("design: sobol dimension %d outside 1…%d (the Joe–Kuo table)", d, MaxSobolDim)
	}
	s := &Sobol{d: d, v: make([][sobolBits]uint32, d), scramble: scramble}
	// Dimension 1: m_k = 1 for all k, the van der Corput sequence in base 2.
	for k := range sobolBits {
		s.v[0][k] = 1 << (sobolBits - 1 - k)
	}
	if d > 1 {
		rows, err := joeKuoTable()
		if err != nil {
			return nil, err
		}
		for j := 1; j < d; j++ {
			r := rows[j-1]
			v := &s.v[j]
			for k := 0; k < r.s && k < sobolBits; k++ {
				v[k] = r.m[k] << (sobolBits - 1 - k)
			}
			// Recurrence (Joe & Kuo 2008, Eq. 1 in the bit-shifted form of
			// their generator): v_k = a_1 v_{k−1} ⊕ … ⊕ a_{s−1} v_{k−s+1}
			// ⊕ v_{k−s} ⊕ (v_{k−s} >> s).
			for k := r.s; k < sobolBits; k++ {
				x := v[k-r.s] ^ (v[k-r.s] >> uint(r.s))
				for i := 1; i < r.s; i++ {
					if (r.a>>uint(r.s-1-i))&1 == 1 {
						x ^= v[k-i]
					}
				}
				v[k] = x
			}
		}
	}
	if scramble {
		s.seeds = make([]uint64, d)
		for j := range d {
			s.seeds[j] = mix64(seed ^ mix64(uint64(j)+0x9e3779b97f4a7c15))
		}
	}
	return s, nil
}

// Dim is the dimension.
func (s *Sobol) Dim() int { return s.d }

// Point writes point i (from 0) into dst[:d]. It panics if i ≥ 2^32.
func (s *Sobol) Point(i uint64, dst []float64) {
	if i >= 1<<sobolBits {
		panic(fmt.Sprintf("design: sobol point %d beyond 2^32", i))
	}
	g := uint32(i ^ (i >> 1)) // Gray code
	for j := range s.d {
		var x uint32
		for k, gg := 0, g; gg != 0; k, gg = k+1, gg>>1 {
			if gg&1 == 1 {
				x ^= s.v[j][k]
			}
		}
		if !s.scramble {
			dst[j] = float64(x) / (1 << sobolBits)
			continue
		}
		y := owenScramble(x, s.seeds[j])
		// The digits below 2^−32 of a nested-uniform scramble are uniform:
		// fill the rest of the float64 mantissa with hashed bits.
		u := float64(mix64(s.seeds[j]^mix64(uint64(x)|1<<40))>>11) / (1 << 53)
		dst[j] = (float64(y) + u) / (1 << sobolBits)
	}
}

// Points returns points first … first+n−1 as n rows of length d.
func (s *Sobol) Points(first uint64, n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, s.d)
		s.Point(first+uint64(i), out[i])
	}
	return out
}

// owenScramble applies nested uniform scrambling (Owen 1995) to the 32
// binary digits of x: digit k (k = 0 the most significant) is flipped by a
// random bit that depends on the key and on digits 0 … k−1 of x, so points
// that share a prefix share the permutation of the next digit. The random
// bits are a hash of (key, k, prefix) (Burley 2020).
func owenScramble(x uint32, key uint64) uint32 {
	var y uint32
	for k := range sobolBits {
		prefix := uint64(0)
		if k > 0 {
			prefix = uint64(x >> uint(sobolBits-k))
		}
		flip := uint32(mix64(key^mix64(uint64(k)<<32|prefix)) >> 63)
		bit := (x >> uint(sobolBits-1-k)) & 1
		y |= (bit ^ flip) << uint(sobolBits-1-k)
	}
	return y
}

// mix64 is the SplitMix64 finaliser (Steele, Lea & Flood 2014), a
// bijective 64-bit hash.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Scale maps unit-cube points in place onto the box [lo_j, hi_j].
func Scale(pts [][]float64, lo, hi []float64) error {
	for i, p := range pts {
		if len(p) != len(lo) || len(p) != len(hi) {
			return fmt.Errorf("design: point %d has %d coordinates, bounds %d and %d", i, len(p), len(lo), len(hi))
		}
		for j := range p {
			if !(hi[j] >= lo[j]) || math.IsInf(hi[j]-lo[j], 0) {
				return fmt.Errorf("design: bounds of coordinate %d are [%g, %g]: need finite lo ≤ hi", j, lo[j], hi[j])
			}
			p[j] = lo[j] + p[j]*(hi[j]-lo[j])
		}
	}
	return nil
}
