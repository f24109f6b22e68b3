package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/knee"
	"github.com/kinfer/kinfer/host/dataset"
)

// The committed specimens (data, truth and studies) are what the generator
// writes, and every truth is physiological: each constrained ligament's
// maximal strain over the squat inside Eq. 8's band.
func TestCommittedSpecimensAreGenerated(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= Specimens; s++ {
		for _, f := range []string{"kinematics.csv", "truth.json", "study.toml"} {
			rel := filepath.Join("specimen"+string(rune('0'+s)), f)
			got, _ := os.ReadFile(filepath.Join(dir, rel))
			want, err := os.ReadFile(filepath.Join("..", rel))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("examples/knee-bpe/%s differs from the generator's output: go run ./examples/knee-bpe/gen examples/knee-bpe", rel)
			}
		}
	}
}

// minMargin is the least distance, as a fraction of the prior's range, of
// every committed truth from its prior's bounds (the README's "truth in
// 5–95 %" counts are only meaningful for truths a posterior band can cover
// from both sides).
const minMargin = 0.05

// Every committed truth lies strictly inside its prior, at least minMargin
// of the range from either bound, and is physiological (Eq. 8: each
// constrained ligament's maximal strain over the squat in [−2 %, 6 %]).
// The priors, the constrained outputs and the flexion angles are read from
// the committed study.toml and kinematics.csv with a TOML parser, not taken
// from the generator, so a generator whose repair clamps a truth onto a
// bound (as it once did) fails here.
func TestCommittedTruthsInsidePriors(t *testing.T) {
	for s := 1; s <= 3; s++ {
		dir := filepath.Join("..", fmt.Sprintf("specimen%d", s))
		var st struct {
			Prior      map[string]map[string][]float64 `toml:"prior"`
			Likelihood []struct {
				Use     string   `toml:"use"`
				Outputs []string `toml:"outputs"`
			} `toml:"likelihood"`
		}
		if _, err := toml.DecodeFile(filepath.Join(dir, "study.toml"), &st); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
		if err != nil {
			t.Fatal(err)
		}
		var truth map[string]float64
		if err := json.Unmarshal(b, &truth); err != nil {
			t.Fatal(err)
		}
		if len(truth) != len(st.Prior) || len(truth) != 50 {
			t.Fatalf("specimen %d: %d truths, %d priors; want 50 of each", s, len(truth), len(st.Prior))
		}
		for name, v := range truth {
			u, ok := st.Prior[name]["uniform"]
			if !ok || len(u) != 2 {
				t.Fatalf("specimen %d: %s has no uniform prior in study.toml", s, name)
			}
			lo, hi := u[0], u[1]
			m := minMargin * (hi - lo)
			if !(v >= lo+m && v <= hi-m) {
				t.Errorf("specimen %d: truth %s = %g not inside [%g, %g] with a margin of %g (%g %% of the range)", s, name, v, lo, hi, m, 100*minMargin)
			}
		}
		// Physiological: the knee model at the truth, along the committed
		// squat's flexion angles.
		kin, err := dataset.Read(filepath.Join(dir, "kinematics.csv"))
		if err != nil {
			t.Fatal(err)
		}
		fi := kin.Index("flexion_deg")
		x := make([]float64, len(kin.Rows))
		for r, row := range kin.Rows {
			x[r] = row[fi]
		}
		th := make([]float64, len(knee.Spec.Params))
		for i, p := range knee.Spec.Params {
			th[i] = truth[p.Name]
		}
		no := len(knee.Spec.Outputs)
		y := make([]float64, len(x)*no)
		if st := (knee.Model{}).Eval(th, x, y); st != abi.OK {
			t.Fatalf("specimen %d: the model fails at the truth (%v)", s, st)
		}
		var band []string
		for _, l := range st.Likelihood {
			if l.Use == "strainband" {
				band = append(band, l.Outputs...)
			}
		}
		if len(band) != 7 {
			t.Fatalf("specimen %d: %d strain-band outputs, want 7", s, len(band))
		}
		for _, o := range band {
			j := slices.IndexFunc(knee.Spec.Outputs, func(c abi.Column) bool { return c.Name == o })
			if j < 0 {
				t.Fatalf("no model output %s", o)
			}
			mx := math.Inf(-1)
			for r := range x {
				mx = math.Max(mx, y[r*no+j])
			}
			if !(mx >= -0.02 && mx <= 0.06) {
				t.Errorf("specimen %d: maximal %s %.4f outside Eq. 8's [−0.02, 0.06]", s, o, mx)
			}
		}
	}
}
