package tmcmc

import (
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// Progress follows the run: the prior population, then "stage j: q a → b"
// with the sub-step, then done with fraction 1 (the number of stages is
// not known in advance, so no fraction before).
func TestProgress(t *testing.T) {
	c := conformance.Conjugate2D()
	m := newMethod(t, 200, 2, Bartsoen)
	if s, f := m.Progress(); !strings.Contains(s, "prior population") || f >= 0 {
		t.Errorf("before Init: %q %v", s, f)
	}
	h := conformance.NewHost(c.Target, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	seen := false
	for i := 0; i < 6 && !m.Done(); i++ {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
		s, f := m.Progress()
		if strings.HasPrefix(s, "stage 1: q 0 → ") && strings.Contains(s, "sub-step") && strings.Contains(s, "β") && f < 0 {
			seen = true
		}
	}
	if !seen {
		t.Error("no \"stage 1: q 0 → …\" status in the first steps")
	}
	if _, err := h.Finish(m); err != nil {
		t.Fatal(err)
	}
	if s, f := m.Progress(); !strings.HasPrefix(s, "done after ") || f != 1 {
		t.Errorf("at the end: %q %v", s, f)
	}
}
