//go:build !purego

package nn

import "golang.org/x/sys/cpu"

var hasAVX512 = cpu.X86.HasAVX512F

//go:noescape
func adamAVX512(p, gr, m, v *float64, n int, c *[8]float64) int

// adamVector updates the first elements with the AVX-512 kernel and
// returns how many it did.
func adamVector(p, g, m, v []float64, c *[8]float64) int {
	n := len(g)
	if !hasAVX512 || n < 8 {
		return 0
	}
	_, _, _ = p[n-1], m[n-1], v[n-1]
	return adamAVX512(&p[0], &g[0], &m[0], &v[0], n, c)
}
