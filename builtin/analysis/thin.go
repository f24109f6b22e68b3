package analysis

import "math"

// Thin picks m of n rows (all of them when m ≤ 0 or n ≤ m), spread evenly:
// pick i lies in the i-th of m equal blocks, at the fraction frac(i·φ) of
// the block (φ the golden ratio, an equidistributed sequence). The offset
// keeps the pick from aliasing with a period in the rows — a sampler's
// chains interleaved in samples.csv (row r is chain r mod c): taking each
// block's first row, 20 000 rows of 4 chains thinned to 1 000 read chain 0
// only.
func Thin(n, m int) []int {
	if n <= 0 {
		return nil // a count read from a record may be negative
	}
	if m <= 0 || n <= m {
		m = n
	}
	// start(i) = i·n/m without i·n, which overflows for a count near 2^63
	// (read from a record): i ≤ m and n%m < m keep both products small.
	start := func(i int) int { return i*(n/m) + i*(n%m)/m }
	idx := make([]int, m)
	for i := range idx {
		lo, hi := start(i), start(i+1)
		_, f := math.Modf(float64(i) * math.Phi)
		off := int(f * float64(hi-lo))
		idx[i] = lo + min(max(off, 0), hi-lo-1)
	}
	return idx
}
