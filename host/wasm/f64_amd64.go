package wasm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects copyFiniteAVX2 (a variable so that the test can compare
// both paths).
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func copyFiniteAVX2(dst, src *uint64, n int) uint64

// copyFinite copies w into dst (len(dst) ≤ len(w)) and reports whether
// every copied value is finite: with AVX2 in one pass over the bulk (8
// values per iteration), the tail and other CPUs by copy and allFinite.
func copyFinite(dst []float64, w []uint64) bool {
	n := len(dst)
	w = w[:n]
	bulk := n &^ 7
	if !useAVX2 || bulk == 0 {
		copy(dst, unsafeF64s(w))
		return allFinite(w)
	}
	acc := copyFiniteAVX2((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), unsafe.SliceData(w), bulk)
	copy(dst[bulk:], unsafeF64s(w[bulk:]))
	return acc>>63 == 0 && allFinite(w[bulk:])
}
