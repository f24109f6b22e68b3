// Command gen writes the synthetic specimens of the knee Bayesian parameter
// estimation (issue 3; Bartsoen et al. 2023, Sections 2.3–2.4): for each
// specimen, a parameter vector θ drawn inside Table 2, the reduced knee
// model (builtin/models/knee) evaluated along the squat (20°–120° in 5°
// steps), Gaussian measurement noise with the paper's σ (0.5 mm/° for ML,
// AP, IE; 1.0 for PD, VV), written as specimenN/kinematics.csv with
// specimenN/truth.json.
//
// A specimen must be physiological as the paper's constraint (Eq. 8) asks:
// the maximal strain of every ligament over the squat within [−2 %, 6 %].
// Uniform draws rarely are (about 1 in 300 in this model), so after the
// draw the reference strains are shifted, a few times, so that each
// ligament's maximal strain lands on a target drawn in [−1 %, 5 %] (a
// shift of ε_r shifts the strain almost one to one, Eq. 2); a draw whose
// repair would move a reference strain to within 5 % of its prior's range
// from a bound (Margin) is discarded and drawn again, so every truth lies
// strictly inside its prior. The posterior
// capsule is left out of the constraint: without wrapping it is slack in
// this model for every θ of Table 2 (see builtin/models/knee).
//
//	go run ./examples/knee-bpe/gen examples/knee-bpe
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/knee"
	"github.com/kinfer/kinfer/host/dataset"
)

const (
	Specimens = 3
	Seed      = 2023
	// Strain band of Eq. 8 (fractions) and the targets inside it.
	bandLo, bandHi     = -0.02, 0.06
	targetLo, targetHi = -0.01, 0.05
	// Margin is the least distance of every truth from its prior's
	// bounds, as a fraction of the prior's range: the draw takes the inner
	// 80 %, the reference strains' repair rejects a value closer than this.
	Margin = 0.05
)

// Sigma is the measurement noise sd per kinematic output (Section 2.4).
var Sigma = map[string]float64{"ML_mm": 0.5, "AP_mm": 0.5, "PD_mm": 1.0, "VV_deg": 1.0, "IE_deg": 0.5}

// Kinematics are the observed outputs, in model order.
var Kinematics = []string{"ML_mm", "AP_mm", "PD_mm", "VV_deg", "IE_deg"}

// Constrained are the strains held in the band, with the bundles whose
// reference strain moves them.
var Constrained = []struct {
	Output  string
	Bundles []string
}{
	{"strain_deepMCL", []string{"deepMCL"}}, {"strain_supMCL", []string{"supMCL"}},
	{"strain_LCL", []string{"LCL"}}, {"strain_ALL", []string{"ALL"}}, {"strain_PFL", []string{"PFL"}},
	{"strain_ACL", []string{"ACL0", "ACL1"}}, {"strain_PCL", []string{"PCL0", "PCL1"}},
}

// Angles are the squat's flexion angles.
func Angles() []float64 {
	var x []float64
	for a := 20.0; a <= 120; a += 5 {
		x = append(x, a)
	}
	return x
}

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func outIndex(name string) int {
	for i, o := range knee.Spec.Outputs {
		if o.Name == name {
			return i
		}
	}
	panic(name)
}

// maxStrains evaluates θ and returns the maximal strain of each constrained
// ligament over the squat, and the outputs.
func maxStrains(m abi.Model, th, x []float64) ([]float64, []float64, bool) {
	no := len(knee.Spec.Outputs)
	y := make([]float64, len(x)*no)
	if m.Eval(th, x, y) != abi.OK {
		return nil, nil, false
	}
	mx := make([]float64, len(Constrained))
	for l, c := range Constrained {
		j := outIndex(c.Output)
		mx[l] = math.Inf(-1)
		for r := range x {
			mx[l] = math.Max(mx[l], y[r*no+j])
		}
	}
	return mx, y, true
}

// draw returns a physiological θ (see the package comment) and its outputs.
func draw(m abi.Model, rng *rand.Rand, x []float64) ([]float64, []float64) {
	spec := knee.Spec
	for {
		th := make([]float64, len(spec.Params))
		for i, p := range spec.Params {
			// Inner 80 % of each range, so the truth is not on a bound.
			th[i] = p.Lower + (p.Upper-p.Lower)*(0.1+0.8*rng.Float64())
		}
		target := make([]float64, len(Constrained))
		for l := range target {
			target[l] = targetLo + (targetHi-targetLo)*rng.Float64()
		}
		for iter := 0; iter < 12; iter++ {
			mx, y, ok := maxStrains(m, th, x)
			if !ok {
				break
			}
			inBand := true
			for _, v := range mx {
				inBand = inBand && v >= bandLo && v <= bandHi
			}
			if inBand {
				return th, y
			}
			if !repair(th, mx, target) {
				break // a repaired reference strain left its prior's inner box: draw again
			}
		}
	}
}

// repair shifts the reference strains of the constrained ligaments so that
// their maximal strains mx move to target (Eq. 2: one to one, nearly). It
// reports false, leaving th partly shifted, when a shifted ε_r would fall
// within Margin of its prior's range from a bound: such a draw is thrown
// away rather than clamped, so that no truth lies on (or next to) a bound,
// where a posterior band could never cover it from both sides.
func repair(th, mx, target []float64) bool {
	spec := knee.Spec
	for l, c := range Constrained {
		for _, b := range c.Bundles {
			i := spec.ParamIndex("epsr_" + b)
			p := spec.Params[i]
			v := th[i] + target[l] - mx[l]
			m := Margin * (p.Upper - p.Lower)
			if !(v > p.Lower+m && v < p.Upper-m) {
				return false
			}
			th[i] = v
		}
	}
	return true
}

func write(dir string) error {
	m := knee.Model{}
	x := Angles()
	no := len(knee.Spec.Outputs)
	rng := rand.New(rand.NewPCG(Seed, 7))
	for s := 1; s <= Specimens; s++ {
		th, y := draw(m, rng, x)
		cols := append([]string{"flexion_deg"}, Kinematics...)
		rows := make([][]float64, len(x))
		for r, a := range x {
			rows[r] = []float64{a}
			for _, k := range Kinematics {
				v := y[r*no+outIndex(k)] + Sigma[k]*rng.NormFloat64()
				rows[r] = append(rows[r], math.Round(v*1e4)/1e4) // 0.1 µm / 1e-4°: far below σ
			}
		}
		sd := filepath.Join(dir, fmt.Sprintf("specimen%d", s))
		if err := os.MkdirAll(sd, 0o755); err != nil {
			return err
		}
		if err := dataset.WriteFile(filepath.Join(sd, "kinematics.csv"), cols, rows); err != nil {
			return err
		}
		truth := map[string]float64{}
		for i, p := range knee.Spec.Params {
			truth[p.Name] = th[i]
		}
		b, _ := json.MarshalIndent(truth, "", "  ")
		if err := os.WriteFile(filepath.Join(sd, "truth.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
		for _, st := range studies(s) {
			if err := os.WriteFile(filepath.Join(sd, st.file), []byte(st.text), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// studies are the study files of specimen s: a CI-sized TMCMC run
// (study.toml) and, for specimen 1, the paper's full size (study-full.toml:
// 10 000 chains, N_a = 50).
func studies(s int) []struct{ file, text string } {
	out := []struct{ file, text string }{{"study.toml", study(s, "ci", 1000, 25)}}
	if s == 1 {
		out = append(out, struct{ file, text string }{"study-full.toml", study(s, "full", 10000, 50)})
	}
	return out
}

func study(s int, size string, chains, substeps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Knee ligament Bayesian parameter estimation, synthetic specimen %d
# (Bartsoen et al. 2023; issue 3). Written by examples/knee-bpe/gen: edit
# the generator, not this file. Size: %s (%d chains, %d sub-steps).
name = "knee-specimen%d-%s"
seed = %d

[model]
use = "knee"

[[data]]
name = "squat"
file = "kinematics.csv"

[[likelihood]]                 # Eq. 7 on the five secondary kinematics
use = "gaussian"
data = "squat"
sigma = { ML_mm = 0.5, AP_mm = 0.5, PD_mm = 1.0, VV_deg = 1.0, IE_deg = 0.5 }

[[likelihood]]                 # Eq. 8: maximal strain over the squat in [-2 %%, 6 %%]
use = "strainband"
data = "squat"
outputs = [`, s, size, chains, substeps, s, size, s)
	for i, c := range Constrained {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", c.Output)
	}
	b.WriteString("]\n")
	b.WriteString("\n[prior]                        # uniform over Table 2\n")
	for _, p := range knee.Spec.Params {
		fmt.Fprintf(&b, "%-13s = { uniform = [%g, %g] }\n", p.Name, p.Lower, p.Upper)
	}
	fmt.Fprintf(&b, `
[method]
use = "tmcmc"
variant = "bartsoen"
chains = %d
substeps = %d
`, chains, substeps)
	return b.String()
}
