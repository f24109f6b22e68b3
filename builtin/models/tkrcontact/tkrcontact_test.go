package tkrcontact

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/contact/efound"
)

func defaults() []float64 {
	th := make([]float64, len(Spec.Params))
	for i, p := range Spec.Params {
		th[i] = p.Default
	}
	return th
}

func TestSpec(t *testing.T) {
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(Spec.Outputs) != NumOutputs || len(Spec.Conditions) != 6 {
		t.Fatalf("outputs %d conditions %d", len(Spec.Outputs), len(Spec.Conditions))
	}
}

// Eval writes exactly what efound gives for the same pose (degrees
// converted), medial first; a pose offset θ is the same as adding it to
// the row; rows are independent.
func TestEvalMatchesEfound(t *testing.T) {
	m, err := New([]float64{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	th := defaults()
	x := []float64{
		1, -0.1, 0.2, 0.1, 2, 30,
		0, 0.5, 0, 0, 0, 0, // out of contact
		-2, -0.05, -0.3, -0.2, -3, 10,
	}
	y := make([]float64, 3*NumOutputs)
	if st := m.Eval(th, x, y); st != abi.OK {
		t.Fatalf("status %v", st)
	}
	k := efound.DefaultKnee(1, false)
	for i := 0; i < 3; i++ {
		r := x[6*i:]
		l, err := k.Contact(efound.Pose{X: r[0], Y: r[1], Z: r[2], Alpha: r[3] * deg, Beta: r[4] * deg, Gamma: r[5] * deg})
		if err != nil {
			t.Fatal(err)
		}
		out := y[i*NumOutputs:]
		for s := 0; s < 2; s++ {
			o := out[s*10:]
			if o[0] != l[s].F[0] || o[1] != l[s].F[1] || o[2] != l[s].F[2] || o[3] != l[s].T[0] || o[5] != l[s].T[2] || o[8] != l[s].CoP[2] || o[9] != l[s].Area {
				t.Errorf("row %d side %d: %v vs %+v", i, s, o[:10], l[s])
			}
		}
		// row alone gives the same
		y1 := make([]float64, NumOutputs)
		m.Eval(th, x[6*i:6*i+6], y1)
		for j := range y1 {
			if y1[j] != out[j] {
				t.Fatalf("row %d evaluated alone differs at %d", i, j)
			}
		}
	}
	if y[NumOutputs+1] != 0 || y[NumOutputs+11] != 0 {
		t.Errorf("lifted row has force")
	}
	// offsets: θ offsets (1, −0.1, 0.2, 0.1°, 2°, 30°) on a zero row = row 0.
	th2 := defaults()
	copy(th2[3:], x[:6])
	y2 := make([]float64, NumOutputs)
	m.Eval(th2, make([]float64, 6), y2)
	for j := range y2 {
		if math.Abs(y2[j]-y[j]) > 1e-9*(1+math.Abs(y[j])) {
			t.Fatalf("offset vs row differs at %s: %g vs %g", Spec.Outputs[j].Name, y2[j], y[j])
		}
	}
	if y[1] <= 0 || y[11] <= 0 {
		t.Errorf("loaded row not in contact on both sides: %g %g", y[1], y[11])
	}
}

// Linear force scales with E (and is independent of nothing else at a
// fixed pose): doubling E doubles every force and torque.
func TestLinearInE(t *testing.T) {
	m, _ := New([]float64{0, 1})
	th := defaults()
	x := []float64{0.5, -0.1, 0.1, 0.2, 1, 20}
	a, b := make([]float64, NumOutputs), make([]float64, NumOutputs)
	m.Eval(th, x, a)
	th[0] *= 2
	m.Eval(th, x, b)
	for s := 0; s < 2; s++ {
		for j := 0; j < 6; j++ {
			i := s*10 + j
			if math.Abs(b[i]-2*a[i]) > 1e-9*(1+math.Abs(a[i])) {
				t.Errorf("%s: %g vs 2×%g", Spec.Outputs[i].Name, b[i], a[i])
			}
		}
	}
}

func TestStatuses(t *testing.T) {
	m, _ := New([]float64{1, 1})
	th := defaults()
	y := make([]float64, NumOutputs)
	if st := m.Eval(th, []float64{0, math.NaN(), 0, 0, 0, 0}, y); st != abi.Invalid {
		t.Errorf("NaN pose: %v", st)
	}
	th[2] = 0.5 // h = 0.5 mm, 0.6 mm penetration through a nonlinear layer
	if st := m.Eval(th, []float64{0, -0.6, 0, 0, 0, 0}, y); st != abi.Failed {
		t.Errorf("through the layer: %v", st)
	}
	th = defaults()
	th[1] = 0.5
	if st := m.Eval(th, []float64{0, -0.1, 0, 0, 0, 0}, y); st != abi.Invalid {
		t.Errorf("nu = 0.5: %v", st)
	}
	for _, s := range [][]float64{{2, 1}, {0, 0}, {0, 10}, {0}} {
		if _, err := New(s); err == nil {
			t.Errorf("settings %v accepted", s)
		}
	}
}
