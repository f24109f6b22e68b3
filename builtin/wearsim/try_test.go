package wearsim

import (
	"testing"
	"time"

	"github.com/kinfer/kinfer/builtin/contact/efound"
)

func TestTry(t *testing.T) {
	ef, _ := NewEF(efound.DefaultKnee(1, false))
	in, err := ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	r, err := Simulate(ef, DefaultMachine, in, Options{History: true, Elements: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v wear %v elem %v evals %d jac %d steps %d", time.Since(t0), r.WearCoP, r.WearElem, r.Evals, r.Jacobians, r.Steps)
	var lo, hi [6]float64
	for _, f := range r.History {
		v := [6]float64{f.Pose.X, f.Pose.Y, f.Pose.Z, f.Pose.Alpha / deg, f.Pose.Beta / deg, f.Pose.Gamma / deg}
		for i := range v {
			lo[i] = min(lo[i], v[i])
			hi[i] = max(hi[i], v[i])
		}
	}
	t.Logf("lo %.3g hi %.3g", lo, hi)
	for i := 0; i < len(r.History); i += 50 {
		f := r.History[i]
		t.Logf("t %.2f x %.3f y %.4f z %.3f a %.3f b %.3f g %.1f  Fm %.0f Fl %.0f slip %.0f %.0f", f.T, f.Pose.X, f.Pose.Y, f.Pose.Z, f.Pose.Alpha/deg, f.Pose.Beta/deg, f.Pose.Gamma/deg, f.Loads[0].F[1], f.Loads[1].F[1], f.Slip[0], f.Slip[1])
	}
}
