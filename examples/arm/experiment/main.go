// Command experiment writes the comparison of Zhou et al. (Diff-MSM,
// Zhou (Diff-MSM), docs/REFERENCES.md, Sec. IV) as kinfer studies of the
// builtin arm, and computes its criteria once they have run.
//
//	go run ./examples/arm/experiment [-runs N] [-iterations N] [-rows N] [-seed S] [-methods M4I|all] [-out DIR]
//	sh DIR/run.sh                                      # runs every study, then the next line
//	go run ./examples/arm/experiment criteria DIR      # → DIR/criteria.{csv,md}, curves.{csv,md}, fig5.csv, fig*.svg
//
// # The five methods (Sec. IV, IV-A)
//
//	M1  anneal                 muscle parameters free, bones fixed at π0's (perturbed) values
//	M2  anneal                 muscle and bone parameters free
//	M3  adam                   muscle parameters free, bones fixed as in M1
//	M4  adam                   muscle and bone parameters free (the paper's proposal)
//	M5  anneal, local = adam   muscle and bone parameters free
//
// The learnable parameters are the paper's 36 of Sec. IV-D: the 24 muscle
// parameters (L0, F0, vmax of eight muscles) and per bone the mass and the
// COM (x, y, z). The six inertia entries of each bone are left out, as the
// paper does in its comparison ("for saving time"), and fixed at the truth
// in every method.
//
// # Initial guesses (Eq. 10)
//
// Run k (1-based) draws π0_i ~ N(π_gt,i, 0.1·|π_gt,i|) for the 36 learnable
// parameters, in model order, from PCG(seed, k), clipped to the model's
// bounds; so run k's guess does not depend on -runs. All five methods of a
// run start from it: runK/starts.csv (its 36 learnable values, for M2, M4,
// M5) and runK/starts-muscle.csv (its 24 muscle values, for M1, M3) are read
// through the study key init; M1 and M3 fix the 12 bone parameters at π0.
//
// # Each study
//
//   - [transform]: the multiplier of Eq. 8 on every free parameter,
//     name = { multiplier = π0 }, so the method's x = 0 is the initial guess
//     and θ ∈ (π0/10, 10·π0);
//   - [prior]: uniform over the model's bounds, intersected with
//     [π0·0.101, π0·9.9] (the multiplier's range shrunk by 1 %), which
//     tightens only the small COM components whose model bounds reach
//     beyond π0/10 or through 0: annealing needs a finite box in x, and the
//     multiplier maps a θ-bound at π0/10 to x = −∞. The prior is the same for
//     the five methods of a run, and with init the start is exactly π0;
//   - the nmse likelihood (Eq. 4) on DIR/train.csv: -rows rows of
//     examples/arm/train.csv, evenly spaced (row ⌊i·10000/rows⌋), so a
//     reduced loss still sees the whole 20 s of excitation;
//   - Adam (M3, M4): lr = 1e-3, iterations = -iterations, one start;
//   - anneal (M1, M2, M5): initial_temp 0.02, restart_temp_ratio 2e-15,
//     visit 1.1 (Sec. IV-A), and maxfun = -iterations. The paper's budget is
//     10K iterations for every method at ≈ 0.07 s each (11.7 min a run), which
//     only fits one loss evaluation per annealing "iteration"; one kinfer
//     annealing iteration is a strategy chain of 2d visits (72 evaluations
//     for d = 36). So the annealing budget is -iterations evaluations (local
//     searches included), maxiter = -iterations never binds first, and
//     trace_every = 1 records the best loss after every chain. M5: local =
//     adam, local_iterations 100, local_lr 1e-3;
//   - seed = k (Adam draws nothing; the annealing streams differ by run).
//
// # Criteria (Eq. 11–13)
//
// From DIR/results/runK/MJ/summary.json: best is the evaluated point with the
// highest log target (uniform prior: the lowest loss); π̂ is its θ over the
// free parameters plus the study's fixed values (summary.json's fixed).
//
//	C1  = −best.log_likelihood = L_FD(π̂)                      (Eq. 11)
//	C2  = ‖π̂ − π_gt‖₂ / ‖π_gt‖₂ · 100 %  over the 36 learnable   (Eq. 12)
//	C3  = mean_i |π̂_i − π_gt,i| / |π_gt,i| · 100 %  over the 36  (Eq. 13)
//	C3m = C3 over the 24 muscle parameters only
//
// For M1 and M3 the 12 bone parameters of π̂ are the fixed perturbed π0,
// with their error counted in C2 and C3 as in the paper's Fig. 4.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/builtin/stats"
)

// Options are the generator's flags.
type Options struct {
	Runs       int
	Iterations int
	Rows       int
	Seed       uint64
	// Methods: "" for M1–M5, "M4I" for M4I only, "all" for the six.
	Methods string
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// methodNames lists the methods' names, "M1, M2, …".
func methodNames(ms []Method) string {
	var n []string
	for _, m := range ms {
		n = append(n, m.Name)
	}
	return strings.Join(n, ", ")
}

// Flags are the generator's command-line flags giving o.
func (o Options) Flags() string {
	f := fmt.Sprintf("-runs %d -iterations %d -rows %d -seed %d", o.Runs, o.Iterations, o.Rows, o.Seed)
	if o.Methods != "" {
		f += " -methods " + o.Methods
	}
	return f
}

// methods are the methods the options generate.
func (o Options) methods() []Method {
	switch o.Methods {
	case "M4I":
		return []Method{M4I}
	case "all":
		return AllMethods
	}
	return Methods
}

// CI is the default, CI-sized experiment (a few minutes in all); Full is
// the paper's (Sec. IV-B, IV-D: 50 runs, 10K iterations, 10 000 points).
var (
	CI   = Options{Runs: 3, Iterations: 200, Rows: 500, Seed: 1}
	Full = Options{Runs: 50, Iterations: 10000, Rows: 10000, Seed: 1}
)

// Method is one of M1–M5, or M4I.
type Method struct {
	Name    string
	Anneal  bool // anneal, else adam
	All     bool // muscle and bone parameters free, else muscle only
	Local   bool // anneal with Adam as the local search
	Doc     string
	Inertia bool // the 18 inertia entries free too (Sec. IV-E)
}

// Methods are the five methods of Sec. IV.
var Methods = []Method{
	{"M1", true, false, false, "simulated annealing, muscle parameters only (bones fixed at the perturbed π0)", false},
	{"M2", true, true, false, "simulated annealing, muscle and bone parameters", false},
	{"M3", false, false, false, "Adam (exact gradient), muscle parameters only (bones fixed at the perturbed π0)", false},
	{"M4", false, true, false, "Adam (exact gradient), muscle and bone parameters", false},
	{"M5", true, true, true, "simulated annealing with Adam as local search, muscle and bone parameters", false},
}

// M4I is M4 with the inertia entries learnable too, all 54 parameters
// (Sec. IV-E, Fig. 5): the inertia of each bone through the Cholesky
// factor of Eq. 5–7 ([[transform.inertia]]), the other 36 through the
// multiplier of Eq. 8. Written with -methods M4I (or all).
var M4I = Method{Name: "M4I", All: true, Inertia: true, Doc: "Adam (exact gradient), all 54 parameters incl. the inertia (Sec. IV-E)"}

// AllMethods are M1–M5 and M4I, in the order of the tables.
var AllMethods = append(append([]Method(nil), Methods...), M4I)

// Paper settings (Sec. IV-A).
const (
	adamLR           = 1e-3
	initialTemp      = 0.02
	restartTempRatio = 2e-15
	visit            = 1.1
	localIterations  = 100
	localLR          = 1e-3
	// Relative spread of the initial guesses (Eq. 10).
	spread = 0.1
	// The multiplier's range (0.1, 10) shrunk by 1 % for the priors.
	rangeLo, rangeHi = 0.1 * 1.01, 10 / 1.01
)

var (
	params = arm.Spec.Params
	truth  = arm.GroundTruth()
)

// isMuscle tells a muscle parameter (L0, F0, vmax) from a bone one.
func isMuscle(i int) bool { return i >= arm.NBones*arm.BoneParams }

// isLearnable: the 24 muscle parameters and per bone mass and COM.
func isLearnable(i int) bool { return isMuscle(i) || i%arm.BoneParams < 4 }

// Learnable returns the indices of the 36 learnable parameters, model order.
func Learnable() []int {
	var idx []int
	for i := range params {
		if isLearnable(i) {
			idx = append(idx, i)
		}
	}
	return idx
}

// InitialGuess returns run k's π0 (all 54 parameters, model order): the
// learnable ones drawn from N(π_gt, 0.1·|π_gt|) with PCG(seed, k) in model
// order and clipped to the model's bounds, the inertia entries at the truth.
func InitialGuess(seed uint64, k int) []float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	pi0 := append([]float64(nil), truth...)
	for _, i := range Learnable() {
		v := truth[i] + spread*math.Abs(truth[i])*rng.NormFloat64()
		pi0[i] = math.Min(math.Max(v, params[i].Lower), params[i].Upper)
	}
	return pi0
}

// InitialGuessInertia is run k's π0 for M4I: InitialGuess's 36 values, and
// per bone the three principal moments drawn from N(I_gt, 0.1·I_gt) with
// PCG(seed, 2³² + k), redrawn together until they have a Cholesky factor
// under the transform (½·tr(I) − I_ii > 1e-6 for each i: the triangle
// inequality with the transform's bias) and lie in the model's bounds; the
// products stay 0 (0.1·|0| = 0 in Eq. 10).
func InitialGuessInertia(seed uint64, k int) []float64 {
	pi0 := InitialGuess(seed, k)
	rng := rand.New(rand.NewPCG(seed, 1<<32+uint64(k)))
	for b := range arm.NBones {
		j := b*arm.BoneParams + 4 // I_xx; I_yy, I_zz follow
		for {
			var I [3]float64
			ok := true
			for a := range I {
				I[a] = truth[j+a] * (1 + spread*rng.NormFloat64())
				ok = ok && I[a] >= params[j+a].Lower && I[a] <= params[j+a].Upper
			}
			half := (I[0] + I[1] + I[2]) / 2
			for a := range I {
				ok = ok && half-I[a] > inertiaBias
			}
			if ok {
				copy(pi0[j:j+3], I[:])
				break
			}
		}
	}
	return pi0
}

// inertiaBias is c of Eq. 6 in the M4I studies (the transform's default).
const inertiaBias = 1e-6

// inertiaScale is the M4I studies' scale of a bone's Cholesky coordinates
// for principal moments I (products 0): √(min_i Σ_C,ii − c) with
// Σ_C,ii = ½tr(I) − I_ii, so the smallest diagonal entry of L is x = 1 at
// π0 and Adam's steps of ≈ lr in x change the inertia by ≈ 2·lr relative,
// as the multiplier's steps do the other parameters.
func inertiaScale(I []float64) float64 {
	half := (I[0] + I[1] + I[2]) / 2
	return math.Sqrt(min(half-I[0], half-I[1], half-I[2]) - inertiaBias)
}

// free says whether parameter i is free in method m.
func (m Method) free(i int) bool { return m.Inertia || isLearnable(i) && (m.All || isMuscle(i)) }

// startsFile is the init file of method m (relative to the run directory).
func (m Method) startsFile() string {
	if m.Inertia {
		return "starts-inertia.csv"
	}
	if m.All {
		return "starts.csv"
	}
	return "starts-muscle.csv"
}

// num formats a float so that it parses back to the same value.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// priorBounds is the uniform prior of free parameter i for the guess π0:
// the model's bounds within [π0·0.101, π0·9.9] (ordered for π0 < 0).
func priorBounds(i int, pi0 float64) (lo, hi float64) {
	a, b := pi0*rangeLo, pi0*rangeHi
	if pi0 < 0 {
		a, b = b, a
	}
	return math.Max(params[i].Lower, a), math.Min(params[i].Upper, b)
}

// StudyTOML is the study file of method m in run k from the guess pi0; the
// data is ../train.csv and the starts file is in the same directory.
func StudyTOML(m Method, k int, pi0 []float64, o Options) string {
	var s strings.Builder
	fmt.Fprintf(&s, "# Diff-MSM comparison (Zhou et al. Sec. IV), %s, run %d: %s.\n", m.Name, k, m.Doc)
	fmt.Fprintf(&s, "# Written by go run ./examples/arm/experiment %s.\n", o.Flags())
	fmt.Fprintf(&s, "name = %q\nseed = %d\ninit = %q\n\n", fmt.Sprintf("arm-%s-run%02d", m.Name, k), k, m.startsFile())
	s.WriteString("[model]\nuse = \"arm\"\n\n[[data]]\nname = \"train\"\nfile = \"../train.csv\"\noutputs = [")
	for j, c := range arm.Spec.Outputs {
		if j > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "%q", c.Name)
	}
	s.WriteString("]\n\n[[likelihood]]\nuse = \"nmse\"    # log L = −L_FD (Eq. 4)\n\n")
	s.WriteString("[prior]   # uniform over the model's bounds within [0.101·π0, 9.9·π0] (inertia: the model's bounds)\n")
	for i, p := range params {
		if m.free(i) {
			lo, hi := priorBounds(i, pi0[i])
			if !isLearnable(i) {
				lo, hi = p.Lower, p.Upper
			}
			fmt.Fprintf(&s, "%s = { uniform = [%s, %s] }\n", p.Name, num(lo), num(hi))
		}
	}
	if m.Inertia {
		s.WriteString("\n# [fixed]: none, all 54 parameters are learnable (Sec. IV-E)\n")
	} else if m.All {
		s.WriteString("\n[fixed]   # the inertia entries, at the truth (not learnable in Sec. IV-D)\n")
	} else {
		s.WriteString("\n[fixed]   # the bones' mass and COM at the perturbed π0; the inertia entries at the truth\n")
	}
	for i, p := range params {
		if !m.free(i) {
			fmt.Fprintf(&s, "%s = %s\n", p.Name, num(pi0[i]))
		}
	}
	s.WriteString("\n[transform]   # Eq. 8: θ = π0·10^(2σ(x)−1), x = 0 at the initial guess\n")
	for i, p := range params {
		if m.free(i) && isLearnable(i) {
			fmt.Fprintf(&s, "%s = { multiplier = %s }\n", p.Name, num(pi0[i]))
		}
	}
	if m.Inertia {
		for b := range arm.NBones {
			s.WriteString("\n[[transform.inertia]]   # Eq. 5–7: scale·x = the Cholesky factor of Σ_C − c·1, Σ_C = ½tr(I_C)·1 − I_C\nparams = [")
			for f := 4; f < arm.BoneParams; f++ {
				if f > 4 {
					s.WriteString(", ")
				}
				fmt.Fprintf(&s, "%q", params[b*arm.BoneParams+f].Name)
			}
			fmt.Fprintf(&s, "]\nbias = %s\nscale = %s   # √(smallest diagonal of Σ_C − c·1 at π0): an Adam step moves I_C by ≈ 0.1–0.2 %%\n",
				num(inertiaBias), num(inertiaScale(pi0[b*arm.BoneParams+4:b*arm.BoneParams+7])))
		}
	}
	s.WriteString("\n[method]\n")
	if m.Anneal {
		fmt.Fprintf(&s, "use = \"anneal\"\nmaxfun = %d         # the paper's iterations = loss evaluations\nmaxiter = %d\n", o.Iterations, o.Iterations)
		fmt.Fprintf(&s, "initial_temp = %s\nrestart_temp_ratio = %s\nvisit = %s\ntrace_every = 1\n", num(initialTemp), num(restartTempRatio), num(visit))
		s.WriteString("trace_theta = \"yes\"  # the best point after every chain (Fig. 3 right)\n")
		if m.Local {
			fmt.Fprintf(&s, "local = \"adam\"\nlocal_iterations = %d\nlocal_lr = %s\n", localIterations, num(localLR))
		}
	} else {
		fmt.Fprintf(&s, "use = \"adam\"\nlr = %s\niterations = %d\nstarts = 1\ntrace_every = %d\ntrace_theta = \"yes\"  # the iterate every trace_every (Fig. 3, 5)\n", num(adamLR), o.Iterations, max(1, o.Iterations/100))
	}
	return s.String()
}

// StartsCSV is the init file of method m: a header of its free parameters
// and one row, π0.
func StartsCSV(m Method, pi0 []float64) string {
	var names, vals []string
	for i, p := range params {
		if m.free(i) {
			names = append(names, p.Name)
			vals = append(vals, num(pi0[i]))
		}
	}
	return strings.Join(names, ",") + "\n" + strings.Join(vals, ",") + "\n"
}

// RunDir is run k's directory name.
func RunDir(k int) string { return fmt.Sprintf("run%02d", k) }

// repoRoot finds the module root (the directory of kinfer's go.mod) above
// the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/kinfer/kinfer\n") {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("not inside the kinfer repository (no go.mod of github.com/kinfer/kinfer above the working directory)")
		}
		dir = up
	}
}

// copyRows writes the header and rows data rows of src, evenly spaced, to
// dst: rows ⌊i·n/rows⌋, i = 0 … rows−1, of the n data rows (all of them
// when rows = n). It returns n. Evenly spaced rows keep the whole 20 s of
// excitation of the training set (Eq. 9) in a reduced loss; the first 1000
// rows alone cover 2 s, and from them the parameters barely move towards
// the truth in 3000 Adam iterations (C3m 6.3 % against 0.37 % with 1000
// spaced rows, run 1).
func copyRows(src, dst string, rows int) (int, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return 0, err
	}
	var header string
	var data []string
	for _, ln := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(ln, "#"):
		case header == "":
			header = ln
		default:
			data = append(data, ln)
		}
	}
	n := len(data)
	if rows > n {
		return n, nil
	}
	var out strings.Builder
	out.WriteString(header + "\n")
	for i := range rows {
		out.WriteString(data[i*n/rows] + "\n")
	}
	return n, os.WriteFile(dst, []byte(out.String()), 0o644)
}

// Generate writes the experiment into dir: train.csv, experiment.json,
// runK/{starts.csv, starts-muscle.csv, M1.toml … M5.toml} (with -methods
// M4I or all also starts-inertia.csv and M4I.toml) and run.sh.
func Generate(dir, root string, o Options) error {
	if o.Methods != "" && o.Methods != "M4I" && o.Methods != "all" {
		return fmt.Errorf(`-methods must be "" (M1–M5), "M4I" or "all", got %q`, o.Methods)
	}
	if o.Runs < 1 || o.Iterations < 1 || o.Rows < 1 {
		return fmt.Errorf("runs, iterations and rows must be ≥ 1 (got %d, %d, %d)", o.Runs, o.Iterations, o.Rows)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n, err := copyRows(filepath.Join(root, "examples", "arm", "train.csv"), filepath.Join(dir, "train.csv"), o.Rows)
	if err != nil {
		return err
	}
	if n < o.Rows {
		return fmt.Errorf("examples/arm/train.csv has %d rows, fewer than -rows %d", n, o.Rows)
	}
	meta, _ := json.MarshalIndent(map[string]any{
		"runs": o.Runs, "iterations": o.Iterations, "rows": o.Rows, "seed": o.Seed,
		"methods": o.methods(), "learnable": len(Learnable()), "flags": o.Flags(),
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "experiment.json"), append(meta, '\n'), 0o644); err != nil {
		return err
	}
	var sh strings.Builder
	fmt.Fprintf(&sh, `#!/bin/sh
# The Diff-MSM comparison (Zhou et al. Sec. IV): %d runs × %s, %d
# iterations, %d rows. Written by
#   go run ./examples/arm/experiment %s
# Builds kinfer once, runs the studies KINFER_JOBS at a time (each uses
# about one core; kinfer's output goes to results/runNN/MJ.log), then
# computes the criteria. Rerunning the script continues an interrupted
# experiment: a study whose summary.json is complete is skipped, one that
# left a checkpoint (kinfer writes one when stopped, and every
# --checkpoint-every) is resumed from it, the others start afresh.
# KINFER_ROOT: the kinfer repository (default: where it was generated).
# KINFER_JOBS: studies side by side (default: the number of cores).
# KINFER_FLAGS: extra flags of kinfer run (e.g. --checkpoint-every 60s).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=%s
cd "${KINFER_ROOT:-$root}"
mkdir -p "$here/results"
go build -o "$here/kinfer" ./cmd/kinfer
export here KINFER_FLAGS
status=0
xargs -n 2 -P "${KINFER_JOBS:-$(nproc 2>/dev/null || echo 1)}" sh -c '
	r=$0 m=$1 out="$here/results/$0/$1"
	if grep -qs "\"complete\": true" "$out/summary.json"; then
		echo "$r/$m: done already"
		exit 0
	fi
	mkdir -p "$here/results/$r"
	if [ -f "$out/checkpoint.json" ]; then
		set -- run $KINFER_FLAGS --resume "$out"
	else
		set -- run $KINFER_FLAGS "$here/$r/$m.toml" -o "$out"
	fi
	if "$here/kinfer" "$@" >>"$out.log" 2>&1; then
		echo "$r/$m: $(grep ": done" "$out.log" | tail -n 1)"
	else
		echo "$r/$m: FAILED, see $out.log"
		exit 1
	fi
' <<'STUDIES' || status=$?
`, o.Runs, methodNames(o.methods()), o.Iterations, o.Rows, o.Flags(), shQuote(root))
	for k := 1; k <= o.Runs; k++ {
		rd := filepath.Join(dir, RunDir(k))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			return err
		}
		pi0 := InitialGuess(o.Seed, k)
		files := map[string]string{
			"starts.csv":        StartsCSV(Methods[1], pi0),
			"starts-muscle.csv": StartsCSV(Methods[0], pi0),
		}
		for _, m := range o.methods() {
			guess := pi0
			if m.Inertia {
				guess = InitialGuessInertia(o.Seed, k)
				files[m.startsFile()] = StartsCSV(m, guess)
			}
			files[m.Name+".toml"] = StudyTOML(m, k, guess, o)
			fmt.Fprintf(&sh, "%s %s\n", RunDir(k), m.Name)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(rd, name), []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	sh.WriteString("STUDIES\ngo run ./examples/arm/experiment criteria \"$here\"\nexit $status\n")
	return os.WriteFile(filepath.Join(dir, "run.sh"), []byte(sh.String()), 0o755)
}

// Criteria are the paper's C1–C3 and C3m of one estimate.
type Criteria struct {
	C1, C2, C3, C3m float64
}

// Evaluate returns C2, C3 and C3m of the estimate pihat (model order, all
// parameters) against the truth, over the learnable parameters; C1 is left
// to the caller.
func Evaluate(pihat []float64) Criteria {
	var num2, den2, sum, sumM float64
	var n, nM int
	for _, i := range Learnable() {
		d := pihat[i] - truth[i]
		num2 += d * d
		den2 += truth[i] * truth[i]
		rel := math.Abs(d) / math.Abs(truth[i])
		sum += rel
		n++
		if isMuscle(i) {
			sumM += rel
			nM++
		}
	}
	return Criteria{C1: math.NaN(), C2: 100 * math.Sqrt(num2/den2), C3: 100 * sum / float64(n), C3m: 100 * sumM / float64(nM)}
}

// summary is what the criteria read of summary.json.
type summary struct {
	Best *struct {
		Theta  map[string]float64 `json:"theta"`
		LogLik *float64           `json:"log_likelihood"`
	} `json:"best"`
	Fixed       map[string]float64 `json:"fixed"`
	Complete    bool               `json:"complete"`
	Evaluations int                `json:"evaluations"`
	WallSeconds float64            `json:"wall_seconds"`
}

// Row is one line of criteria.csv.
type Row struct {
	Method string
	Run    int
	Criteria
	Evaluations int
	WallSeconds float64
	Complete    bool
	Pihat       []float64 // the best point, all parameters (not in the CSV)
}

// FromSummary computes a run's criteria from its summary.json: π̂ is the
// best point's θ plus the fixed values; C1 = −best log likelihood.
func FromSummary(b []byte) (Row, error) {
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		return Row{}, err
	}
	r := Row{Evaluations: s.Evaluations, WallSeconds: s.WallSeconds, Complete: s.Complete}
	if s.Best == nil || s.Best.LogLik == nil {
		return r, errors.New("no usable best point")
	}
	pihat := make([]float64, len(params))
	for i, p := range params {
		v, ok := s.Best.Theta[p.Name]
		if !ok {
			if v, ok = s.Fixed[p.Name]; !ok {
				return r, fmt.Errorf("parameter %s is neither in best.theta nor in fixed", p.Name)
			}
		}
		pihat[i] = v
	}
	r.Criteria, r.Pihat = Evaluate(pihat), pihat
	r.C1 = -*s.Best.LogLik
	return r, nil
}

// Collect reads DIR/results/runK/MJ/summary.json for every run and method
// it finds; missing or unusable summaries are reported to w and skipped.
func Collect(dir string, w io.Writer) ([]Row, error) {
	runs, err := filepath.Glob(filepath.Join(dir, "results", "run*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(runs)
	var rows []Row
	for _, rd := range runs {
		k, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(rd), "run"))
		if err != nil {
			continue
		}
		for _, m := range AllMethods {
			if _, err := os.Stat(filepath.Join(dir, RunDir(k), m.Name+".toml")); err != nil {
				continue // not generated (-methods)
			}
			p := filepath.Join(rd, m.Name, "summary.json")
			b, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(w, "%s: not run\n", p)
				continue
			} else if err != nil {
				return nil, err
			}
			r, err := FromSummary(b)
			if err != nil {
				fmt.Fprintf(w, "%s: %v; skipped\n", p, err)
				continue
			}
			if !r.Complete {
				fmt.Fprintf(w, "%s: the run did not complete; its best point so far is used\n", p)
			}
			r.Method, r.Run = m.Name, k
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no summary.json under %s", filepath.Join(dir, "results"))
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if rows[a].Method != rows[b].Method {
			return rows[a].Method < rows[b].Method
		}
		return rows[a].Run < rows[b].Run
	})
	return rows, nil
}

// CSV is criteria.csv: one line per method and run.
func CSV(rows []Row) string {
	var b strings.Builder
	b.WriteString("method,run,C1,C2,C3,C3m,evaluations,wall_seconds,complete\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%d,%s,%s,%s,%s,%d,%s,%t\n", r.Method, r.Run, num(r.C1), num(r.C2), num(r.C3), num(r.C3m),
			r.Evaluations, num(r.WallSeconds), r.Complete)
	}
	return b.String()
}

// Quantile is the p-quantile of x by linear interpolation between order
// statistics (Hyndman & Fan type 7, R's and NumPy's default): kinfer's
// builtin/stats.Quantile, the one summary.json's percentiles use.
func Quantile(x []float64, p float64) float64 { return stats.Quantile(x, p) }

// Table is the summary: per method the median and the quartiles of each
// criterion over the runs (as the paper's Fig. 3–4 show them), Markdown.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| method | runs | C1 (L_FD) median [Q1, Q3] | C2 % median [Q1, Q3] | C3 % median [Q1, Q3] | C3m % median [Q1, Q3] | wall s (median) |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, m := range AllMethods {
		var c [4][]float64
		var wall []float64
		for _, r := range rows {
			if r.Method == m.Name {
				for j, v := range []float64{r.C1, r.C2, r.C3, r.C3m} {
					c[j] = append(c[j], v)
				}
				wall = append(wall, r.WallSeconds)
			}
		}
		if len(wall) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d", m.Name, len(wall))
		for j, x := range c {
			f := "%.4g"
			if j == 0 {
				f = "%.3e"
			}
			fmt.Fprintf(&b, " | "+f+" ["+f+", "+f+"]", Quantile(x, 0.5), Quantile(x, 0.25), Quantile(x, 0.75))
		}
		fmt.Fprintf(&b, " | %.1f |\n", Quantile(wall, 0.5))
	}
	return b.String()
}

// startLine is the criteria of the initial guesses π0 of the runs in rows
// (C2, C3, C3m; seed from experiment.json), for reference below the table,
// or "" without experiment.json.
func startLine(dir string, rows []Row) string {
	b, err := os.ReadFile(filepath.Join(dir, "experiment.json"))
	var meta struct {
		Seed *uint64 `json:"seed"`
	}
	if err != nil || json.Unmarshal(b, &meta) != nil || meta.Seed == nil {
		return ""
	}
	seen := map[int]bool{}
	var c [3][]float64
	for _, r := range rows {
		if !seen[r.Run] {
			seen[r.Run] = true
			e := Evaluate(InitialGuess(*meta.Seed, r.Run))
			c[0], c[1], c[2] = append(c[0], e.C2), append(c[1], e.C3), append(c[2], e.C3m)
		}
	}
	s := fmt.Sprintf("\nAt the initial guesses π0 (%d runs):", len(seen))
	for j, name := range []string{"C2", "C3", "C3m"} {
		s += fmt.Sprintf(" %s %.4g [%.4g, %.4g] %%;", name, Quantile(c[j], 0.5), Quantile(c[j], 0.25), Quantile(c[j], 0.75))
	}
	return strings.TrimSuffix(s, ";") + ".\n"
}

// WriteCriteria computes the criteria of the runs under dir, writes
// criteria.csv and criteria.md there and prints the table to w.
func WriteCriteria(dir string, w io.Writer) error {
	rows, err := Collect(dir, w)
	if err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("# Diff-MSM comparison (Zhou et al. Sec. IV): criteria\n\n")
	if b, err := os.ReadFile(filepath.Join(dir, "experiment.json")); err == nil {
		var meta struct {
			Flags string `json:"flags"`
		}
		if json.Unmarshal(b, &meta) == nil && meta.Flags != "" {
			fmt.Fprintf(&md, "Generated with `%s`.\n\n", meta.Flags)
		}
	}
	md.WriteString("C1 = L_FD at the best point (Eq. 11); C2, C3 over the 36 learnable parameters (Eq. 12–13); ")
	md.WriteString("C3m over the 24 muscle parameters. Median [lower quartile, upper quartile] over the runs; per run in criteria.csv.\n\n")
	table := Table(rows)
	md.WriteString(table)
	if start := startLine(dir, rows); start != "" {
		table += start
		md.WriteString(start)
	}
	fmt.Fprint(w, table)
	c3, err := Fig4(rows, 0)
	if err != nil {
		return fmt.Errorf("fig4-C3.svg: %w", err)
	}
	c3m, err := Fig4(rows, 1)
	if err != nil {
		return fmt.Errorf("fig4-C3m.svg: %w", err)
	}
	if err := writeFiles(dir, map[string]string{"criteria.csv": CSV(rows), "criteria.md": md.String(),
		"fig4-C3.svg": c3, "fig4-C3m.svg": c3m}, w); err != nil {
		return err
	}
	return WriteCurves(dir, rows, w)
}

func main() {
	fs := flag.NewFlagSet("experiment", flag.ExitOnError)
	runs := fs.Int("runs", CI.Runs, "runs (initial guesses); the paper's: 50")
	iters := fs.Int("iterations", CI.Iterations, "Adam iterations, annealing loss evaluations; the paper's: 10000")
	rows := fs.Int("rows", CI.Rows, "rows of examples/arm/train.csv in the loss, evenly spaced over its 20 s; the paper's: 10000 (all)")
	seed := fs.Uint64("seed", CI.Seed, "seed of the initial guesses (run k uses PCG(seed, k))")
	out := fs.String("out", "out/arm-experiment", "output directory")
	methods := fs.String("methods", "", `"" for M1–M5, "M4I" for M4 with the inertia learnable too (Sec. IV-E), "all" for the six`)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./examples/arm/experiment [gen] [-runs N] [-iterations N] [-rows N] [-seed S] [-methods M4I|all] [-out DIR]\n")
		fmt.Fprintf(fs.Output(), "       go run ./examples/arm/experiment criteria [DIR]\n")
		fmt.Fprintf(fs.Output(), "       go run ./examples/arm/experiment replot DIR   (Fig. 3 and 4 again from DIR's criteria.csv and curves.csv)\n")
		fs.PrintDefaults()
	}
	args := os.Args[1:]
	mode := "gen"
	if len(args) > 0 && (args[0] == "gen" || args[0] == "criteria" || args[0] == "replot") {
		mode, args = args[0], args[1:]
	}
	fs.Parse(args)
	var err error
	switch mode {
	case "replot":
		if fs.NArg() != 1 {
			fs.Usage()
			os.Exit(2)
		}
		err = Replot(fs.Arg(0), os.Stdout)
	case "criteria":
		dir := *out
		if fs.NArg() > 1 {
			fs.Usage()
			os.Exit(2)
		} else if fs.NArg() == 1 {
			dir = fs.Arg(0)
		}
		err = WriteCriteria(dir, os.Stdout)
	default:
		if fs.NArg() > 0 {
			fs.Usage()
			os.Exit(2)
		}
		var root string
		if root, err = repoRoot(); err == nil {
			o := Options{Runs: *runs, Iterations: *iters, Rows: *rows, Seed: *seed, Methods: *methods}
			if err = Generate(*out, root, o); err == nil {
				fmt.Printf("wrote %d studies (%d runs × %s) under %s; run them with: sh %s\n",
					len(o.methods())*o.Runs, o.Runs, methodNames(o.methods()), *out, filepath.Join(*out, "run.sh"))
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "experiment:", err)
		os.Exit(1)
	}
}
