package wearsim

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/builtin/contact/efound"
)

// A CI-sized Table 1 (Lin 2010; full size: examples/wear-sim/table1): a
// surrogate from 300 Hammersley points on 1 mm cells, and the nominal and
// "All" extreme inputs simulated with it and with the EF model. Bounds:
// wear within 1.5 % (the paper's), pose RMSE below 0.2 mm and 0.6° (the
// paper's averages). Measured at this size (examples/wear-sim/results/table1-n300-cell1.txt):
// ≤ 0.06 %, ≤ 0.13 mm, ≤ 0.04°; with 120 points on 2 mm cells the
// surrogate drifts 2 mm in z and is 68 % off.
func TestTable1Small(t *testing.T) {
	if testing.Short() {
		t.Skip("surrogate construction: tens of seconds")
	}
	k := efound.DefaultKnee(1, false)
	sur, _, err := BuildSurrogate(k, 300, WearBox, WearMinSide, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := NewEF(k)
	if err != nil {
		t.Fatal(err)
	}
	iso, err := ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	all := func(v float64) Weights {
		return Weights{{v, v}, {v, v}, {v, v}, {v, v}}
	}
	for _, c := range []struct {
		name string
		w    Weights
	}{{"nominal", Nominal}, {"all max", all(1)}, {"all min", all(0)}} {
		in, err := Vary(iso, DefaultFamilies, c.w)
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Steps: 250, History: true}
		re, err := Simulate(ef, DefaultMachine, in, opt)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := Simulate(sur, DefaultMachine, in, opt)
		if err != nil {
			t.Fatal(err)
		}
		var se [5]float64
		for i := range re.History {
			a, b := re.History[i].Pose, rs.History[i].Pose
			for j, d := range [5]float64{a.X - b.X, a.Y - b.Y, a.Z - b.Z, (a.Alpha - b.Alpha) / deg, (a.Beta - b.Beta) / deg} {
				se[j] += d * d
			}
		}
		var tr, rot float64
		for j := range se {
			v := math.Sqrt(se[j] / float64(len(re.History)))
			if j < 3 {
				tr = math.Max(tr, v)
			} else {
				rot = math.Max(rot, v)
			}
		}
		diff := 100 * (rs.Total() - re.Total()) / re.Total()
		t.Logf("%s: EF %.2f mm³, surrogate %.2f (%.2f %%); pose RMSE %.3f mm / %.3f°", c.name, re.Total(), rs.Total(), diff, tr, rot)
		if math.Abs(diff) > 1.5 || tr > 0.2 || rot > 0.6 {
			t.Errorf("%s: wear difference %.2f %%, pose RMSE %.3f mm / %.3f°", c.name, diff, tr, rot)
		}
	}
}
