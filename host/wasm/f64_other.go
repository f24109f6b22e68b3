//go:build !amd64

package wasm

// useAVX2 is false off amd64.
var useAVX2 = false

// copyFinite copies w into dst (len(dst) ≤ len(w)) and reports whether
// every copied value is finite.
func copyFinite(dst []float64, w []uint64) bool {
	w = w[:len(dst)]
	copy(dst, unsafeF64s(w))
	return allFinite(w)
}
