package tmcmc

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// HeldPoints is the population with its told values once the prior
// population is in (a resume evaluates them again, audit 16): each point
// evaluates, on the same target, to the log prior and log likelihood it
// holds; before the prior population there is none.
func TestHeldPointsArePopulation(t *testing.T) {
	c := conformance.Conjugate2D()
	m := newMethod(t, 50, 2, Bartsoen)
	h := conformance.NewHost(c.Target, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	if pts := m.HeldPoints(); len(pts) != 0 {
		t.Fatalf("%d held points before the prior population", len(pts))
	}
	for i := 0; i < 3 && !m.Done(); i++ {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	pts := m.HeldPoints()
	if len(pts) != 50 {
		t.Fatalf("%d held points, want the 50 chains", len(pts))
	}
	for i, p := range pts {
		r, err := h.Eval(p.Theta, abi.WantLogTarget)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != abi.OK || math.Abs(r.LogPrior-p.LogPrior) > 1e-12 || math.Abs(r.LogLik-p.LogLik) > 1e-12 {
			t.Fatalf("point %d holds %v, %v, %v; evaluates to %v, %v", i, p.Status, p.LogPrior, p.LogLik, r.LogPrior, r.LogLik)
		}
	}
}
