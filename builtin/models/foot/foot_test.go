package foot

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kinfer/kinfer/abi"
	fc "github.com/kinfer/kinfer/builtin/footcontact"
)

// testTheta is a plausible θ: stiffness and damping varying per element,
// small deviations.
func testTheta(rng *rand.Rand) []float64 {
	th := make([]float64, NParams)
	for i := 0; i < fc.NElem; i++ {
		th[IdxK+i] = 2000 + 1500*rng.Float64()
		th[IdxC+i] = 0.5 + rng.Float64()
	}
	th[IdxY0], th[IdxMuS], th[IdxMuD], th[IdxMuV] = 0.002, 0.14, 0.1, 0.01
	for i := IdxDev; i < NParams; i++ {
		th[i] = 0.002 * rng.NormFloat64()
	}
	return th
}

// testRows builds K frames with both feet pressed into the floor and
// slipping slowly (and one frame of the left foot in the air).
func testRows(rng *rand.Rand, K int) []float64 {
	x := make([]float64, 0, K*NConds)
	for k := 0; k < K; k++ {
		tau := (float64(k) + 0.3) / float64(K)
		x = append(x, tau*0.8, tau, 0.8)
		for s := 0; s < 2; s++ {
			h := fc.DefaultDimensions.MarkerH - 0.006 - 0.004*rng.Float64()
			if s == 1 && k == K-1 {
				h += 0.05
			}
			x = append(x, 0.1*rng.Float64(), h, 0.01*rng.NormFloat64(), 0.05*rng.NormFloat64(), 0.02*rng.NormFloat64(), 0.05*rng.NormFloat64(), 0.1*rng.Float64())
			for j := 0; j < fc.NDoF; j++ {
				x = append(x, 0.02*rng.NormFloat64())
			}
		}
	}
	return x
}

func TestEvalShapesAndPhysics(t *testing.T) {
	m, err := New([]float64{0.27, 0.10, 0.03})
	if err != nil {
		t.Fatal(err)
	}
	if len(Spec.Params) != NParams || len(Spec.Conditions) != NConds || len(Spec.Outputs) != NOut || NParams != 430 {
		t.Fatalf("spec sizes %d %d %d", len(Spec.Params), len(Spec.Conditions), len(Spec.Outputs))
	}
	rng := rand.New(rand.NewPCG(14, 4))
	th := testTheta(rng)
	x := testRows(rng, 4)
	y := make([]float64, 4*NOut)
	if st := m.Eval(th, x, y); st != abi.OK {
		t.Fatal(st)
	}
	// Pressed in: a vertical force of hundreds of N; in the air: none.
	if fy := y[1]; !(fy > 100) {
		t.Fatalf("right foot pressed in: Fy = %g", fy)
	}
	if fy := y[3*NOut+NOutFoot+1]; fy != 0 {
		t.Fatalf("left foot in the air: Fy = %g", fy)
	}
	// A non-finite condition is an invalid row, not a crash.
	x[5] = math.NaN()
	if st := m.Eval(th, x, y); st != abi.Invalid {
		t.Fatalf("NaN condition: status %v", st)
	}
}

// The Jacobian against central differences of Eval over every parameter.
func TestJacobianAgainstFiniteDifferences(t *testing.T) {
	mi, _ := New([]float64{0.27, 0.10, 0.03})
	m := mi.(*Model)
	rng := rand.New(rand.NewPCG(14, 5))
	th := testTheta(rng)
	const K = 3
	x := testRows(rng, K)
	y := make([]float64, K*NOut)
	jac := make([]float64, K*NOut*NParams)
	if st := m.Jacobian(th, x, y, jac); st != abi.OK {
		t.Fatal(st)
	}
	yp, ym := make([]float64, len(y)), make([]float64, len(y))
	worst := 0.0
	for i := 0; i < NParams; i++ {
		h := 1e-6 * math.Max(1, math.Abs(th[i]))
		if i >= IdxDev {
			h = 1e-7
		}
		tp, tm := append([]float64(nil), th...), append([]float64(nil), th...)
		tp[i] += h
		tm[i] -= h
		m.Eval(tp, x, yp)
		m.Eval(tm, x, ym)
		for r := range y {
			fd := (yp[r] - ym[r]) / (2 * h)
			an := jac[r*NParams+i]
			// Scale: the output's size per unit parameter (forces of
			// hundreds of N per mm of deviation).
			scale := 1 + math.Abs(fd) + math.Abs(an)
			e := math.Abs(fd-an) / scale
			// Exact parts (k, c, y0, μ): tight; deviation parts are
			// themselves differences: looser.
			tol := 1e-5
			if i >= IdxDev {
				tol = 2e-3
			}
			if e > tol {
				t.Fatalf("θ %s, output %s (row %d): analytic %g, central difference %g", Spec.Params[i].Name, Spec.Outputs[r%NOut].Name, r/NOut, an, fd)
			}
			worst = math.Max(worst, e)
		}
	}
	t.Logf("worst relative disagreement %.2g", worst)
}

func BenchmarkEvalFrame(b *testing.B) {
	mi, _ := New([]float64{0.27, 0.10, 0.03})
	rng := rand.New(rand.NewPCG(1, 1))
	th := testTheta(rng)
	x := testRows(rng, 1)
	y := make([]float64, NOut)
	for i := 0; i < b.N; i++ {
		mi.Eval(th, x, y)
	}
}

func BenchmarkJacobianFrame(b *testing.B) {
	mi, _ := New([]float64{0.27, 0.10, 0.03})
	m := mi.(*Model)
	rng := rand.New(rand.NewPCG(1, 1))
	th := testTheta(rng)
	x := testRows(rng, 1)
	y := make([]float64, NOut)
	jac := make([]float64, NOut*NParams)
	for i := 0; i < b.N; i++ {
		m.Jacobian(th, x, y, jac)
	}
}
