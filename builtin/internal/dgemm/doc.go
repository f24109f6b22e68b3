// Package dgemm is kinfer's dense float64 matrix product for the neural
// network surrogate (builtin/surrogate/nn): C = op(A)·op(B) (+ C), row-major,
// with the transposes a dense layer's forward pass (Z = A·W) and backward
// pass (∂W = Aᵀ·G, ∂A = G·Wᵀ) need.
//
// Method: the blocked matrix product of Goto & van de Geijn (2008, "Anatomy
// of high-performance matrix multiplication", ACM TOMS 34(3), Sec. 4–6)
// reduced to what a multilayer perceptron needs. op(A) is packed into panels
// of 4 rows; op(B) into panels of NR columns (NR = 32 for AVX-512, 8 for
// AVX2 and portable Go) when B is transposed or op(A) has 16 rows or more,
// otherwise read in place; the sum over p is cut in blocks of 128 so a B
// panel stays in the L1 cache, and the rows in blocks of 256 so a packed A
// block stays in L2. A register-blocked micro-kernel computes a 4×NR tile
// of C (k4) or one row of NR values (k1; on AVX-512 two panels at once,
// for eight independent sums in flight) with one fused multiply-add per
// term. Products of 12–48 rows (a network's small batches) take their rows
// in tiles of 12 on AVX-512: a 12×16 kernel (k12, A packed as k steps of
// 12 values) loads each B row once for 12 rows and prefetches B 16 rows
// ahead, over the whole depth at once. The kernels are Go assembly for AVX-512 and for AVX2+FMA
// (dgemm_amd64.s), chosen at run time with golang.org/x/sys/cpu, and
// portable Go with math.FMA (build tag purego, or other architectures).
//
// Pack and GemmPacked: op(B) packed once for many products (a network's
// weights at inference), in float64 or rounded to float32; float32 panels
// are widened exactly to float64 as the kernels load them, so the sums
// stay in float64 and only B is rounded (half the bytes to read, which is
// what limits a product with one row).
//
// PackedA and GemmPackedA: A packed column range by column range (SetCols)
// and multiplied by a range of B's column panels on the calling goroutine,
// for a caller that splits a chain of products (a network's layers) over
// its own goroutines by column panels and packs each layer's output as the
// next layer's A where it is computed.
//
// Determinism: every C element is computed as s = C_ij (or 0), then s =
// fma(a_ip, b_pj, s) for p = 0, 1, …, k−1, by every kernel, tile shape and
// goroutine count; large products are split over GOMAXPROCS goroutines by
// disjoint blocks of C only. So the three implementations give the same
// bits (tested on many odd shapes), and results do not depend on the
// machine or on the number of workers. The result agrees with gonum's
// Dgemm within the rounding bound of a dot product (Higham 2002, Accuracy
// and Stability of Numerical Algorithms, Sec. 3.1).
//
// Why not gonum: gonum's blas64.Gemm is pure Go without SIMD, ≈ 2–4 GFLOP/s
// on the layer shapes here; see RATIONALE.md, "Why a hand-written GEMM
// kernel?", and BenchmarkLayers.
package dgemm
