package adam

import (
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// Progress counts the iterations of the least advanced start out of
// iterations, with the best −log target: half-way after half the steps,
// 100/100 and fraction 1 at the end.
func TestProgress(t *testing.T) {
	c := conformance.Conjugate2D()
	m := newMethod(t, 0.01, 100, 2)
	h := conformance.NewHost(c.Target, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	if s, f := m.Progress(); s != "iteration 0/100" || f != 0 {
		t.Errorf("after Init: %q %v", s, f)
	}
	for range 50 {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	s, f := m.Progress()
	if !strings.HasPrefix(s, "iteration 50/100, −log target ") || f != 0.5 {
		t.Errorf("after 50 batches: %q %v", s, f)
	}
	if _, err := h.Finish(m); err != nil {
		t.Fatal(err)
	}
	if s, f := m.Progress(); !strings.HasPrefix(s, "iteration 100/100") || f != 1 {
		t.Errorf("at the end: %q %v", s, f)
	}
}
