package softplus

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refSoftplus and refSigmoid are the reference formulas of the standard
// library (math.Log1p, fdlibm; math.Exp), as builtin/surrogate/nn computed
// them before this package.
func refSoftplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

func refSigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// ulps is |a − b| in units of the last place of b (the spacing of float64
// at |b|, 2⁻¹⁰⁷⁴ below the normal range).
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	e := math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b)
	return math.Abs(a-b) / e
}

// testPoints: a dense sweep of [−750, 750], a finer one of [−40, 40] where
// both terms of the softplus matter, random points over the range, and the
// special values.
func testPoints() []float64 {
	var zs []float64
	for z := -750.0; z <= 750; z += 0.0137 {
		zs = append(zs, z)
	}
	for z := -40.0; z <= 40; z += 0.000731 {
		zs = append(zs, z)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		zs = append(zs, (2*r.Float64()-1)*math.Exp(7*r.Float64()-3))
	}
	return append(zs, 0, math.Copysign(0, -1), 1e-300, -1e-300, math.Ln2, -math.Ln2, 36.7, -36.7, -708.39, -745.1, -745.2,
		math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1))
}

// maxULP is the accuracy bound of Softplus and Sigmoid against the
// reference formulas, where the value is a normal float64: ≤ 4 units in
// the last place (both sides carry up to ≈ 1 ulp from their exponential and
// logarithm; measured maximum 2, see the test log). Below the normal range
// (z < −708.4) the bound is absolute, 2⁻¹⁰²² · 4ε.
const maxULP = 4

func checkAccuracy(t *testing.T, name string, f func(dst, z []float64), ref func(float64) float64) {
	zs := testPoints()
	got := make([]float64, len(zs))
	f(got, zs)
	worst, at := 0.0, 0.0
	for i, z := range zs {
		want := ref(z)
		if math.IsNaN(got[i]) || math.IsInf(want, 0) && got[i] != want {
			t.Fatalf("%s(%v) = %v, reference %v", name, z, got[i], want)
		}
		if math.Abs(want) < 0x1p-1022 {
			if d := math.Abs(got[i] - want); d > 0x1p-1022*4*0x1p-52 {
				t.Fatalf("%s(%v) = %v, reference %v (|Δ| %g below the normal range)", name, z, got[i], want, d)
			}
			continue
		}
		if u := ulps(got[i], want); u > worst {
			worst, at = u, z
		}
	}
	t.Logf("%s: %d points, worst %.2g ulp at z = %v", name, len(zs), worst, at)
	if worst > maxULP {
		t.Errorf("%s: %.3g ulp from the reference at z = %v, bound %d", name, worst, at, maxULP)
	}
}

func TestSoftplusAccuracy(t *testing.T) { checkAccuracy(t, "Softplus", Softplus, refSoftplus) }
func TestSigmoidAccuracy(t *testing.T)  { checkAccuracy(t, "Sigmoid", Sigmoid, refSigmoid) }

// TestKernelBitIdentical: the vector kernel (AVX-512 where the CPU has it)
// gives the bits of the portable twin at every test point, for every
// length 0 … 40 (the tail handled by the twin) and offset.
func TestKernelBitIdentical(t *testing.T) {
	t.Logf("kernel: %s", Kernel)
	zs := testPoints()
	zs = append(zs, math.NaN())
	got := make([]float64, len(zs))
	for _, c := range []struct {
		name string
		vec  func(dst, z []float64)
		twin func(float64) float64
	}{{"Softplus", Softplus, softplusGo}, {"Sigmoid", Sigmoid, sigmoidGo}} {
		c.vec(got, zs)
		for i, z := range zs {
			w := c.twin(z)
			if math.Float64bits(got[i]) != math.Float64bits(w) && !(math.IsNaN(w) && math.IsNaN(got[i])) {
				t.Fatalf("%s(%v): kernel %v, portable twin %v", c.name, z, got[i], w)
			}
		}
		for n := 0; n <= 40; n++ {
			for off := 0; off < 3; off++ {
				d := make([]float64, n)
				c.vec(d, zs[off*1000:off*1000+n])
				for i := range d {
					if w := c.twin(zs[off*1000+i]); math.Float64bits(d[i]) != math.Float64bits(w) {
						t.Fatalf("%s length %d offset %d element %d: %v, twin %v", c.name, n, off, i, d[i], w)
					}
				}
			}
		}
	}
}

// TestKnownValues: a(0) = ln 2, a′(0) = 1/2, a(z) − a(−z) = z, and
// a′(z) + a′(−z) = 1 (exact identities of the functions, to the bound).
func TestKnownValues(t *testing.T) {
	zs := []float64{0, 0.5, 1, 3, 10, 30}
	sp, sg := make([]float64, 2*len(zs)), make([]float64, 2*len(zs))
	in := append(append([]float64(nil), zs...), make([]float64, len(zs))...)
	for i, z := range zs {
		in[len(zs)+i] = -z
	}
	Softplus(sp, in)
	Sigmoid(sg, in)
	if sp[0] != math.Ln2 || sg[0] != 0.5 {
		t.Errorf("a(0) = %v, a′(0) = %v; want ln 2, 1/2", sp[0], sg[0])
	}
	for i, z := range zs {
		if d := sp[i] - sp[len(zs)+i] - z; math.Abs(d) > 4*0x1p-52*math.Max(1, z) {
			t.Errorf("a(%v) − a(−%v) − %v = %g", z, z, z, d)
		}
		if d := sg[i] + sg[len(zs)+i] - 1; math.Abs(d) > 4*0x1p-52 {
			t.Errorf("a′(%v) + a′(−%v) − 1 = %g", z, z, d)
		}
	}
}

func BenchmarkSoftplus(b *testing.B) {
	z := make([]float64, 4096)
	for i := range z {
		z[i] = float64(i%200)/10 - 10
	}
	d := make([]float64, len(z))
	b.Run("kernel", func(b *testing.B) {
		for range b.N {
			Softplus(d, z)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(z)), "ns/value")
	})
	b.Run("portable", func(b *testing.B) {
		for range b.N {
			for i, v := range z {
				d[i] = softplusGo(v)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(z)), "ns/value")
	})
	b.Run("math", func(b *testing.B) {
		for range b.N {
			for i, v := range z {
				d[i] = refSoftplus(v)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(z)), "ns/value")
	})
}
