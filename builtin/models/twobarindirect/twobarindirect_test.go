package twobarindirect

import (
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
)

func TestSpec(t *testing.T) {
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]float64{{0, -0.05}, {1e-3, 0.1}, {1e-3}} {
		if _, err := New(bad); err == nil {
			t.Errorf("settings %v accepted", bad)
		}
	}
}

// The model's outputs at t are the simulation's samples, rows in any order.
func TestMatchesSimulation(t *testing.T) {
	sim, err := twobar.Simulate(twobar.PSol, twobar.DefaultOptions(), 0.7, twobar.SampleEvery)
	if err != nil {
		t.Fatal(err)
	}
	mi, _ := New([]float64{twobar.DefaultStep, twobar.DefaultAlpha})
	x := []float64{0.69, 0.1, 0.69, 0}
	y := make([]float64, len(x)*no)
	th := twobar.PSol
	if st := mi.Eval(th[:], x, y); st != abi.OK {
		t.Fatal(st)
	}
	for k, tt := range x {
		s := sim[int(tt*100+0.5)]
		want := append(append(append([]float64(nil), s.Q...), s.V...), s.A...)
		for i, w := range want {
			if y[k*no+i] != w {
				t.Fatalf("row %d (t = %g) output %d: %g, simulation %g", k, tt, i, y[k*no+i], w)
			}
		}
	}
	if st := mi.Eval(th[:], []float64{0.0005}, make([]float64, no)); st != abi.Invalid {
		t.Errorf("t off the step grid: %v", st)
	}
	if st := mi.Eval(th[:], []float64{-1}, make([]float64, no)); st != abi.Invalid {
		t.Errorf("negative t: %v", st)
	}
}
