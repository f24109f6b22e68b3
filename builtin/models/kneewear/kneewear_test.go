package kneewear

import (
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/wearsim"
)

// The model's outputs at the nominal weights are the simulator's wear
// with the same settings (EF contact, 2 mm cells), total = medial +
// lateral; a weight outside [0, 1] is Invalid; bad settings are refused.
func TestEval(t *testing.T) {
	m, err := New([]float64{1, 2, 300, 250, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, len(Spec.Params))
	for i := range theta {
		theta[i] = 0.5
	}
	y := make([]float64, 3)
	if st := m.Eval(theta, []float64{1}, y); st != abi.OK {
		t.Fatalf("status %v", st)
	}
	ef, err := wearsim.NewEF(efound.DefaultKnee(2, false))
	if err != nil {
		t.Fatal(err)
	}
	in, err := wearsim.ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := wearsim.Simulate(ef, wearsim.DefaultMachine, in, wearsim.Options{Steps: 250, Warmup: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if y[0] != r.Total() || y[1] != r.WearCoP[0] || y[2] != r.WearCoP[1] {
		t.Errorf("outputs %v, simulator %g %v", y, r.Total(), r.WearCoP)
	}
	theta[3] = 1.5
	if st := m.Eval(theta, []float64{1}, y); st != abi.Invalid {
		t.Errorf("weight 1.5: status %v", st)
	}
	for _, bad := range [][]float64{{2, 2, 300, 250, 0.25}, {0, 0.1, 300, 250, 0.25}, {0, 1, 10, 250, 0.25}, {0, 1, 300, 250.5, 0.25}, {0, 1, 300, 250, 0}, {0, 1, 300}} {
		if _, err := New(bad); err == nil {
			t.Errorf("settings %v accepted", bad)
		}
	}
	if err := Spec.Validate(); err != nil {
		t.Error(err)
	}
}
