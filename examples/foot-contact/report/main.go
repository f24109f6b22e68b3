// Command report turns a run of examples/foot-contact/calibrate.toml into
// the tables of Jackson, Hass & Fregly 2016: Table 2 (calibrated
// parameters, here beside the ground truth the synthetic trials were made
// with), Table 3 (RMS errors of the six ground reaction quantities and the
// kinematic changes, calibration trial and held-out trials, beside the
// paper's) and Table 4 (sensitivity: percent change in RMS error per
// percent change in each parameter group, on the held-out trials with
// their fitted kinematics held).
//
//	go run ./examples/foot-contact/report [-refit N] RUN_DIR [EXAMPLE_DIR]
//
// RUN_DIR is the -o directory of the multi-stage run (it holds
// stages.json); EXAMPLE_DIR defaults to examples/foot-contact. With
// -refit N, Table 4 is also computed as the paper's evaluation does: for
// each perturbation the evaluation study of held-out trial N is run again
// (Levenberg–Marquardt, kinematic deviations free, contact parameters
// fixed at the perturbed values), and the kinematic changes are included.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kinfer/kinfer/abi"
	fc "github.com/kinfer/kinfer/builtin/footcontact"
	"github.com/kinfer/kinfer/builtin/formats/opensim"
	"github.com/kinfer/kinfer/builtin/models/foot"
	hostrun "github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
)

// refitTrial is -refit's held-out trial (0: no re-fit).
var refitTrial int

type stage struct {
	Stage     int                `json:"stage"`
	StudyFile string             `json:"study_file"`
	Theta     map[string]float64 `json:"theta"`
}

type truth struct {
	K, C          []float64
	Y0            float64
	MuS, MuD, MuV float64
	Calibration   int
	IKErrorRMS    [][2][7]float64 `json:"ik_error_rms"`
}

// Paper's Table 3 test means (Jackson 2016), right and left: AP, normal,
// ML force (N), AP, ML CoP (mm), free moment (N·m).
var paperTest = [2][6]float64{{12.90, 10.33, 9.48, 24.20, 6.46, 1.51}, {6.68, 11.44, 5.50, 18.33, 6.99, 1.51}}

func main() {
	args := os.Args[1:]
	refit := 0
	if len(args) >= 2 && args[0] == "-refit" {
		if _, err := fmt.Sscan(args[1], &refit); err != nil || refit < 1 {
			fmt.Fprintln(os.Stderr, "report: -refit takes a held-out trial number")
			os.Exit(2)
		}
		args = args[2:]
	}
	if len(args) < 1 || len(args) > 2 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, "usage: go run ./examples/foot-contact/report [-refit N] RUN_DIR [EXAMPLE_DIR]")
		if len(args) == 1 {
			os.Exit(0)
		}
		os.Exit(2)
	}
	ex := "examples/foot-contact"
	if len(args) == 2 {
		ex = args[1]
	}
	refitTrial = refit
	if err := run(args[0], ex); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// trial is one trial's table as model rows and observations.
type trial struct {
	n   int
	x   []float64
	obs [][]float64 // per output of the model: column, NaN where missing
	k   int
}

func loadTrial(dir string, n int) (*trial, error) {
	s, err := opensim.ReadStorageFile(filepath.Join(dir, fmt.Sprintf("trial%d_table.sto", n)))
	if err != nil {
		return nil, err
	}
	t := &trial{n: n, k: len(s.Rows)}
	for _, r := range s.Rows {
		for _, c := range foot.Spec.Conditions {
			j := s.Index(c.Name)
			if j < 0 {
				return nil, fmt.Errorf("%s: no column %q", s.File, c.Name)
			}
			t.x = append(t.x, r[j])
		}
	}
	t.obs = make([][]float64, foot.NOut)
	for o, c := range foot.Spec.Outputs {
		col, err := s.Column(c.Name)
		if err != nil {
			col = nil // deviations have no observations
		}
		t.obs[o] = col
	}
	return t, nil
}

func thetaOf(m map[string]float64) []float64 {
	th := make([]float64, foot.NParams)
	for i, p := range foot.Spec.Params {
		th[i] = p.Default
		if v, ok := m[p.Name]; ok {
			th[i] = v
		}
	}
	return th
}

// errors returns, per foot, the RMS errors of the six ground reaction
// quantities (N, mm, N·m) and the RMS of the seven deviations (mm, deg).
func errorsOf(m abi.Model, th []float64, t *trial) (grf [2][6]float64, kin [2][7]float64, err error) {
	y := make([]float64, t.k*foot.NOut)
	if st := m.Eval(th, t.x, y); st != abi.OK {
		return grf, kin, fmt.Errorf("trial %d: model status %v", t.n, st)
	}
	for s := 0; s < 2; s++ {
		for q := 0; q < 6; q++ {
			o := s*foot.NOutFoot + q
			ss, n := 0.0, 0
			for r := 0; r < t.k; r++ {
				if ob := t.obs[o][r]; !math.IsNaN(ob) {
					d := y[r*foot.NOut+o] - ob
					ss += d * d
					n++
				}
			}
			v := math.Sqrt(ss / float64(n))
			if q == 3 || q == 4 {
				v *= 1000
			}
			grf[s][q] = v
		}
		for j := 0; j < fc.NDoF; j++ {
			o := s*foot.NOutFoot + foot.NOutGRF + foot.NOutMarker + j
			ss := 0.0
			for r := 0; r < t.k; r++ {
				d := y[r*foot.NOut+o]
				ss += d * d
			}
			v := math.Sqrt(ss / float64(t.k))
			if j < 3 {
				v *= 1000
			} else {
				v *= 180 / math.Pi
			}
			kin[s][j] = v
		}
	}
	return grf, kin, nil
}

func stats(x []float64) (mn, mean, mx, sd float64) {
	mn, mx = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		mn, mx = math.Min(mn, v), math.Max(mx, v)
		mean += v / float64(len(x))
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean) / float64(len(x)-1)
	}
	return mn, mean, mx, math.Sqrt(sd)
}

func run(runDir, ex string) error {
	var stages []stage
	if err := readJSON(filepath.Join(runDir, "stages.json"), &stages); err != nil {
		return err
	}
	var tr truth
	if err := readJSON(filepath.Join(ex, "truth.json"), &tr); err != nil {
		return err
	}
	m, err := foot.New([]float64{fc.DefaultDimensions.Length, fc.DefaultDimensions.Width, fc.DefaultDimensions.MarkerH})
	if err != nil {
		return err
	}
	var calib map[string]float64
	evals := map[int]map[string]float64{}
	for _, st := range stages {
		switch {
		case st.StudyFile == "stage3.toml":
			calib = st.Theta
		case strings.HasPrefix(st.StudyFile, "eval_trial"):
			var n int
			fmt.Sscanf(st.StudyFile, "eval_trial%d.toml", &n)
			evals[n] = st.Theta
		}
	}
	if calib == nil {
		return fmt.Errorf("%s: no stage3.toml stage", runDir)
	}

	// Table 2.
	fmt.Print("## Table 2: calibrated parameters (both feet) against the ground truth\n\n")
	fmt.Println("| parameter | calibrated | ground truth | Jackson 2016 Table 2 |")
	fmt.Println("|---|---|---|---|")
	var kc, cc []float64
	for i := 0; i < fc.NElem; i++ {
		kc = append(kc, calib[fmt.Sprintf("k_%02d", i+1)])
		cc = append(cc, calib[fmt.Sprintf("c_%02d", i+1)])
	}
	names := []string{"min", "mean", "max", "std. dev."}
	paperK := []string{"590", "2596", "4330", "674"}
	paperC := []string{"0", "2.75e-6", "1.00e-4", "1.63e-5"}
	a, b, c, d := stats(kc)
	ta, tb, tc, td := stats(tr.K)
	for i, v := range [][2]float64{{a, ta}, {b, tb}, {c, tc}, {d, td}} {
		fmt.Printf("| k %s (N/m) | %.0f | %.0f | %s |\n", names[i], v[0], v[1], paperK[i])
	}
	a, b, c, d = stats(cc)
	ta, tb, tc, td = stats(tr.C)
	for i, v := range [][2]float64{{a, ta}, {b, tb}, {c, tc}, {d, td}} {
		fmt.Printf("| c %s (s/m) | %.3g | %.3g | %s |\n", names[i], v[0], v[1], paperC[i])
	}
	fmt.Printf("| y0 (mm) | %.3f | %.3f | — |\n", 1000*calib["y0"], 1000*tr.Y0)
	fmt.Printf("| static μ | %.4f | %.4f | 0.101 |\n", calib["mu_s"], tr.MuS)
	fmt.Printf("| dynamic μ | %.4f | %.4f | 0.088 |\n", calib["mu_d"], tr.MuD)
	fmt.Printf("| viscous μ | %.4f | %.4f | 0.013 |\n", calib["mu_v"], tr.MuV)
	kerr, cerr := 0.0, 0.0
	for i := range kc {
		kerr += math.Pow((kc[i]-tr.K[i])/tr.K[i], 2) / float64(len(kc))
		cerr += math.Pow(cc[i]-tr.C[i], 2) / float64(len(cc))
	}
	fmt.Printf("\nPer element: RMS relative error of k %.1f %%, RMS error of c %.3g s/m.\n\n", 100*math.Sqrt(kerr), math.Sqrt(cerr))

	// Table 3.
	fmt.Print("## Table 3: RMS errors of the ground reaction quantities and kinematic changes\n\n")
	fmt.Println("| foot | trial | AP force (N) | normal force (N) | ML force (N) | AP CoP (mm) | ML CoP (mm) | free moment (N·m) | HF AP trans (mm) | HF SI trans (mm) | HF ML trans (mm) | HF ML rot (°) | HF AP rot (°) | HF SI rot (°) | toe flexion (°) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	ct, err := loadTrial(ex, tr.Calibration)
	if err != nil {
		return err
	}
	cg, ck, err := errorsOf(m, thetaOf(calib), ct)
	if err != nil {
		return err
	}
	var trials []int
	for n := range evals {
		trials = append(trials, n)
	}
	sort.Ints(trials)
	loaded := map[int]*trial{}
	var tg [][2][6]float64
	var tk [][2][7]float64
	for _, n := range trials {
		t, err := loadTrial(ex, n)
		if err != nil {
			return err
		}
		loaded[n] = t
		g, k, err := errorsOf(m, thetaOf(evals[n]), t)
		if err != nil {
			return err
		}
		tg, tk = append(tg, g), append(tk, k)
	}
	row := func(side, label string, g [6]float64, k [7]float64) {
		fmt.Printf("| %s | %s |", side, label)
		for _, v := range g {
			fmt.Printf(" %.2f |", v)
		}
		for _, v := range k {
			fmt.Printf(" %.2f |", v)
		}
		fmt.Println()
	}
	worst := [6]float64{}
	worstKin := [2]float64{}
	for s, side := range []string{"right", "left"} {
		row(side, fmt.Sprintf("calibration (trial %d)", tr.Calibration), cg[s], ck[s])
		var mg, sg [6]float64
		var mk, sk [7]float64
		nt := float64(len(tg))
		for i := range tg {
			for q := 0; q < 6; q++ {
				mg[q] += tg[i][s][q] / nt
				worst[q] = math.Max(worst[q], tg[i][s][q])
			}
			for j := 0; j < 7; j++ {
				mk[j] += tk[i][s][j] / nt
				if j < 3 {
					worstKin[0] = math.Max(worstKin[0], tk[i][s][j])
				} else {
					worstKin[1] = math.Max(worstKin[1], tk[i][s][j])
				}
			}
		}
		for i := range tg {
			for q := 0; q < 6; q++ {
				sg[q] += math.Pow(tg[i][s][q]-mg[q], 2) / (nt - 1)
			}
			for j := 0; j < 7; j++ {
				sk[j] += math.Pow(tk[i][s][j]-mk[j], 2) / (nt - 1)
			}
		}
		for q := range sg {
			sg[q] = math.Sqrt(sg[q])
		}
		for j := range sk {
			sk[j] = math.Sqrt(sk[j])
		}
		row(side, "test mean", mg, mk)
		row(side, "test std. dev.", sg, sk)
		fmt.Printf("| %s | Jackson 2016 test mean |", side)
		for _, v := range paperTest[s] {
			fmt.Printf(" %.2f |", v)
		}
		fmt.Println(" | | | | | | |")
	}
	fmt.Println("\nThe kinematic columns are the RMS of the fitted deviations (the change from the measured joint trajectories, as in the paper).")
	// The fitted kinematics against the true ones (known here).
	fmt.Print("\nKinematics against the truth (synthetic trials only): RMS of measured − true (the IK error) → fitted − true, translations (mm) and rotations (°), worst DoF per foot:\n\n")
	fmt.Println("| trial | right trans | right rot | left trans | left rot |")
	fmt.Println("|---|---|---|---|---|")
	kinRows := append([]int{tr.Calibration}, trials...)
	for _, n := range kinRows {
		th := calib
		if n != tr.Calibration {
			th = evals[n]
		}
		t := ct
		if n != tr.Calibration {
			t = loaded[n]
		}
		before, after, err := kinVsTruth(m, thetaOf(th), t, filepath.Join(ex, fmt.Sprintf("trial%d_truth.sto", n)))
		if err != nil {
			return err
		}
		label := fmt.Sprint(n)
		if n == tr.Calibration {
			label += " (calibration)"
		}
		fmt.Printf("| %s | %.2f → %.2f | %.2f → %.2f | %.2f → %.2f | %.2f → %.2f |\n", label,
			before[0][0], after[0][0], before[0][1], after[0][1], before[1][0], after[1][0], before[1][1], after[1][1])
	}
	fmt.Printf("\nThe IK error the synthetic trials carry (the change the fit should make) has RMS %.2f–%.2f mm and %.2f–%.2f°.\n",
		1000*minIK(tr, 0, 3), 1000*maxIK(tr, 0, 3), 180/math.Pi*minIK(tr, 3, 7), 180/math.Pi*maxIK(tr, 3, 7))
	limits := [6]float64{13, 13, 13, 25, 8, 2}
	fmt.Print("\nWorst held-out trial against the issue's bounds (forces < 13 N, AP CoP < 25 mm, ML CoP < 8 mm, free moment < 2 N·m, kinematic changes < 4.5 mm and 1.5°):")
	for q, v := range worst {
		fmt.Printf(" %.2f/%g", v, limits[q])
	}
	fmt.Printf(" %.2f/4.5 %.2f/1.5\n\n", worstKin[0], worstKin[1])

	// Table 4.
	fmt.Print("## Table 4: sensitivity (percent change in RMS error / percent change in parameter), held-out trials, fitted kinematics held\n\n")
	fmt.Println("| foot | test | AP force | normal force | ML force | AP CoP | ML CoP | free moment |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	type pert struct {
		name  string
		apply func(map[string]float64)
		pct   float64
	}
	scale := func(prefix string, f float64) func(map[string]float64) {
		return func(th map[string]float64) {
			for k, v := range th {
				if strings.HasPrefix(k, prefix) {
					th[k] = v * f
				}
			}
		}
	}
	perts := []pert{
		{"k_i + 20%", scale("k_", 1.2), 20}, {"k_i − 20%", scale("k_", 0.8), -20},
		{"c_i × 10", scale("c_", 10), 900}, {"c_i / 10", scale("c_", 0.1), -90},
		{"μd × 2", scale("mu_d", 2), 100}, {"μd / 2", scale("mu_d", 0.5), -50},
		{"μs × 2", scale("mu_s", 2), 100}, {"μs / 2", scale("mu_s", 0.5), -50},
		{"μv × 2", scale("mu_v", 2), 100}, {"μv / 2", scale("mu_v", 0.5), -50},
	}
	for s, side := range []string{"right", "left"} {
		for _, p := range perts {
			var sens [6]float64
			for i, n := range trials {
				th := map[string]float64{}
				for k, v := range evals[n] {
					th[k] = v
				}
				p.apply(th)
				g, _, err := errorsOf(m, thetaOf(th), loaded[n])
				if err != nil {
					return err
				}
				for q := 0; q < 6; q++ {
					base := tg[i][s][q]
					sens[q] += 100 * (g[s][q] - base) / base / p.pct / float64(len(trials))
				}
			}
			fmt.Printf("| %s | %s |", side, p.name)
			for _, v := range sens {
				fmt.Printf(" %.2f |", v)
			}
			fmt.Println()
		}
	}
	if refitTrial == 0 {
		return nil
	}
	idx := -1
	for i, n := range trials {
		if n == refitTrial {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("-refit %d: not a held-out trial (held out: %v)", refitTrial, trials)
	}
	fmt.Printf("\n## Table 4 with the kinematics re-fitted (held-out trial %d, as the paper's evaluation)\n\n", refitTrial)
	fmt.Println("| foot | test | AP force | normal force | ML force | AP CoP | ML CoP | free moment | HF AP trans | HF SI trans | HF ML trans | HF ML rot | HF AP rot | HF SI rot | toe flexion |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	type result struct {
		g [2][6]float64
		k [2][7]float64
	}
	var res []result
	for _, p := range perts {
		th := map[string]float64{}
		for k, v := range evals[refitTrial] {
			th[k] = v
		}
		p.apply(th)
		fitted, err := refitKinematics(filepath.Join(ex, fmt.Sprintf("eval_trial%d.toml", refitTrial)), th)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		g, k, err := errorsOf(m, thetaOf(fitted), loaded[refitTrial])
		if err != nil {
			return err
		}
		res = append(res, result{g, k})
	}
	for s, side := range []string{"right", "left"} {
		for pi, p := range perts {
			fmt.Printf("| %s | %s |", side, p.name)
			for q := 0; q < 6; q++ {
				base := tg[idx][s][q]
				fmt.Printf(" %.2f |", 100*(res[pi].g[s][q]-base)/base/p.pct)
			}
			for j := 0; j < 7; j++ {
				base := tk[idx][s][j]
				fmt.Printf(" %.2f |", 100*(res[pi].k[s][j]-base)/base/p.pct)
			}
			fmt.Println()
		}
	}
	return nil
}

// refitKinematics runs an evaluation study with the contact parameters of
// th fixed (inherited) and returns th with the fitted deviations.
func refitKinematics(studyFile string, th map[string]float64) (map[string]float64, error) {
	contact := map[string]float64{}
	for k, v := range th {
		if !strings.Contains(k, "dev_") {
			contact[k] = v
		}
	}
	s, err := study.Load(context.Background(), studyFile, study.Options{Workers: 2, Previous: contact})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dir, err := os.MkdirTemp("", "foot-refit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sum, err := hostrun.Run(context.Background(), s, hostrun.Options{OutDir: dir, Workers: 2})
	if err != nil {
		return nil, err
	}
	if sum.Best == nil {
		return nil, fmt.Errorf("%s: no point evaluated", studyFile)
	}
	out := map[string]float64{}
	for k, v := range contact {
		out[k] = v
	}
	for k, v := range sum.Best.Theta {
		out[k] = v
	}
	return out, nil
}

func minIK(tr truth, lo, hi int) float64 {
	v := math.Inf(1)
	for _, t := range tr.IKErrorRMS {
		for s := 0; s < 2; s++ {
			for j := lo; j < hi; j++ {
				v = math.Min(v, t[s][j])
			}
		}
	}
	return v
}

func maxIK(tr truth, lo, hi int) float64 {
	v := 0.0
	for _, t := range tr.IKErrorRMS {
		for s := 0; s < 2; s++ {
			for j := lo; j < hi; j++ {
				v = math.Max(v, t[s][j])
			}
		}
	}
	return v
}

// kinVsTruth returns, per foot, the worst-DoF RMS of measured − true and
// of fitted (measured + deviation) − true, translations in mm, rotations
// in degrees.
func kinVsTruth(m abi.Model, th []float64, t *trial, truthFile string) (before, after [2][2]float64, err error) {
	ts, err := opensim.ReadStorageFile(truthFile)
	if err != nil {
		return before, after, err
	}
	if len(ts.Rows) != t.k {
		return before, after, fmt.Errorf("%s: %d rows, the trial has %d", truthFile, len(ts.Rows), t.k)
	}
	y := make([]float64, t.k*foot.NOut)
	if st := m.Eval(th, t.x, y); st != abi.OK {
		return before, after, fmt.Errorf("trial %d: model status %v", t.n, st)
	}
	for s := 0; s < 2; s++ {
		for j, d := range fc.DoFNames {
			tc, err := ts.Column(foot.Prefix[s] + d)
			if err != nil {
				return before, after, err
			}
			var sb, sa float64
			for r := 0; r < t.k; r++ {
				meas := t.x[r*foot.NConds+3+s*2*fc.NDoF+j]
				dev := y[r*foot.NOut+s*foot.NOutFoot+foot.NOutGRF+foot.NOutMarker+j]
				sb += (meas - tc[r]) * (meas - tc[r])
				sa += (meas + dev - tc[r]) * (meas + dev - tc[r])
			}
			unit, g := 1000.0, 0
			if j >= 3 {
				unit, g = 180/math.Pi, 1
			}
			before[s][g] = math.Max(before[s][g], unit*math.Sqrt(sb/float64(t.k)))
			after[s][g] = math.Max(after[s][g], unit*math.Sqrt(sa/float64(t.k)))
		}
	}
	return before, after, nil
}
