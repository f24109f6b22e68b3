package dgemm

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// mr is the number of rows of C a tile kernel computes at once.
const mr = 4

// kc is the depth of a block of the sum over p: a packed B panel of kc rows
// (kc·32 float64 = 32 KiB for the AVX-512 kernel) stays in the L1 cache
// while every tile of rows uses it. Splitting the sum into blocks does not
// change its order: an accumulator goes to C after one block and is loaded
// back, unrounded, for the next.
const kc = 128

// packRows: B is copied into contiguous panels when op(A) has at least this
// many rows (the copy is then amortised over the rows); for fewer rows,
// and always when B is not transposed and fits the panel width, the kernels
// read B in place.
const packRows = 16

// parallelFMAs: products of at least this many multiply-adds (m·n·k) are
// split over GOMAXPROCS goroutines.
const parallelFMAs = 1 << 16

// kernels is one implementation of the two micro-kernels for panels of nr
// columns (see dgemm_amd64.s and k4Go, k1Go).
type kernels struct {
	name string
	nr   int
	// k4: the 4×nr tile c (row stride ldc) from k steps of the packed A
	// panel a (4 values a step) and the B panel b (row stride ldb).
	k4 func(k int, a, b []float64, ldb int, c []float64, ldc int, load bool)
	// k1: one row of nr values from k contiguous values of a.
	k1 func(k int, a, b []float64, ldb int, c []float64, load bool)
}

// portable is the Go implementation (math.FMA), the twin of the assembly
// kernels; nr = 8.
var portable = &kernels{name: "portable", nr: 8, k4: k4Go, k1: k1Go}

// k4Go: c[r][j] (+)= Σ_p a[p·4+r]·b[p·ldb+j] for r < 4, j < 8, the sum
// taken in order p = 0 … k−1 by one fused multiply-add per term.
func k4Go(k int, a, b []float64, ldb int, c []float64, ldc int, load bool) {
	const nr = 8
	var acc [mr * nr]float64
	if load {
		for r := range mr {
			copy(acc[r*nr:(r+1)*nr], c[r*ldc:r*ldc+nr])
		}
	}
	for p := range k {
		bp := b[p*ldb : p*ldb+nr]
		ap := a[p*mr : p*mr+mr]
		for r := range mr {
			ar := ap[r]
			row := acc[r*nr : (r+1)*nr]
			for j, bv := range bp {
				row[j] = math.FMA(ar, bv, row[j])
			}
		}
	}
	for r := range mr {
		copy(c[r*ldc:r*ldc+nr], acc[r*nr:(r+1)*nr])
	}
}

// k1Go is k4Go for one row whose k values of A are contiguous.
func k1Go(k int, a, b []float64, ldb int, c []float64, load bool) {
	const nr = 8
	var acc [nr]float64
	if load {
		copy(acc[:], c[:nr])
	}
	for p := range k {
		bp := b[p*ldb : p*ldb+nr]
		ar := a[p]
		for j, bv := range bp {
			acc[j] = math.FMA(ar, bv, acc[j])
		}
	}
	copy(c[:nr], acc[:])
}

// Kernel names the kernels Gemm uses on this machine: "avx512", "avx2" or
// "portable".
func Kernel() string { return best.name }

// Gemm computes C = op(A)·op(B), or C = op(A)·op(B) + C when add is true,
// for row-major matrices: op(A) is m×k (A is m×k with row stride lda, or
// k×m when tA, op(A) = Aᵀ), op(B) is k×n (B is k×n with stride ldb, or n×k
// when tB), C is m×n with stride ldc.
//
// Each C element is computed as s = C_ij (add) or 0, then s = fma(a_ip,
// b_pj, s) for p = 0, 1, …, k−1: the same operations in the same order
// whatever the kernel (AVX-512, AVX2 or portable Go), the shape of the
// tiles or the number of goroutines, so the result has the same bits on
// every machine. Large products are split over GOMAXPROCS goroutines by
// disjoint blocks of C.
func Gemm(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, add bool, c []float64, ldc int) {
	gemm(best, runtime.GOMAXPROCS(0), tA, tB, m, n, k, a, lda, b, ldb, add, c, ldc)
}

func need(name string, s []float64, rows, cols, ld int) {
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols || len(s) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("dgemm: %s is %d×%d with stride %d but has %d values", name, rows, cols, ld, len(s)))
	}
}

var pool = sync.Pool{New: func() any { return new([]float64) }}

func getBuf(n int) *[]float64 {
	p := pool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return p
}

func gemm(ks *kernels, procs int, tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, add bool, c []float64, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("dgemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	if tA {
		need("A", a, k, m, lda)
	} else {
		need("A", a, m, k, lda)
	}
	if tB {
		need("B", b, n, k, ldb)
	} else {
		need("B", b, k, n, ldb)
	}
	need("C", c, m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !add {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	nr := ks.nr
	mt := m / mr // full row tiles
	np := (n + nr - 1) / nr
	// Pack A: tile t holds rows 4t … 4t+3 as k steps of 4 values; the
	// remaining rows follow, each as k contiguous values (only needed when
	// A is transposed: otherwise they are read in place).
	abuf := getBuf(m * k)
	defer pool.Put(abuf)
	ap := *abuf
	for t := range mt {
		dst := ap[t*mr*k : (t+1)*mr*k]
		for r := range mr {
			i := t*mr + r
			if tA {
				for p := range k {
					dst[p*mr+r] = a[p*lda+i]
				}
			} else {
				row := a[i*lda : i*lda+k]
				for p, v := range row {
					dst[p*mr+r] = v
				}
			}
		}
	}
	rest := ap[mt*mr*k:]
	if tA {
		for i := mt * mr; i < m; i++ {
			dst := rest[(i-mt*mr)*k : (i-mt*mr+1)*k]
			for p := range k {
				dst[p] = a[p*lda+i]
			}
		}
	}
	// B: packed panels of nr columns (k rows of nr values, zero padded), or
	// read in place with only a partial last panel packed.
	packed := tB || m >= packRows
	var bp []float64
	first := 0 // first packed panel
	if !packed {
		first = n / nr
	}
	if first < np {
		bbuf := getBuf((np - first) * k * nr)
		defer pool.Put(bbuf)
		bp = *bbuf
		for jp := first; jp < np; jp++ {
			dst := bp[(jp-first)*k*nr : (jp-first+1)*k*nr]
			j0 := jp * nr
			w := min(nr, n-j0)
			for p := range k {
				d := dst[p*nr : (p+1)*nr]
				if tB {
					for j := range w {
						d[j] = b[(j0+j)*ldb+p]
					}
				} else {
					copy(d[:w], b[p*ldb+j0:p*ldb+j0+w])
				}
				clear(d[w:])
			}
		}
	}
	g := &job{ks: ks, tA: tA, m: m, n: n, k: k, mt: mt, a: a, lda: lda, ap: ap, rest: rest,
		b: b, ldb: ldb, bp: bp, first: first, add: add, c: c, ldc: ldc}
	rowTiles := (m + mr - 1) / mr
	switch {
	case procs < 2 || m*n*k < parallelFMAs:
		g.run(0, np, 0, m)
	case np >= procs:
		split(procs, np, func(lo, hi int) { g.run(lo, hi, 0, m) })
	case rowTiles >= procs:
		split(procs, rowTiles, func(lo, hi int) { g.run(0, np, lo*mr, min(hi*mr, m)) })
	default:
		g.run(0, np, 0, m)
	}
}

// split runs f over p contiguous, nearly equal parts of [0, n), the last on
// the calling goroutine.
func split(p, n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	for q := range p {
		lo, hi := q*n/p, (q+1)*n/p
		if q == p-1 {
			f(lo, hi)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

type job struct {
	ks          *kernels
	tA          bool
	m, n, k, mt int
	a           []float64
	lda         int
	ap, rest    []float64
	b           []float64
	ldb         int
	bp          []float64
	first       int
	add         bool
	c           []float64
	ldc         int
}

// run computes the C block of column panels [jp0, jp1) and rows [i0, i1)
// (i0 a multiple of 4).
func (g *job) run(jp0, jp1, i0, i1 int) {
	nr := g.ks.nr
	k := g.k
	var tile [mr * 32]float64
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		load := g.add || p0 > 0
		for jp := jp0; jp < jp1; jp++ {
			j0 := jp * nr
			w := min(nr, g.n-j0)
			var bpan []float64
			lb := nr
			if jp >= g.first {
				bpan = g.bp[(jp-g.first)*k*nr+p0*nr:]
			} else {
				bpan = g.b[p0*g.ldb+j0:]
				lb = g.ldb
			}
			for i := i0; i < i1; {
				if i+mr <= g.mt*mr {
					apan := g.ap[(i/mr)*mr*k+p0*mr:]
					if w == nr {
						g.ks.k4(kb, apan, bpan, lb, g.c[i*g.ldc+j0:], g.ldc, load)
					} else {
						if load {
							for r := range mr {
								copy(tile[r*nr:r*nr+w], g.c[(i+r)*g.ldc+j0:(i+r)*g.ldc+j0+w])
							}
						}
						g.ks.k4(kb, apan, bpan, lb, tile[:], nr, load)
						for r := range mr {
							copy(g.c[(i+r)*g.ldc+j0:(i+r)*g.ldc+j0+w], tile[r*nr:r*nr+w])
						}
					}
					i += mr
					continue
				}
				var arow []float64
				if g.tA {
					arow = g.rest[(i-g.mt*mr)*k+p0:]
				} else {
					arow = g.a[i*g.lda+p0:]
				}
				crow := g.c[i*g.ldc+j0:]
				if w == nr {
					g.ks.k1(kb, arow, bpan, lb, crow, load)
				} else {
					if load {
						copy(tile[:w], crow[:w])
					}
					g.ks.k1(kb, arow, bpan, lb, tile[:], load)
					copy(crow[:w], tile[:w])
				}
				i++
			}
		}
	}
}
