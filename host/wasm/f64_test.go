package wasm

import (
	"math"
	"testing"
	"unsafe"
)

// The f64 helpers at every length up to 40 (the unrolled loops' groups of
// four, the AVX2 loop's groups of eight, and their tails) and with a
// special value at every position: fillUnwritten fills exactly n values,
// getF64s copies every value and finds each ±Inf, NaN and unwritten
// value, against a plain loop; on a CPU with AVX2 both with and without
// the assembly.
func TestF64Helpers(t *testing.T) {
	paths := []bool{false}
	if useAVX2 {
		paths = append(paths, true)
	}
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, avx := range paths {
		useAVX2 = avx
		testF64Helpers(t)
	}
}

func testF64Helpers(t *testing.T) {
	backing := make([]uint64, 48) // 8-byte aligned, so the in-place path runs
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&backing[0])), len(backing)*8)
	for n := 0; n <= 40; n++ {
		for i := range backing {
			backing[i] = 42
		}
		fillUnwritten(mem, n)
		for i, w := range backing {
			if want := uint64(42); i < n {
				want = unwritten
				if w != want {
					t.Fatalf("n=%d: fillUnwritten left value %d = %#x", n, i, w)
				}
			} else if w != want {
				t.Fatalf("n=%d: fillUnwritten wrote value %d beyond n", n, i)
			}
		}
		for pos := -1; pos < n; pos++ {
			for _, special := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(unwritten)} {
				src := make([]float64, n)
				for i := range src {
					src[i] = float64(i) - 3.5
				}
				if pos >= 0 {
					src[pos] = special
				}
				putF64s(mem, src)
				dst := make([]float64, n)
				finite, missing := getF64s(dst, mem)
				wantFinite, wantMissing := true, -1
				for i, x := range src {
					if math.IsInf(x, 0) || math.IsNaN(x) {
						wantFinite = false
					}
					if math.Float64bits(x) == unwritten && wantMissing < 0 {
						wantMissing = i
					}
				}
				if finite != wantFinite || missing != wantMissing {
					t.Fatalf("n=%d, %v at %d: getF64s finite=%v missing=%d, want %v %d", n, special, pos, finite, missing, wantFinite, wantMissing)
				}
				for i := range src {
					if math.Float64bits(dst[i]) != math.Float64bits(src[i]) {
						t.Fatalf("n=%d: value %d copied as %v, want %v", n, i, dst[i], src[i])
					}
				}
			}
		}
	}
}
