package mcmc

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// naiveTrmv is y = x + s·L·z summed left to right, the textbook product.
func naiveTrmv(x, l, z []float64, d int, scale float64) []float64 {
	y := make([]float64, d)
	for i := range d {
		s := 0.0
		for k := 0; k <= i; k++ {
			s += l[i*d+k] * z[k]
		}
		y[i] = x[i] + scale*s
	}
	return y
}

// randomFactor is x, a lower-triangular L with entries over eight orders
// of magnitude and NaN above the diagonal (which must never be read).
func randomFactor(r *rand.Rand, d int) (x, l []float64) {
	x, l = make([]float64, d), make([]float64, d*d)
	for i := range d {
		x[i] = r.NormFloat64() * 10
		for k := 0; k <= i; k++ {
			l[i*d+k] = r.NormFloat64() * math.Exp(4*r.NormFloat64())
		}
		for k := i + 1; k < d; k++ {
			l[i*d+k] = math.NaN()
		}
	}
	return x, l
}

// TestWalkerKernels: for every d through several blocks, the kernel in use
// (AVX2 where the CPU has it) gives the same bits as the portable twin
// (so results do not depend on the machine), and both agree with the
// textbook product y = x + s·L·z to a rounding-error bound,
// |Δ| ≤ 4·(i+2)·ε·(s·Σ|L_ik·z_k| + |x_i|) (Higham 2002, Sec. 3.1: γ_n,
// with a factor 4 of slack); the normals are the first d draws of the
// stream, in order.
func TestWalkerKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var w Walker
	for d := 1; d <= 70; d++ {
		for rep := range 4 {
			x, l := randomFactor(r, d)
			scale := 0.5 + r.Float64()
			w.SetFactor(l, d)
			seed := r.Uint64()
			got, twin := make([]float64, d), make([]float64, d)
			w.Step(rand.New(rand.NewPCG(seed, 1)), got, x, scale)
			z := append([]float64(nil), w.Z()...)
			zr := rand.New(rand.NewPCG(seed, 1))
			for j := range d {
				if want := zr.NormFloat64(); z[j] != want {
					t.Fatalf("d=%d: z[%d] = %v, want the stream's %v", d, j, z[j], want)
				}
			}
			trmvLowerGo(twin, x, w.l, w.z, d, w.ds, scale)
			want := naiveTrmv(x, l, z, d, scale)
			for i := range d {
				if math.Float64bits(got[i]) != math.Float64bits(twin[i]) {
					t.Fatalf("d=%d rep %d row %d: kernel %v, portable twin %v (AVX2 kernel in use: %v)", d, rep, i, got[i], twin[i], hasFMA)
				}
				abs := 0.0
				for k := 0; k <= i; k++ {
					abs += math.Abs(l[i*d+k] * z[k])
				}
				tol := 4 * float64(i+2) * 0x1p-52 * (scale*abs + math.Abs(x[i]))
				if !(math.Abs(got[i]-want[i]) <= tol) {
					t.Fatalf("d=%d row %d: %v, textbook %v (tolerance %g)", d, i, got[i], want[i], tol)
				}
			}
		}
	}
}

// BenchmarkTrmv: one L·z product at d = 50 by the kernel in use, the
// portable twin, and per-row calls of gonum's Dot (the code before).
func BenchmarkTrmv(b *testing.B) {
	const d = 50
	r := rand.New(rand.NewPCG(1, 1))
	x, l := randomFactor(r, d)
	for i := range d {
		for k := i + 1; k < d; k++ {
			l[i*d+k] = 0
		}
	}
	var w Walker
	w.SetFactor(l, d)
	w.Step(r, make([]float64, d), x, 1)
	z, y := w.Z(), make([]float64, d)
	b.Run("kernel", func(b *testing.B) {
		for range b.N {
			trmvLower(y, x, w.l, w.z, d, w.ds, 0.5)
		}
	})
	b.Run("portable", func(b *testing.B) {
		for range b.N {
			trmvLowerGo(y, x, w.l, w.z, d, w.ds, 0.5)
		}
	})
	b.Run("gonum-dot", func(b *testing.B) {
		for range b.N {
			for i := range d {
				y[i] = x[i] + 0.5*floats.Dot(l[i*d:i*d+i+1], z[:i+1])
			}
		}
	})
}
