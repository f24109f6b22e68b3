package metropolis

import (
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// Progress is the step of every chain out of burn-in + samples·thin, the
// phase named, never decreasing, 1 at the end.
func TestProgress(t *testing.T) {
	c := conformance.StdNormal1D()
	m := newMethod(t, 2, 50, 50, 2)
	h := conformance.NewHost(c.Target, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	last, burn := 0.0, false
	for !m.Done() {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
		s, f := m.Progress()
		if f < last {
			t.Fatalf("fraction went back: %v after %v", f, last)
		}
		last = f
		burn = burn || strings.Contains(s, "(burn-in)")
	}
	if s, f := m.Progress(); s != "step 150/150 (sampling)" || f != 1 || !burn {
		t.Errorf("at the end: %q %v (burn-in seen: %v)", s, f, burn)
	}
}
