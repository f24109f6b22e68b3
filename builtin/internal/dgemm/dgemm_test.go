package dgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// naive is the definition the kernels implement: s = C_ij (add) or 0, then
// s = fma(op(A)_ip, op(B)_pj, s) for p = 0 … k−1.
func naive(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, add bool, c []float64, ldc int) {
	for i := range m {
		for j := range n {
			s := 0.0
			if add {
				s = c[i*ldc+j]
			}
			for p := range k {
				av, bv := opAt(tA, a, lda, i, p), opAt(tB, b, ldb, p, j)
				s = math.FMA(av, bv, s)
			}
			c[i*ldc+j] = s
		}
	}
}

// opAt is op(X)_ij of the row-major X with stride ld.
func opAt(t bool, x []float64, ld, i, j int) float64 {
	if t {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

// operands draws A, B, C for the shape with strides wider than the rows
// (padding NaN, which must never be read) and entries over six orders of
// magnitude of both signs.
func operands(r *rand.Rand, tA, tB bool, m, n, k int) (a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	fill := func(rows, cols int) ([]float64, int) {
		ld := cols + r.IntN(3)
		s := make([]float64, rows*ld)
		for i := range s {
			if i%ld < cols {
				s[i] = r.NormFloat64() * math.Exp(3*r.NormFloat64())
			} else {
				s[i] = math.NaN()
			}
		}
		return s, ld
	}
	if tA {
		a, lda = fill(k, m)
	} else {
		a, lda = fill(m, k)
	}
	if tB {
		b, ldb = fill(n, k)
	} else {
		b, ldb = fill(k, n)
	}
	c, ldc = fill(m, n)
	return
}

type shape struct{ m, n, k int }

func shapes(r *rand.Rand) []shape {
	var s []shape
	for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 13} {
		for _, n := range []int{1, 5, 8, 9, 31, 32, 33} {
			for _, k := range []int{1, 2, 7, 51} {
				s = append(s, shape{m, n, k})
			}
		}
	}
	// The 12-row tiles (k12): m a multiple of 12 or not, half panels of
	// 16 columns full or partial.
	for _, m := range []int{12, 24, 25, 35, 36, 47, 48} {
		for _, n := range []int{5, 16, 17, 32, 33, 48} {
			for _, k := range []int{1, 3, 130} {
				s = append(s, shape{m, n, k})
			}
		}
	}
	for range 60 {
		s = append(s, shape{1 + r.IntN(70), 1 + r.IntN(70), 1 + r.IntN(70)})
	}
	// Several depth blocks (k > 128), several panels, packed B (m ≥ 16),
	// and products large enough to run in parallel.
	return append(s, shape{37, 300, 150}, shape{16, 65, 300}, shape{3, 1024, 260}, shape{70, 13, 257}, shape{260, 40, 64})
}

// TestKernelsBitIdentical: every kernel this CPU runs (AVX-512, AVX2,
// portable), on 1 to 3 goroutines, gives the bits of the definition (naive)
// for every transpose, add or not, over many odd shapes. A kernel that
// summed in another order, fused differently, or read padding would fail.
func TestKernelsBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	t.Logf("kernels on this CPU: %d, default %s", len(available), Kernel())
	for _, s := range shapes(r) {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, add := range []bool{false, true} {
					a, lda, b, ldb, c0, ldc := operands(r, tA, tB, s.m, s.n, s.k)
					want := append([]float64(nil), c0...)
					naive(tA, tB, s.m, s.n, s.k, a, lda, b, ldb, add, want, ldc)
					for _, ks := range available {
						for procs := 1; procs <= 3; procs++ {
							got := append([]float64(nil), c0...)
							gemm(ks, procs, tA, tB, s.m, s.n, s.k, a, lda, b, ldb, add, got, ldc)
							for i := range got {
								if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
									t.Fatalf("%s procs=%d %dx%dx%d tA=%v tB=%v add=%v: C[%d,%d] = %v, definition %v",
										ks.name, procs, s.m, s.n, s.k, tA, tB, add, i/ldc, i%ldc, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestK12Twin: the 12×16 kernel of this CPU (if any) gives the bits of its
// portable twin k12Go, for float64 and float32 B, from zero or from C, on
// odd depths and strides (padding NaN: a kernel reading it would fail).
func TestK12Twin(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 16))
	for _, ks := range available {
		if ks.k12 == nil {
			continue
		}
		for _, k := range []int{1, 2, 3, 7, 16, 51, 128, 129, 300} {
			ldb, ldc := 16+r.IntN(20), 16+r.IntN(5)
			val := func(n, ld, cols int) []float64 {
				s := make([]float64, n)
				for i := range s {
					s[i] = math.NaN()
					if i%ld < cols {
						s[i] = r.NormFloat64() * math.Exp(3*r.NormFloat64())
					}
				}
				return s
			}
			a := val(12*k, 12, 12)
			b := val((k-1)*ldb+16, ldb, 16)
			b32 := make([]float32, len(b))
			for i, v := range b {
				b32[i] = float32(v)
			}
			c0 := val(11*ldc+16, ldc, 16)
			for _, f32 := range []bool{false, true} {
				for _, load := range []bool{false, true} {
					bb, bs := b, []float32(nil)
					if f32 {
						bb, bs = nil, b32
					}
					want := append([]float64(nil), c0...)
					k12Go(k, a, bb, bs, ldb, want, ldc, load)
					got := append([]float64(nil), c0...)
					ks.k12(k, a, bb, bs, ldb, got, ldc, load)
					for i := range got {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s k=%d f32=%v load=%v: c[%d] = %v, twin %v", ks.name, k, f32, load, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestPackedBitIdentical: GemmPacked with B packed in float64 gives the bits
// of the definition, and with B rounded to float32 the bits of the
// definition applied to float64(float32(B)), for every kernel, 1 to 3
// goroutines, both transposes of A and of the packed B, add or not.
func TestPackedBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 2))
	for _, s := range shapes(r) {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, f32 := range []bool{false, true} {
					add := r.IntN(2) == 1
					a, lda, b, ldb, c0, ldc := operands(r, tA, tB, s.m, s.n, s.k)
					bw := asPacked(b, f32)
					want := append([]float64(nil), c0...)
					naive(tA, tB, s.m, s.n, s.k, a, lda, bw, ldb, add, want, ldc)
					for _, ks := range available {
						pb := pack(ks, tB, s.k, s.n, b, ldb, f32)
						for procs := 1; procs <= 3; procs++ {
							got := append([]float64(nil), c0...)
							gemmPacked(procs, tA, s.m, a, lda, pb, add, got, ldc)
							for i := range got {
								if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
									t.Fatalf("%s procs=%d %dx%dx%d tA=%v tB=%v f32=%v add=%v: C[%d,%d] = %v, definition %v",
										ks.name, procs, s.m, s.n, s.k, tA, tB, f32, add, i/ldc, i%ldc, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPackedABitIdentical: A packed column range by column range
// (SetCols) and multiplied panel range by panel range (GemmPackedA) gives
// the bits of the definition, for every kernel, float64 and float32 B, add
// or not, over the odd shapes.
func TestPackedABitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, s := range shapes(r) {
		for _, f32 := range []bool{false, true} {
			add := r.IntN(2) == 1
			a, lda, b, ldb, c0, ldc := operands(r, false, false, s.m, s.n, s.k)
			bw := asPacked(b, f32)
			want := append([]float64(nil), c0...)
			naive(false, false, s.m, s.n, s.k, a, lda, bw, ldb, add, want, ldc)
			for _, ks := range available {
				pb := pack(ks, false, s.k, s.n, b, ldb, f32)
				pa := newPackedA(ks, s.m, s.k)
				for j0 := 0; j0 < s.k; {
					j1 := min(s.k, j0+1+r.IntN(40))
					pa.SetCols(a, lda, j0, j1)
					j0 = j1
				}
				got := append([]float64(nil), c0...)
				for jp0 := 0; jp0 < pb.Panels(); {
					jp1 := min(pb.Panels(), jp0+1+r.IntN(3))
					GemmPackedA(pa, pb, add, got, ldc, jp0, jp1)
					jp0 = jp1
				}
				for i := range got {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s %dx%dx%d f32=%v add=%v: C[%d,%d] = %v, definition %v",
							ks.name, s.m, s.n, s.k, f32, add, i/ldc, i%ldc, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestPackedASegments: Segments visits every packed value of the columns
// asked for exactly once and no other: doubling A through it gives the
// product with 2A, for every kernel and the row counts of every tile kind.
func TestPackedASegments(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, m := range []int{1, 3, 4, 12, 13, 17, 24, 29, 48} {
		k, n := 37, 40
		a, lda, b, ldb, _, ldc := operands(r, false, false, m, n, k)
		a2 := append([]float64(nil), a...)
		for i := range a2 {
			a2[i] *= 2
		}
		want := make([]float64, m*ldc)
		naive(false, false, m, n, k, a2, lda, b, ldb, false, want, ldc)
		for _, ks := range available {
			pa := newPackedA(ks, m, k)
			pb := pack(ks, false, k, n, b, ldb, false)
			for _, cut := range [][2]int{{0, 10}, {10, 11}, {11, 37}} {
				pa.SetCols(a, lda, cut[0], cut[1])
				pa.Segments(cut[0], cut[1], func(seg []float64) {
					for i := range seg {
						seg[i] *= 2
					}
				})
			}
			got := make([]float64, m*ldc)
			GemmPackedA(pa, pb, false, got, ldc, 0, pb.Panels())
			for i := range m {
				for j := range n {
					if math.Float64bits(got[i*ldc+j]) != math.Float64bits(want[i*ldc+j]) {
						t.Fatalf("%s m=%d: C[%d,%d] = %v, want %v", ks.name, m, i, j, got[i*ldc+j], want[i*ldc+j])
					}
				}
			}
		}
	}
}

// TestAgainstGonum: Gemm agrees with gonum's Dgemm (blocked, another
// summation order) within the forward error bound of a dot product,
// |Δ| ≤ 2γ_{k+1}·(Σ_p|a_ip·b_pj| + |c_ij|), γ_n = nε/(1−nε) (Higham 2002,
// Accuracy and Stability of Numerical Algorithms, Sec. 3.1, Eq. 3.5: each
// result is within γ of the exact value).
func TestAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	tr := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	for _, s := range shapes(r) {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				a, lda, b, ldb, c0, ldc := operands(r, tA, tB, s.m, s.n, s.k)
				got := append([]float64(nil), c0...)
				Gemm(tA, tB, s.m, s.n, s.k, a, lda, b, ldb, true, got, ldc)
				ref := append([]float64(nil), c0...)
				ar, ac := s.m, s.k
				if tA {
					ar, ac = s.k, s.m
				}
				br, bc := s.k, s.n
				if tB {
					br, bc = s.n, s.k
				}
				blas64.Gemm(tr(tA), tr(tB), 1,
					blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
					blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: b}, 1,
					blas64.General{Rows: s.m, Cols: s.n, Stride: ldc, Data: ref})
				u := 0x1p-53
				gamma := float64(s.k+1) * u / (1 - float64(s.k+1)*u)
				for i := range s.m {
					for j := range s.n {
						abs := math.Abs(c0[i*ldc+j])
						for p := range s.k {
							av, bv := opAt(tA, a, lda, i, p), opAt(tB, b, ldb, p, j)
							abs += math.Abs(av * bv)
						}
						if d := math.Abs(got[i*ldc+j] - ref[i*ldc+j]); !(d <= 2*gamma*abs) {
							t.Fatalf("%dx%dx%d tA=%v tB=%v: C[%d,%d] = %v, gonum %v, |Δ| %g > %g",
								s.m, s.n, s.k, tA, tB, i, j, got[i*ldc+j], ref[i*ldc+j], d, 2*gamma*abs)
						}
					}
				}
			}
		}
	}
}

// TestZeroDepth: k = 0 gives C = 0, or C unchanged with add.
func TestZeroDepth(t *testing.T) {
	c := []float64{1, 2, 3, 4}
	Gemm(false, false, 2, 2, 0, nil, 1, nil, 2, true, c, 2)
	if c[3] != 4 {
		t.Fatalf("add with k = 0 changed C: %v", c)
	}
	Gemm(false, false, 2, 2, 0, nil, 1, nil, 2, false, c, 2)
	for _, v := range c {
		if v != 0 {
			t.Fatalf("k = 0 without add: C = %v, want 0", c)
		}
	}
}

// TestShortOperand: a slice too short for its shape is a clear panic, not a
// read out of bounds.
func TestShortOperand(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("no panic for a short B")
		}
	}()
	Gemm(false, false, 2, 2, 2, make([]float64, 4), 2, make([]float64, 3), 2, false, make([]float64, 4), 2)
}

// BenchmarkLayers: GFLOP/s of the products of Bartsoen et al.'s (2023)
// network 51:256:512:1024:512:256:128:64:13 (layer k → n, op(A) of batch
// rows), forward Z = A·W at batch 1, 12, 32 and 256, the two backward
// products at batch 32 (dW = Aᵀ·G, dA = G·Wᵀ), and one 10 000-row
// forward product; gonum's Dgemm on the same product beside each.
func BenchmarkLayers(b *testing.B) {
	type prod struct {
		name    string
		tA, tB  bool
		m, n, k int
	}
	var ps []prod
	for _, batch := range []int{1, 12, 32, 256} {
		for _, l := range [][2]int{{51, 256}, {512, 1024}, {1024, 512}, {64, 13}} {
			ps = append(ps, prod{fmt.Sprintf("fwd/batch=%d/%dx%d", batch, l[0], l[1]), false, false, batch, l[1], l[0]})
		}
	}
	ps = append(ps, prod{"dW/batch=32/512x1024", true, false, 512, 1024, 32},
		prod{"dA/batch=32/512x1024", false, true, 32, 512, 1024},
		prod{"fwd/batch=10000/512x1024", false, false, 10000, 1024, 512})
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range ps {
		a, lda, bm, ldb, c, ldc := operands(r, p.tA, p.tB, p.m, p.n, p.k)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		for i := range bm {
			bm[i] = r.NormFloat64()
		}
		flops := 2 * float64(p.m*p.n*p.k)
		b.Run(p.name+"/dgemm", func(b *testing.B) {
			for range b.N {
				Gemm(p.tA, p.tB, p.m, p.n, p.k, a, lda, bm, ldb, false, c, ldc)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		if !p.tB {
			for _, f32 := range []bool{false, true} {
				pb := Pack(false, p.k, p.n, bm, ldb, f32)
				name := "/packed64"
				if f32 {
					name = "/packed32"
				}
				b.Run(p.name+name, func(b *testing.B) {
					for range b.N {
						GemmPacked(p.tA, p.m, a, lda, pb, false, c, ldc)
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
		b.Run(p.name+"/gonum", func(b *testing.B) {
			tr := func(t bool) blas.Transpose {
				if t {
					return blas.Trans
				}
				return blas.NoTrans
			}
			ar, ac := p.m, p.k
			if p.tA {
				ar, ac = p.k, p.m
			}
			br, bc := p.k, p.n
			if p.tB {
				br, bc = p.n, p.k
			}
			for range b.N {
				blas64.Gemm(tr(p.tA), tr(p.tB), 1,
					blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
					blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: bm}, 0,
					blas64.General{Rows: p.m, Cols: p.n, Stride: ldc, Data: c})
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// asPacked is B as a packing with float32 weights holds it: each value
// rounded to float32 (and widened back exactly), or B itself.
func asPacked(b []float64, f32 bool) []float64 {
	if !f32 {
		return b
	}
	bw := make([]float64, len(b))
	for i, v := range b {
		bw[i] = float64(float32(v))
	}
	return bw
}
