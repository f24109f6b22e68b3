package main

import "testing"

// The test set was generated from the ground truth (examples/arm/gen): at
// the truth the predicted accelerations match it to rounding of the CSV
// (L_FD < 1e-10, every RMS error < 1e-4 of the joint's RMS); at run 1's
// initial guess they do not (L_FD > 1).
func TestTestSetErrors(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	lfd, rms, rmse, err := TestSetErrors(root, truth)
	if err != nil {
		t.Fatal(err)
	}
	for j := range rms {
		if !(rms[j] > 1) || !(rmse[j] < 1e-4*rms[j]) {
			t.Errorf("joint %d at the truth: RMS %g, RMS error %g", j, rms[j], rmse[j])
		}
	}
	if !(lfd < 1e-10) {
		t.Errorf("L_FD at the truth %g", lfd)
	}
	if lfd, _, _, err := TestSetErrors(root, InitialGuess(1, 1)); err != nil || !(lfd > 1) {
		t.Errorf("L_FD at run 1's guess %g (%v)", lfd, err)
	}
}
