package metropolis

import (
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// Progress counts the chains' steps out of burn_in + samples·thin, says
// the phase, and gives the kept steps' acceptance once there are some:
// 0 before the chains start, 10/30 in burn-in, 30/30 and fraction 1 at
// the end.
func TestProgress(t *testing.T) {
	c := conformance.StdNormal1D()
	m := newMethod(t, 2, 20, 10, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	if s, f := m.Progress(); s != "drawing starting points" || f != 0 {
		t.Errorf("after Init: %q %v", s, f)
	}
	h := conformance.NewHost(c.Target, 1)
	for !strings.HasPrefix(first(m.Progress()), "step 5/30") {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := m.Progress(); s != "step 5/30 (burn-in)" {
		t.Errorf("in the burn-in: %q", s)
	}
	for !strings.HasPrefix(first(m.Progress()), "step 10/30") {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	if s, f := m.Progress(); s != "step 10/30 (sampling)" || f != 10.0/30 {
		t.Errorf("after the burn-in: %q %v", s, f)
	}
	if _, err := h.Finish(m); err != nil {
		t.Fatal(err)
	}
	s, f := m.Progress()
	if !strings.HasPrefix(s, "step 30/30 (sampling), acceptance 0.") || f != 1 {
		t.Errorf("at the end: %q %v", s, f)
	}
}

func first(s string, _ float64) string { return s }
