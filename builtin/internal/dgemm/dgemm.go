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

// mc is the height of a block of rows of C (a multiple of 4).
const mc = 256

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
	// k4s, k1s: k4 and k1 with B in float32, widened exactly to float64.
	k4s func(k int, a []float64, b []float32, ldb int, c []float64, ldc int, load bool)
	k1s func(k int, a []float64, b []float32, ldb int, c []float64, load bool)
	// k1p (nil: not available): k1 over two panels b, b2 (float64) or
	// b32, b232 (float32) into 2·nr contiguous values of c.
	k1p func(k int, a, b, b2 []float64, b32, b232 []float32, ldb int, c []float64, load bool)
	// k12 (nil: not available): the 12×16 tile c (row stride ldc) from k
	// steps of the packed A (12 values a step) and 16 columns of the B
	// panel b (float64) or b32 (float32), row stride ldb.
	k12 func(k int, a []float64, b []float64, b32 []float32, ldb int, c []float64, ldc int, load bool)
}

// k12Go is the definition of the k12 kernels (the portable twin of
// k12x16AVX512 and k12x16AVX512F32): c[r][j] (+)= Σ_p a[p·12+r]·b[p·ldb+j]
// for r < 12, j < 16, in order p = 0 … k−1, one fused multiply-add a term.
func k12Go(k int, a []float64, b []float64, b32 []float32, ldb int, c []float64, ldc int, load bool) {
	const rows, cols = 12, 16
	for r := range rows {
		for j := range cols {
			s := 0.0
			if load {
				s = c[r*ldc+j]
			}
			for p := range k {
				bv := 0.0
				if b32 != nil {
					bv = float64(b32[p*ldb+j])
				} else {
					bv = b[p*ldb+j]
				}
				s = math.FMA(a[p*12+r], bv, s)
			}
			c[r*ldc+j] = s
		}
	}
}

// m12Max: products with 12 ≤ m ≤ m12Max rows (and A not transposed) take
// their rows in tiles of 12 with the k12 kernel where the CPU has it (each
// B row read once for 12 rows of C); the
// remaining m mod 12 rows, and larger products, take the 4-row tiles.
const m12Max = 48

// portable is the Go implementation (math.FMA), the twin of the assembly
// kernels; nr = 8.
var portable = &kernels{name: "portable", nr: 8, k4: k4Go, k1: k1Go, k4s: k4F32Go, k1s: k1F32Go}

// k4Go: c[r][j] (+)= Σ_p a[p·4+r]·b[p·ldb+j] for r < 4, j < 8, the sum
// taken in order p = 0 … k−1 by one fused multiply-add per term; B in
// float64, or in float32 for k4F32Go (float64(b) is exact).
func k4Go(k int, a, b []float64, ldb int, c []float64, ldc int, load bool) {
	k4T(k, a, b, ldb, c, ldc, load)
}

func k4F32Go(k int, a []float64, b []float32, ldb int, c []float64, ldc int, load bool) {
	k4T(k, a, b, ldb, c, ldc, load)
}

func k4T[B float32 | float64](k int, a []float64, b []B, ldb int, c []float64, ldc int, load bool) {
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
				row[j] = math.FMA(ar, float64(bv), row[j])
			}
		}
	}
	for r := range mr {
		copy(c[r*ldc:r*ldc+nr], acc[r*nr:(r+1)*nr])
	}
}

// k1Go is k4Go for one row whose k values of A are contiguous; k1F32Go
// the same with B in float32.
func k1Go(k int, a, b []float64, ldb int, c []float64, load bool) { k1T(k, a, b, ldb, c, load) }

func k1F32Go(k int, a []float64, b []float32, ldb int, c []float64, load bool) {
	k1T(k, a, b, ldb, c, load)
}

func k1T[B float32 | float64](k int, a []float64, b []B, ldb int, c []float64, load bool) {
	const nr = 8
	var acc [nr]float64
	if load {
		copy(acc[:], c[:nr])
	}
	for p := range k {
		bp := b[p*ldb : p*ldb+nr]
		ar := a[p]
		for j, bv := range bp {
			acc[j] = math.FMA(ar, float64(bv), acc[j])
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
	if tB {
		need("B", b, n, k, ldb)
	} else {
		need("B", b, k, n, ldb)
	}
	if trivial(tA, m, n, k, a, lda, add, c, ldc) {
		return
	}
	nr := ks.nr
	np := (n + nr - 1) / nr
	// B: packed panels of nr columns (k rows of nr values, zero padded), or
	// read in place with only a partial last panel packed.
	packed := tB || m >= packRows
	first := 0 // first packed panel
	if !packed {
		first = n / nr
	}
	var bp []float64
	if first < np {
		bbuf := getBuf((np - first) * k * nr)
		defer pool.Put(bbuf)
		bp = *bbuf
		packPanels(bp, nil, nr, first, np, tB, k, n, b, ldb)
	}
	multiply(&job{ks: ks, tA: tA, m: m, n: n, k: k, a: a, lda: lda,
		b: b, ldb: ldb, bp: bp, first: first, add: add, c: c, ldc: ldc}, procs)
}

// packPanels copies the column panels first ≤ jp < np of op(B) into dst
// (float64) or dst32 (float32, rounded to nearest), panel jp at offset
// (jp − first)·k·nr, k rows of nr values, zero padded.
func packPanels(dst []float64, dst32 []float32, nr, first, np int, tB bool, k, n int, b []float64, ldb int) {
	for jp := first; jp < np; jp++ {
		off := (jp - first) * k * nr
		j0 := jp * nr
		w := min(nr, n-j0)
		if dst32 == nil && !tB {
			for p := range k {
				d := dst[off+p*nr : off+(p+1)*nr]
				copy(d[:w], b[p*ldb+j0:p*ldb+j0+w])
				clear(d[w:])
			}
			continue
		}
		if dst32 == nil {
			// tB: column j of the panel is row j0 + j of B, read in order.
			// Blocks of 8 rows of the panel (8 × nr values, in L1).
			d := dst[off : off+k*nr]
			for p0 := 0; p0 < k; p0 += 8 {
				p1 := min(p0+8, k)
				for j := range w {
					src := b[(j0+j)*ldb+p0 : (j0+j)*ldb+p1]
					for q, v := range src {
						d[(p0+q)*nr+j] = v
					}
				}
			}
			if w < nr {
				for p := range k {
					clear(d[p*nr+w : (p+1)*nr])
				}
			}
			continue
		}
		for p := range k {
			for j := range nr {
				v := 0.0
				if j < w {
					if tB {
						v = b[(j0+j)*ldb+p]
					} else {
						v = b[p*ldb+j0+j]
					}
				}
				if dst32 != nil {
					dst32[off+p*nr+j] = float32(v)
				} else {
					dst[off+p*nr+j] = v
				}
			}
		}
	}
}

// multiply packs A and runs the job, split over procs goroutines when large.
func multiply(g *job, procs int) {
	release := g.prepare()
	defer release()
	m, n, k := g.m, g.n, g.k
	nr := g.ks.nr
	np := (n + nr - 1) / nr
	rowTiles := (m + mr - 1) / mr
	unit := mr // rows are split over goroutines in whole tiles
	if g.m12 > 0 {
		unit = 12
	}
	rowUnits := (m + unit - 1) / unit
	switch {
	case procs < 2 || m*n*k < parallelFMAs:
		g.run(0, np, 0, m)
	case np >= procs:
		split(procs, np, func(lo, hi int) { g.run(lo, hi, 0, m) })
	case rowTiles >= procs && rowUnits >= 2:
		split(min(procs, rowUnits), rowUnits, func(lo, hi int) { g.run(0, np, lo*unit, min(hi*unit, m)) })
	default:
		g.run(0, np, 0, m)
	}
}

// tiles chooses the row tiles: rows [0, m12) in tiles of 12 for the k12
// kernel, then mt tiles of 4 rows, then single rows.
func (g *job) tiles() {
	g.m12 = 0
	if g.ks.k12 != nil && !g.tA && g.m >= 12 && g.m <= m12Max {
		g.m12 = g.m - g.m%12
	}
	g.mt = (g.m - g.m12) / mr
}

// prepare chooses the row tiles and packs A: rows [0, m12) go to the k12
// kernel, packed as tiles of 12 rows (k steps of 12 values); tile t of the
// rest, at offset m12·k, holds rows m12 + 4t …
// m12 + 4t + 3 as k steps of 4 values; the remaining rows follow, each as k
// contiguous values (only when A is transposed: otherwise they are read in
// place). release returns the buffer.
func (g *job) prepare() (release func()) {
	m, k := g.m, g.k
	g.tiles()
	size := m * k
	if !g.tA {
		size = (g.m12 + g.mt*mr) * k // single rows are read in place
	}
	if size == 0 {
		return func() {}
	}
	abuf := getBuf(size)
	ap := *abuf
	a, lda, tA, mt, m12 := g.a, g.lda, g.tA, g.mt, g.m12
	for t := range m12 / 12 {
		pack12(ap[t*12*k:(t+1)*12*k], a[t*12*lda:], lda, 0, k)
	}
	g.ap12, ap = ap[:m12*k], ap[m12*k:]
	for t := range mt {
		dst := ap[t*mr*k : (t+1)*mr*k]
		if !tA {
			pack4(dst, a[(m12+t*mr)*lda:], lda, 0, k)
			continue
		}
		for r := range mr {
			i := m12 + t*mr + r
			for p := range k {
				dst[p*mr+r] = a[p*lda+i]
			}
		}
	}
	rest := ap[mt*mr*k:]
	if tA {
		for i := m12 + mt*mr; i < m; i++ {
			dst := rest[(i-m12-mt*mr)*k : (i-m12-mt*mr+1)*k]
			for p := range k {
				dst[p] = a[p*lda+i]
			}
		}
	}
	g.ap, g.rest = ap, rest
	return func() { pool.Put(abuf) }
}

// Packed is op(B) (k×n) copied once into the panel layout of this
// machine's kernels, in float64 or rounded to float32, for repeated
// products with the same B (a network's weights at inference): GemmPacked
// then reads it sequentially and packs nothing. With float32, each product
// term is fma(a_ip, float64(b32_pj), s): B is rounded once, to nearest, the
// sums stay in float64.
type Packed struct {
	K, N int
	ks   *kernels
	d64  []float64
	d32  []float32
}

// Pack copies op(B) (B k×n with stride ldb, or n×k when tB) into a Packed,
// rounded to float32 when f32.
func Pack(tB bool, k, n int, b []float64, ldb int, f32 bool) *Packed {
	return pack(best, tB, k, n, b, ldb, f32)
}

func pack(ks *kernels, tB bool, k, n int, b []float64, ldb int, f32 bool) *Packed {
	if k < 0 || n < 0 {
		panic(fmt.Sprintf("dgemm: Pack: negative dimension k=%d n=%d", k, n))
	}
	if tB {
		need("B", b, n, k, ldb)
	} else {
		need("B", b, k, n, ldb)
	}
	nr := ks.nr
	np := (n + nr - 1) / nr
	p := &Packed{K: k, N: n, ks: ks}
	if f32 {
		p.d32 = make([]float32, np*k*nr)
	} else {
		p.d64 = make([]float64, np*k*nr)
	}
	packPanels(p.d64, p.d32, nr, 0, np, tB, k, n, b, ldb)
	return p
}

// Float32 reports whether the packed B is rounded to float32.
func (p *Packed) Float32() bool { return p.d32 != nil }

// GemmPacked is Gemm with op(B) from Pack: C = op(A)·B (+ C), op(A) m×K,
// C m×N. Every C element is summed as in Gemm (with B's float32 values
// when packed so), so the result does not depend on the kernel or on the
// number of goroutines.
func GemmPacked(tA bool, m int, a []float64, lda int, pb *Packed, add bool, c []float64, ldc int) {
	gemmPacked(runtime.GOMAXPROCS(0), tA, m, a, lda, pb, add, c, ldc)
}

// GemmPackedSerial is GemmPacked on the calling goroutine only (for
// callers that already run one product per core); the same bits.
func GemmPackedSerial(tA bool, m int, a []float64, lda int, pb *Packed, add bool, c []float64, ldc int) {
	gemmPacked(1, tA, m, a, lda, pb, add, c, ldc)
}

func gemmPacked(procs int, tA bool, m int, a []float64, lda int, pb *Packed, add bool, c []float64, ldc int) {
	n, k := pb.N, pb.K
	if m < 0 {
		panic(fmt.Sprintf("dgemm: negative dimension m=%d", m))
	}
	if trivial(tA, m, n, k, a, lda, add, c, ldc) {
		return
	}
	multiply(&job{ks: pb.ks, tA: tA, m: m, n: n, k: k, a: a, lda: lda,
		bp: pb.d64, bp32: pb.d32, add: add, c: c, ldc: ldc}, procs)
}

// trivial checks op(A) (m×k) and C (m×n) against their slices and
// reports whether the product is already done: an empty C, or k = 0
// (then C = 0, or C unchanged when add).
func trivial(tA bool, m, n, k int, a []float64, lda int, add bool, c []float64, ldc int) bool {
	if tA {
		need("A", a, k, m, lda)
	} else {
		need("A", a, m, k, lda)
	}
	need("C", c, m, n, ldc)
	if m == 0 || n == 0 {
		return true
	}
	if k == 0 {
		if !add {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return true
	}
	return false
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
	m12         int // rows [0, m12) are taken in 12-row tiles (k12)
	ap12        []float64
	rowsOff     int // single row i (A not transposed) is row i − rowsOff of a
	a           []float64
	lda         int
	ap, rest    []float64
	b           []float64
	ldb         int
	bp          []float64
	bp32        []float32 // packed float32 panels (then bp is nil)
	first       int
	add         bool
	c           []float64
	ldc         int
}

// scratch holds the C tiles of the partial panels (in a pool: a product
// split in many small calls would otherwise allocate them each time).
type scratch struct {
	tile   [mr * 32]float64
	tile12 [12 * 16]float64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// run computes the C block of column panels [jp0, jp1) and rows [i0, i1)
// (i0 a multiple of 4).
func (g *job) run(jp0, jp1, i0, i1 int) {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	var wbuf *[]float64
	if g.bp32 != nil && i1-max(i0, g.m12) >= 64 { // see block
		wbuf = getBuf(kc * g.ks.nr)
		defer pool.Put(wbuf)
	}
	if i0 < g.m12 {
		g.tiles12(jp0, jp1, i0, min(i1, g.m12), &sc.tile12)
		i0 = min(i1, g.m12)
	}
	// Blocks of mc rows, so the packed A block (mc·kc values) stays in
	// the L2 cache while the column panels go by.
	for ib := i0; ib < i1; ib += mc {
		g.block(jp0, jp1, ib, min(ib+mc, i1), &sc.tile, wbuf)
	}
}

// tiles12 computes the 12-row tiles of rows [i0, i1) (multiples of 12) for
// the column panels [jp0, jp1), each panel as two halves of 16 columns, over
// the whole depth at once (one B row serves 12 rows of C; A is read in
// packed).
func (g *job) tiles12(jp0, jp1, i0, i1 int, tile *[12 * 16]float64) {
	const h = 16
	nr, k := g.ks.nr, g.k
	for jp := jp0; jp < jp1; jp++ {
		bpan, bpan32, lb := g.panel(jp, 0)
		for q := 0; q < nr; q += h {
			j0 := jp*nr + q
			w := min(h, g.n-j0)
			if w <= 0 {
				break
			}
			var b []float64
			var b32 []float32
			if bpan32 != nil {
				b32 = bpan32[q:]
			} else {
				b = bpan[q:]
			}
			for i := i0; i < i1; i += 12 {
				a := g.ap12[i*k:]
				c := g.c[i*g.ldc+j0:]
				if w == h {
					g.ks.k12(k, a, b, b32, lb, c, g.ldc, g.add)
					continue
				}
				if g.add {
					for r := range 12 {
						copy(tile[r*h:r*h+w], c[r*g.ldc:r*g.ldc+w])
					}
				}
				g.ks.k12(k, a, b, b32, lb, tile[:], h, g.add)
				for r := range 12 {
					copy(c[r*g.ldc:r*g.ldc+w], tile[r*h:r*h+w])
				}
			}
		}
	}
}

// block is run for the rows [i0, i1).
func (g *job) block(jp0, jp1, i0, i1 int, tile *[mr * 32]float64, wbuf *[]float64) {
	nr := g.ks.nr
	k := g.k
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		load := g.add || p0 > 0
		paired := false // the single rows of this panel were done with the previous one
		for jp := jp0; jp < jp1; jp++ {
			j0 := jp * nr
			w := min(nr, g.n-j0)
			bpan, bpan32, lb := g.panel(jp, p0)
			if bpan32 != nil && i1-i0 >= 64 {
				// Several row tiles use this panel: widen it once
				// (exactly) rather than in every tile's kernel.
				wide := (*wbuf)[:kb*nr]
				for q, v := range bpan32[:kb*nr] {
					wide[q] = float64(v)
				}
				bpan, bpan32 = wide, nil
			}
			end4 := g.m12 + g.mt*mr // end of the 4-row tiles
			for i := i0; i < min(i1, end4); i += mr {
				apan := g.ap[((i-g.m12)/mr)*mr*k+p0*mr:]
				if w == nr {
					g.k4(kb, apan, bpan, bpan32, lb, g.c[i*g.ldc+j0:], g.ldc, load)
					continue
				}
				if load {
					for r := range mr {
						copy(tile[r*nr:r*nr+w], g.c[(i+r)*g.ldc+j0:(i+r)*g.ldc+j0+w])
					}
				}
				g.k4(kb, apan, bpan, bpan32, lb, tile[:], nr, load)
				for r := range mr {
					copy(g.c[(i+r)*g.ldc+j0:(i+r)*g.ldc+j0+w], tile[r*nr:r*nr+w])
				}
			}
			if paired {
				paired = false
				continue
			}
			// The single rows beyond the last whole tile; two whole panels
			// at once where the CPU has the paired kernel (twice the
			// independent sums in flight; the same operations per element).
			pair := g.ks.k1p != nil && w == nr && jp+1 < jp1 && g.n-(j0+nr) >= nr
			var b2 []float64
			var b2s []float32
			if pair {
				bpan, bpan32, _ = g.panel(jp, p0)
				b2, b2s, _ = g.panel(jp+1, p0)
				paired = true
			}
			for i := max(i0, end4); i < i1; i++ {
				var arow []float64
				if g.tA {
					arow = g.rest[(i-end4)*k+p0:]
				} else {
					arow = g.a[(i-g.rowsOff)*g.lda+p0:]
				}
				crow := g.c[i*g.ldc+j0:]
				switch {
				case pair:
					g.ks.k1p(kb, arow, bpan, b2, bpan32, b2s, lb, crow, load)
				case w == nr:
					g.k1(kb, arow, bpan, bpan32, lb, crow, load)
				default:
					if load {
						copy(tile[:w], crow[:w])
					}
					g.k1(kb, arow, bpan, bpan32, lb, tile[:], load)
					copy(crow[:w], tile[:w])
				}
			}
		}
	}
}

// panel is the B panel jp from row p0 on, as stored: packed float64 or
// float32 (stride nr), or in place (stride ldb).
func (g *job) panel(jp, p0 int) ([]float64, []float32, int) {
	nr, k := g.ks.nr, g.k
	switch {
	case g.bp32 != nil:
		return nil, g.bp32[jp*k*nr+p0*nr:], nr
	case jp >= g.first:
		return g.bp[(jp-g.first)*k*nr+p0*nr:], nil, nr
	default:
		return g.b[p0*g.ldb+jp*nr:], nil, g.ldb
	}
}

func (g *job) k4(k int, a, b []float64, b32 []float32, ldb int, c []float64, ldc int, load bool) {
	if b32 != nil {
		g.ks.k4s(k, a, b32, ldb, c, ldc, load)
	} else {
		g.ks.k4(k, a, b, ldb, c, ldc, load)
	}
}

func (g *job) k1(k int, a, b []float64, b32 []float32, ldb int, c []float64, load bool) {
	if b32 != nil {
		g.ks.k1s(k, a, b32, ldb, c, load)
	} else {
		g.ks.k1(k, a, b, ldb, c, load)
	}
}

// PackedA is an m×K left operand A (not transposed) kept in the layout the
// kernels of a Packed B read, so that a caller producing A column by column
// (a network layer's activations, by the goroutines that computed them) can
// pack it as it goes and then multiply by column panels of B on several
// goroutines without packing A again. See NewPackedA, SetCols and
// GemmPackedA.
type PackedA struct {
	M, K    int
	ks      *kernels
	m12, mt int
	ap12    []float64 // 12-row tiles: k steps of 12 values
	ap      []float64 // 4-row tiles: k steps of 4 values
	rows    []float64 // the remaining rows, row-major (stride K)
}

// NewPackedA allocates a PackedA of m rows and k columns for products with
// B packed by Pack on this machine.
func NewPackedA(m, k int) *PackedA {
	return newPackedA(best, m, k)
}

func newPackedA(ks *kernels, m, k int) *PackedA {
	if m < 0 || k < 0 {
		panic(fmt.Sprintf("dgemm: NewPackedA: negative dimension m=%d k=%d", m, k))
	}
	g := &job{ks: ks, m: m}
	g.tiles()
	pa := &PackedA{M: m, K: k, ks: ks, m12: g.m12, mt: g.mt}
	pa.ap12 = make([]float64, pa.m12*k)
	pa.ap = make([]float64, pa.mt*mr*k)
	pa.rows = make([]float64, (m-pa.m12-pa.mt*mr)*k)
	return pa
}

// SetCols copies the columns [j0, j1) of the m×K row-major matrix src
// (row stride lds) into pa. Calls for disjoint column ranges may run
// concurrently.
func (pa *PackedA) SetCols(src []float64, lds, j0, j1 int) {
	m, k := pa.M, pa.K
	if j0 < 0 || j1 > k || j0 > j1 {
		panic(fmt.Sprintf("dgemm: SetCols: columns [%d, %d) of %d", j0, j1, k))
	}
	if j0 == j1 || m == 0 {
		return
	}
	need("A", src, m, k, lds)
	for t := range pa.m12 / 12 {
		pack12(pa.ap12[t*12*k:(t+1)*12*k], src[t*12*lds:], lds, j0, j1)
	}
	for t := range pa.mt {
		pack4(pa.ap[t*mr*k:(t+1)*mr*k], src[(pa.m12+t*mr)*lds:], lds, j0, j1)
	}
	for i := pa.m12 + pa.mt*mr; i < m; i++ {
		q := i - pa.m12 - pa.mt*mr
		copy(pa.rows[q*k+j0:q*k+j1], src[i*lds+j0:i*lds+j1])
	}
}

// Segments calls f on the contiguous pieces of pa's storage that hold the
// columns [j0, j1) of A (every row, in some order), for an element-wise
// operation in place (an activation applied after SetCols).
func (pa *PackedA) Segments(j0, j1 int, f func(seg []float64)) {
	if j0 < 0 || j1 > pa.K || j0 > j1 {
		panic(fmt.Sprintf("dgemm: Segments: columns [%d, %d) of %d", j0, j1, pa.K))
	}
	if j0 == j1 {
		return
	}
	k := pa.K
	for t := range pa.m12 / 12 {
		f(pa.ap12[t*12*k+j0*12 : t*12*k+j1*12])
	}
	for t := range pa.mt {
		f(pa.ap[t*mr*k+j0*mr : t*mr*k+j1*mr])
	}
	for q := range pa.M - pa.m12 - pa.mt*mr {
		f(pa.rows[q*k+j0 : q*k+j1])
	}
}

// Panels is the number of column panels of pb (of PanelWidth columns; the
// last may be partial).
func (pb *Packed) Panels() int { return (pb.N + pb.ks.nr - 1) / pb.ks.nr }

// PanelWidth is the number of columns of a panel of pb.
func (pb *Packed) PanelWidth() int { return pb.ks.nr }

// GemmPackedA computes the columns of the panels [jp0, jp1) of C = A·B
// (+ C when add), A from pa (M×K) and B from pb (K×N), on the calling
// goroutine. Each C element is summed as in Gemm, so the result has the
// bits of GemmPacked whatever the panels and the goroutine that computed
// them.
func GemmPackedA(pa *PackedA, pb *Packed, add bool, c []float64, ldc int, jp0, jp1 int) {
	if pa.K != pb.K || pa.ks != pb.ks {
		panic(fmt.Sprintf("dgemm: GemmPackedA: A is %d×%d (%s), B %d×%d (%s)", pa.M, pa.K, pa.ks.name, pb.K, pb.N, pb.ks.name))
	}
	if jp0 < 0 || jp1 > pb.Panels() || jp0 > jp1 {
		panic(fmt.Sprintf("dgemm: GemmPackedA: panels [%d, %d) of %d", jp0, jp1, pb.Panels()))
	}
	m, n, k := pa.M, pb.N, pb.K
	need("C", c, m, n, ldc)
	if m == 0 || jp0 == jp1 {
		return
	}
	if k == 0 {
		if !add {
			j0, j1 := jp0*pb.ks.nr, min(jp1*pb.ks.nr, n)
			for i := range m {
				clear(c[i*ldc+j0 : i*ldc+j1])
			}
		}
		return
	}
	g := &job{ks: pb.ks, m: m, n: n, k: k, a: pa.rows, lda: k, m12: pa.m12, mt: pa.mt,
		ap12: pa.ap12, ap: pa.ap, bp: pb.d64, bp32: pb.d32, add: add, c: c, ldc: ldc}
	g.rowsOff = pa.m12 + pa.mt*mr // pa.rows starts at that row
	g.run(jp0, jp1, 0, m)
}

// pack12 sets dst[j·12 + r] = src[r·lds + j] for r < 12, j0 ≤ j < j1: the
// columns [j0, j1) of 12 rows in the layout of the k12 kernels.
func pack12(dst, src []float64, lds, j0, j1 int) {
	if j0 >= j1 {
		return
	}
	_ = src[11*lds+j1-1]
	r0, r1, r2, r3 := src[j0:j1], src[lds+j0:lds+j1], src[2*lds+j0:2*lds+j1], src[3*lds+j0:3*lds+j1]
	r4, r5, r6, r7 := src[4*lds+j0:4*lds+j1], src[5*lds+j0:5*lds+j1], src[6*lds+j0:6*lds+j1], src[7*lds+j0:7*lds+j1]
	r8, r9, r10, r11 := src[8*lds+j0:8*lds+j1], src[9*lds+j0:9*lds+j1], src[10*lds+j0:10*lds+j1], src[11*lds+j0:11*lds+j1]
	d := dst[j0*12 : j1*12]
	for j := range r0 {
		e := d[j*12 : j*12+12 : j*12+12]
		e[0], e[1], e[2], e[3] = r0[j], r1[j], r2[j], r3[j]
		e[4], e[5], e[6], e[7] = r4[j], r5[j], r6[j], r7[j]
		e[8], e[9], e[10], e[11] = r8[j], r9[j], r10[j], r11[j]
	}
}

// pack4 is pack12 for the 4-row tiles: dst[j·4 + r] = src[r·lds + j].
func pack4(dst, src []float64, lds, j0, j1 int) {
	if j0 >= j1 {
		return
	}
	_ = src[3*lds+j1-1]
	r0, r1, r2, r3 := src[j0:j1], src[lds+j0:lds+j1], src[2*lds+j0:2*lds+j1], src[3*lds+j0:3*lds+j1]
	d := dst[j0*4 : j1*4]
	for j := range r0 {
		e := d[j*4 : j*4+4 : j*4+4]
		e[0], e[1], e[2], e[3] = r0[j], r1[j], r2[j], r3[j]
	}
}
