package main

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/tmcmc"
)

// The overhead program runs TMCMC to the end on its Gaussian target: the
// evidence agrees with the closed form (the conformance Gaussian's, see
// run) within 4 of its standard errors, every proposal of a run is
// counted, and the target's time is a part of the total.
func TestRunSmall(t *testing.T) {
	for _, mode := range []int{tmcmc.Transform, tmcmc.Reject} {
		r, err := run(3, 500, 10, mode, tmcmc.AdaptSubstep)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.LogEvidence-r.ExactLogZ) > 4*r.LogEvidenceSE {
			t.Errorf("mode %d: log Z %.4f ± %.4f, exact %.4f", mode, r.LogEvidence, r.LogEvidenceSE, r.ExactLogZ)
		}
		if want := 500 * (1 + 10*r.Stages); r.ParticleSteps != want {
			t.Errorf("mode %d: %d particle-steps, want %d", mode, r.ParticleSteps, want)
		}
		if !(r.TargetSeconds > 0 && r.TargetSeconds < r.TotalSeconds) {
			t.Errorf("mode %d: target %v s of %v s", mode, r.TargetSeconds, r.TotalSeconds)
		}
	}
}
