package twobar

import (
	"math"
	"testing"
)

// Named tolerances.
const (
	// tolEquilibrium: at α = 0 the HHT step enforces M q̈ + F + Bᵀλ = 0 at
	// the new time to the Newton tolerance (1e-10 relative), so the direct
	// residual of the simulated set vanishes relative to the forces.
	tolEquilibrium = 1e-7
	tolExact       = 1e-12
)

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// The released configuration: node 1 at the origin, node 5 at
// 2(Ls+Lb)·(sin π/6, −cos π/6), at rest; initially the springs are
// unstretched so the chain falls freely: q̈ of node 5 = (0, −g).
func TestInitialState(t *testing.T) {
	sim, err := Simulate(PSol, DefaultOptions(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := sim[0]
	L := 2 * (Ls + Lb)
	if math.Abs(s.Q[12]-L*0.5) > tolExact || math.Abs(s.Q[13]+L*math.Sqrt(3)/2) > tolExact {
		t.Errorf("node 5 at (%g, %g)", s.Q[12], s.Q[13])
	}
	if math.Abs(s.A[12]) > 1e-9 || math.Abs(s.A[13]+G) > 1e-9 {
		t.Errorf("node 5 initial acceleration (%g, %g), want (0, −g)", s.A[12], s.A[13])
	}
}

// With α = 0 the simulated set satisfies the equations of motion at every
// sample, so the direct residual (Eq. 11) of p_sol is zero there and that
// of p1 is not.
func TestDirectResidualOfSimulatedSet(t *testing.T) {
	o := Options{Step: DefaultStep, Alpha: 0}
	sim, err := Simulate(PSol, o, 1, SampleEvery)
	if err != nil {
		t.Fatal(err)
	}
	sys, _ := System(PSol)
	sys1, _ := System(P1)
	e := NewEval()
	r := make([]float64, NFree)
	for _, k := range []int{1, 50, 69, 100} {
		s := sim[k]
		if err := DirectResidual(sys, e, s.Q, s.V, s.A, r); err != nil {
			t.Fatal(err)
		}
		// force scale: the largest inertial or internal force
		scale := maxAbs(e.F)
		if maxAbs(r) > tolEquilibrium*scale {
			t.Errorf("t = %.2f: |r| = %.3g, forces %.3g", s.T, maxAbs(r), scale)
		}
		if err := DirectResidual(sys1, e, s.Q, s.V, s.A, r); err != nil {
			t.Fatal(err)
		}
		if maxAbs(r) < 1e-4*scale {
			t.Errorf("t = %.2f: p1 fits as well as p_sol (|r| = %.3g)", s.T, maxAbs(r))
		}
	}
}

// Central differences are exact for a quadratic trajectory.
func TestMeasuredExactOnQuadratic(t *testing.T) {
	var sim []State
	for k := 0; k < 5; k++ {
		tt := 0.01 * float64(k)
		st := State{T: tt, Q: make([]float64, NDof), V: make([]float64, NDof), A: make([]float64, NDof)}
		for i := range st.Q {
			st.Q[i] = float64(i) + 2*tt - 3*tt*tt
		}
		sim = append(sim, st)
	}
	m := Measured(sim)
	if len(m) != 3 {
		t.Fatalf("%d measured rows", len(m))
	}
	for _, st := range m {
		for i := range st.V {
			if math.Abs(st.V[i]-(2-6*st.T)) > 1e-9 || math.Abs(st.A[i]+6) > 1e-7 {
				t.Fatalf("t %g: v %g a %g", st.T, st.V[i], st.A[i])
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	if _, err := System([NParam]float64{-1, 0.5, 400, 0.5}); err == nil {
		t.Error("negative stiffness accepted")
	}
	if _, err := Simulate(PSol, Options{Step: 1e-3, Alpha: 0.5}, 1, 1); err == nil {
		t.Error("α = 0.5 accepted")
	}
}
