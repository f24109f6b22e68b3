// Command compare sets the posterior of a TMCMC run on the knee surrogate
// beside the posterior of the same study on the knee model itself
// (examples/knee-surrogate, issue 15), and measures the surrogate where the
// posterior lives.
//
//	go run ./examples/knee-surrogate/compare -knee out/s1-knee -surrogate out/s1-nn \
//	    -nn examples/knee-surrogate/knee-nn.json -data examples/knee-bpe/specimen1/kinematics.csv \
//	    -truth examples/knee-bpe/specimen1/truth.json
//
// Measures, per parameter θ_j (summary.json's posterior mean and sd):
//   - z_j = |mean_nn − mean_knee| / sd_knee, the shift of the surrogate's
//     posterior in units of the model posterior's spread;
//   - r_j = sd_nn / sd_knee, the ratio of spreads.
//
// The thresholds are the Monte Carlo error of the reference itself: with
// -baseline, a second run of the knee study with another seed, the same
// measures between the two knee runs give z_seed and r_seed, and the
// posteriors agree when median z ≤ 1.5 · median z_seed, max z ≤ 1.5 ·
// max z_seed and every r_j lies in [min r_seed / 1.5, 1.5 · max r_seed]:
// the surrogate moves the posterior by no more than half as much again as
// re-running TMCMC on the model with another seed does. Without -baseline
// the fixed thresholds median z ≤ 0.5, max z ≤ 1.5, r in [0.5, 2] apply
// (too strict for 1 000 chains: two seeds of the knee study differ by more).
//
// The truth check counts the parameters whose truth lies in the central
// 90 % band (p05–p95) of each posterior. At -n posterior samples of the
// surrogate run, spread evenly over samples.csv, both the knee model and
// the surrogate are evaluated at the data's flexion angles: the MAE
// between them per output is the surrogate's error where the posterior
// lives (kinematics in mm/°, strains in %), and the MAE of the knee
// model's kinematics against the data is the fit the surrogate posterior
// really achieves.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/knee"
	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
	"github.com/kinfer/kinfer/host/dataset"
)

// Thresholds of agreement without a baseline, and the factor on the
// baseline's measures (see the package comment).
const (
	fixedMedianZ = 0.5
	fixedMaxZ    = 1.5
	fixedMinR    = 0.5
	fixedMaxR    = 2.0
	slack        = 1.5
)

type thresholds struct{ medianZ, maxZ, minR, maxR float64 }

type param struct {
	Name string  `json:"name"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	P05  float64 `json:"p05"`
	P95  float64 `json:"p95"`
}

type summary struct {
	Evaluations int     `json:"evaluations"`
	Wall        float64 `json:"wall_seconds"`
	EvalsPerSec float64 `json:"evaluations_per_second"`
	Params      []param `json:"params"`
}

func readSummary(dir string) summary {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		log.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		log.Fatalf("%s: %v", dir, err)
	}
	return s
}

// Result is what -json writes.
type Result struct {
	Params          []ParamResult      `json:"params"`
	MedianZ         float64            `json:"median_z"`
	MaxZ            float64            `json:"max_z"`
	MinR            float64            `json:"min_sd_ratio"`
	MaxR            float64            `json:"max_sd_ratio"`
	Agree           bool               `json:"agree"`
	Thresholds      map[string]float64 `json:"thresholds"`
	Baseline        *Result            `json:"baseline,omitempty"`
	TruthInsideKnee int                `json:"truth_inside_knee"`
	TruthInsideNN   int                `json:"truth_inside_surrogate"`
	SurrogateMAE    map[string]float64 `json:"surrogate_vs_knee_mae_at_posterior"`
	KneeFitMAE      map[string]float64 `json:"knee_vs_data_mae_at_surrogate_posterior"`
}

// ParamResult is one parameter's comparison.
type ParamResult struct {
	Name      string  `json:"name"`
	Z         float64 `json:"z"`
	R         float64 `json:"sd_ratio"`
	TruthKnee bool    `json:"truth_in_knee_band"`
	TruthNN   bool    `json:"truth_in_surrogate_band"`
}

func main() {
	kdir := flag.String("knee", "", "run directory of the study on the knee model")
	sdir := flag.String("surrogate", "", "run directory of the same study on the surrogate")
	nnFile := flag.String("nn", "", "the surrogate file (for the errors at the posterior)")
	data := flag.String("data", "", "the study's data CSV (flexion_deg and the kinematics)")
	truth := flag.String("truth", "", "truth.json of the specimen (optional)")
	base := flag.String("baseline", "", "a second run of the knee study with another seed: its distance from -knee sets the thresholds")
	n := flag.Int("n", 200, "posterior samples of the surrogate run evaluated on both models")
	out := flag.String("json", "", "also write the result as JSON to this file")
	flag.Parse()
	if *kdir == "" || *sdir == "" {
		flag.Usage()
		os.Exit(2)
	}
	th := thresholds{fixedMedianZ, fixedMaxZ, fixedMinR, fixedMaxR}
	var baseline *Result
	if *base != "" {
		fmt.Println("== baseline: the knee model, seed of -knee against seed of -baseline")
		baseline = compare(readSummary(*kdir), readSummary(*base), *truth, th, os.Stdout)
		th = thresholds{slack * baseline.MedianZ, slack * baseline.MaxZ, baseline.MinR / slack, slack * baseline.MaxR}
		fmt.Println("\n== the surrogate against the knee model")
	}
	res := compare(readSummary(*kdir), readSummary(*sdir), *truth, th, os.Stdout)
	res.Baseline = baseline
	if *nnFile != "" && *data != "" {
		res.SurrogateMAE, res.KneeFitMAE = atPosterior(*sdir, *nnFile, *data, *n, os.Stdout)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func compare(k, s summary, truthPath string, th thresholds, w io.Writer) *Result {
	var tr map[string]float64
	if truthPath != "" {
		b, err := os.ReadFile(truthPath)
		if err != nil {
			log.Fatal(err)
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			log.Fatal(err)
		}
	}
	sp := map[string]param{}
	for _, p := range s.Params {
		sp[p.Name] = p
	}
	res := &Result{MinR: math.Inf(1)}
	var zs []float64
	fmt.Fprintf(w, "%-14s %12s %12s %12s %12s %7s %6s %s\n", "parameter", "mean knee", "sd knee", "mean nn", "sd nn", "z", "r", "truth in band (knee/nn)")
	for _, p := range k.Params {
		q, ok := sp[p.Name]
		if !ok {
			log.Fatalf("parameter %s missing from the surrogate run", p.Name)
		}
		pr := ParamResult{Name: p.Name, Z: math.Abs(q.Mean-p.Mean) / p.SD, R: q.SD / p.SD}
		band := ""
		if t, ok := tr[p.Name]; ok {
			pr.TruthKnee = p.P05 <= t && t <= p.P95
			pr.TruthNN = q.P05 <= t && t <= q.P95
			if pr.TruthKnee {
				res.TruthInsideKnee++
			}
			if pr.TruthNN {
				res.TruthInsideNN++
			}
			band = fmt.Sprintf("%v/%v", pr.TruthKnee, pr.TruthNN)
		}
		fmt.Fprintf(w, "%-14s %12.5g %12.4g %12.5g %12.4g %7.2f %6.2f %s\n", p.Name, p.Mean, p.SD, q.Mean, q.SD, pr.Z, pr.R, band)
		zs = append(zs, pr.Z)
		res.MaxZ = math.Max(res.MaxZ, pr.Z)
		res.MinR, res.MaxR = math.Min(res.MinR, pr.R), math.Max(res.MaxR, pr.R)
		res.Params = append(res.Params, pr)
	}
	sort.Float64s(zs)
	res.MedianZ = zs[len(zs)/2]
	if len(zs)%2 == 0 {
		res.MedianZ = 0.5 * (zs[len(zs)/2-1] + zs[len(zs)/2])
	}
	res.Agree = res.MedianZ <= th.medianZ && res.MaxZ <= th.maxZ && res.MinR >= th.minR && res.MaxR <= th.maxR
	res.Thresholds = map[string]float64{"median_z": th.medianZ, "max_z": th.maxZ, "min_sd_ratio": th.minR, "max_sd_ratio": th.maxR}
	fmt.Fprintf(w, "\nz = |Δmean|/sd_knee: median %.2f (threshold %.2f), max %.2f (threshold %.2f); sd ratio in [%.2f, %.2f] (threshold [%.2f, %.2f]) → agree: %v\n",
		res.MedianZ, th.medianZ, res.MaxZ, th.maxZ, res.MinR, res.MaxR, th.minR, th.maxR, res.Agree)
	if tr != nil {
		fmt.Fprintf(w, "truth inside the 5–95 %% band: knee %d of %d, surrogate %d of %d\n", res.TruthInsideKnee, len(k.Params), res.TruthInsideNN, len(k.Params))
	}
	fmt.Fprintf(w, "knee run: %d evaluations in %.1f s (%.0f/s); surrogate run: %d evaluations in %.1f s (%.0f/s)\n",
		k.Evaluations, k.Wall, k.EvalsPerSec, s.Evaluations, s.Wall, s.EvalsPerSec)
	return res
}

// atPosterior evaluates the knee model and the surrogate at n samples of
// the surrogate run's posterior.
func atPosterior(sdir, nnFile, dataPath string, n int, w io.Writer) (map[string]float64, map[string]float64) {
	smp, err := dataset.Read(filepath.Join(sdir, "samples.csv"))
	if err != nil {
		log.Fatal(err)
	}
	dat, err := dataset.Read(dataPath)
	if err != nil {
		log.Fatal(err)
	}
	e, prov, err := nn.Load(nnFile)
	if err != nil {
		log.Fatal(err)
	}
	sm, err := surrogate.New(e, prov, []float64{0, 0})
	if err != nil {
		log.Fatal(err)
	}
	ks := knee.Spec
	// θ in the knee's parameter order from the samples' columns.
	col := make([]int, len(ks.Params))
	for i, p := range ks.Params {
		if col[i] = smp.Index(p.Name); col[i] < 0 {
			log.Fatalf("samples.csv has no column %s", p.Name)
		}
	}
	fx := dat.Index("flexion_deg")
	if fx < 0 {
		log.Fatal("the data has no flexion_deg column")
	}
	x := make([]float64, len(dat.Rows))
	for r, row := range dat.Rows {
		x[r] = row[fx]
	}
	K, m := len(x), len(ks.Outputs)
	if sm.Spec().Outputs[0].Name != ks.Outputs[0].Name || len(sm.Spec().Params) != len(ks.Params) {
		log.Fatal("the surrogate's columns are not the knee's")
	}
	yk, ys := make([]float64, K*m), make([]float64, K*m)
	sum, fit := make([]float64, m), make([]float64, 5)
	used, failed := 0, 0
	step := max(1, len(smp.Rows)/n)
	for i := 0; i < len(smp.Rows) && used < n; i += step {
		th := make([]float64, len(col))
		for j, c := range col {
			th[j] = smp.Rows[i][c]
		}
		if st := (knee.Model{}).Eval(th, x, yk); st != abi.OK {
			failed++
			continue
		}
		if st := sm.Eval(th, x, ys); st != abi.OK {
			log.Fatalf("surrogate: %v", st)
		}
		for r := 0; r < K; r++ {
			for o := 0; o < m; o++ {
				sum[o] += math.Abs(yk[r*m+o] - ys[r*m+o])
			}
			for o := 0; o < 5; o++ {
				if c := dat.Index(ks.Outputs[o].Name); c >= 0 && !math.IsNaN(dat.Rows[r][c]) {
					fit[o] += math.Abs(yk[r*m+o] - dat.Rows[r][c])
				}
			}
		}
		used++
	}
	sur, kf := map[string]float64{}, map[string]float64{}
	fmt.Fprintf(w, "\nat %d posterior samples of the surrogate run (%d more where the knee has no equilibrium), %d flexion angles:\n", used, failed, K)
	fmt.Fprintf(w, "%-16s %22s %22s\n", "output", "MAE surrogate vs knee", "MAE knee vs data")
	for o := 0; o < m; o++ {
		scale, unit := 1.0, ks.Outputs[o].Unit
		if unit == "1" {
			scale, unit = 100, "%"
		}
		v := scale * sum[o] / float64(used*K)
		sur[ks.Outputs[o].Name] = v
		line := fmt.Sprintf("%-16s %18.3f %-3s", ks.Outputs[o].Name, v, unit)
		if o < 5 {
			kf[ks.Outputs[o].Name] = fit[o] / float64(used*K)
			line += fmt.Sprintf(" %18.3f %-3s", fit[o]/float64(used*K), unit)
		}
		fmt.Fprintln(w, line)
	}
	return sur, kf
}
