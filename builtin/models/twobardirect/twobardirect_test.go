package twobardirect

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
)

const tolJac = 1e-6 // central differences of an affine function: rounding only

func rows(t *testing.T) []float64 {
	sim, err := twobar.Simulate(twobar.PSol, twobar.DefaultOptions(), 1, twobar.SampleEvery)
	if err != nil {
		t.Fatal(err)
	}
	var x []float64
	for _, k := range []int{20, 69} {
		s := sim[k]
		x = append(append(append(x, s.Q...), s.V...), s.A...)
	}
	return x
}

func TestSpec(t *testing.T) {
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(Spec.Conditions) != 45 || len(Spec.Outputs) != 12 {
		t.Fatalf("%d conditions, %d outputs", len(Spec.Conditions), len(Spec.Outputs))
	}
	if _, err := New([]float64{1}); err == nil {
		t.Error("a setting accepted")
	}
}

func TestJacobianFD(t *testing.T) {
	x := rows(t)
	m := Model{}
	th := []float64{650, 0.45, 420, 0.55}
	y := make([]float64, 24)
	jac := make([]float64, 24*4)
	if st := m.Jacobian(th, x, y, jac); st != abi.OK {
		t.Fatal(st)
	}
	for j := 0; j < 4; j++ {
		hh := 1e-4 * th[j]
		tp := append([]float64(nil), th...)
		tm := append([]float64(nil), th...)
		tp[j] += hh
		tm[j] -= hh
		yp, ym := make([]float64, 24), make([]float64, 24)
		m.Eval(tp, x, yp)
		m.Eval(tm, x, ym)
		for i := 0; i < 24; i++ {
			fd := (yp[i] - ym[i]) / (2 * hh)
			if math.Abs(fd-jac[i*4+j]) > tolJac*(1+math.Abs(fd)) {
				t.Errorf("J[%d][%d] = %g, FD %g", i, j, jac[i*4+j], fd)
			}
		}
	}
}

// On the simulated set the residual of p_sol is small (the HHT data satisfy
// the α-weighted equations, not Eq. 1 at t exactly) and much smaller than
// that of p1.
func TestResidualSmallAtSolution(t *testing.T) {
	x := rows(t)
	m := Model{}
	y0, y1 := make([]float64, 24), make([]float64, 24)
	th := twobar.PSol
	m.Eval(th[:], x, y0)
	p1 := twobar.P1
	m.Eval(p1[:], x, y1)
	n0, n1 := 0.0, 0.0
	for i := range y0 {
		n0 += y0[i] * y0[i]
		n1 += y1[i] * y1[i]
	}
	t.Logf("‖r(p_sol)‖ = %.3g, ‖r(p1)‖ = %.3g", math.Sqrt(n0), math.Sqrt(n1))
	if !(n0 < 0.01*n1) {
		t.Errorf("‖r(p_sol)‖² = %g not ≪ ‖r(p1)‖² = %g", n0, n1)
	}
	if st := m.Eval(th[:], x[:10], make([]float64, 12)); st != abi.Invalid {
		t.Errorf("short row: %v", st)
	}
	bad := append([]float64(nil), x...)
	bad[3] = math.NaN()
	if st := m.Eval(th[:], bad, y0); st != abi.Invalid {
		t.Errorf("NaN condition: %v", st)
	}
}
