package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinfer/kinfer/builtin/models/ligament"
)

// kinfer runs the CLI in-process and returns exit code, stdout and stderr.
func kinfer(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli(args, &out, &errb)
	return code, out.String(), errb.String()
}

type summary struct {
	Evaluations       int `json:"evaluations"`
	FailedEvaluations int `json:"failed_evaluations"`
	Params            []struct {
		Name          string
		Mean, SD, P50 float64
	} `json:"params"`
	MethodReport struct {
		ESS []float64 `json:"ess"`
	} `json:"method_report"`
	Complete bool `json:"complete"`
}

func readSummary(t *testing.T, dir string) summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func readTruth(t *testing.T) map[string]float64 {
	b, err := os.ReadFile("../../examples/quickstart/truth.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The quickstart's posterior means lie within 3 posterior sd of the
// parameters that generated its data (examples/quickstart/truth.json).
// So does the same study with all three roles as plugins (C model, Go
// Student-t likelihood, Go Metropolis method).
func TestQuickstartRecoversTruth(t *testing.T) {
	for _, study := range []string{"quickstart", "quickstart-plugins"} {
		dir := t.TempDir()
		code, out, errs := kinfer(t, "run", "../../examples/"+study+"/study.toml", "-o", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", study, code, out, errs)
		}
		s := readSummary(t, dir)
		truth := readTruth(t)
		if !s.Complete || s.Evaluations == 0 || len(s.Params) != 2 {
			t.Fatalf("%s: summary %+v", study, s)
		}
		for _, p := range s.Params {
			if z := math.Abs(p.Mean-truth[p.Name]) / p.SD; !(z < 3) {
				t.Errorf("%s: %s: mean %g sd %g, truth %g: %.2f sd away (want < 3)", study, p.Name, p.Mean, p.SD, truth[p.Name], z)
			}
		}
	}
}

// The sandboxed Go plugin gives the same posterior as the builtin within
// Monte Carlo error: |Δmean| < 4·√(se_b² + se_w²), se = sd/√ESS.
func TestQuickstartWasmMatchesBuiltin(t *testing.T) {
	db, dw := t.TempDir(), t.TempDir()
	if code, _, e := kinfer(t, "run", "../../examples/quickstart/study.toml", "-o", db); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := kinfer(t, "run", "../../examples/quickstart-wasm/study.toml", "-o", dw, "--seed", "99"); code != 0 {
		t.Fatal(e)
	}
	sb, sw := readSummary(t, db), readSummary(t, dw)
	for i := range sb.Params {
		b, w := sb.Params[i], sw.Params[i]
		seB := b.SD / math.Sqrt(sb.MethodReport.ESS[i])
		seW := w.SD / math.Sqrt(sw.MethodReport.ESS[i])
		if d := math.Abs(b.Mean - w.Mean); !(d < 4*math.Hypot(seB, seW)) {
			t.Errorf("%s: builtin mean %g, wasm mean %g: |Δ| %g ≥ 4·se %g", b.Name, b.Mean, w.Mean, d, 4*math.Hypot(seB, seW))
		}
		if r := w.SD / b.SD; r < 0.8 || r > 1.25 {
			t.Errorf("%s: sd ratio wasm/builtin %g outside [0.8, 1.25]", b.Name, r)
		}
	}
}

// --workers must not change the results: byte-identical samples.csv.
func TestWorkersDoNotChangeSamples(t *testing.T) {
	for _, study := range []string{"../../examples/quickstart/study.toml", "../../examples/quickstart-wasm/study.toml", "../../examples/quickstart-tmcmc/study.toml"} {
		var files [2][]byte
		for i, w := range []string{"1", "2"} {
			dir := t.TempDir()
			if code, _, e := kinfer(t, "run", study, "--seed", "7", "--workers", w, "-o", dir); code != 0 {
				t.Fatal(e)
			}
			b, err := os.ReadFile(filepath.Join(dir, "samples.csv"))
			if err != nil {
				t.Fatal(err)
			}
			files[i] = b
		}
		if len(files[0]) < 1000 || !bytes.Equal(files[0], files[1]) {
			t.Errorf("%s: samples.csv differs between --workers 1 and 2 (%d vs %d bytes)", study, len(files[0]), len(files[1]))
		}
	}
}

func TestTypoInStudyNamesFileLineKey(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../examples/quickstart/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "burn_in = 2000", "burnin = 2000", 1)
	line := 1 + strings.Count(text[:strings.Index(text, "burnin")], "\n")
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	code, _, errs := kinfer(t, "run", p, "-o", t.TempDir())
	want := p + ":" + strconv.Itoa(line) + `: key "method.burnin"`
	if code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %q; want it to contain %q", code, errs, want)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInspectCPlugin(t *testing.T) {
	code, out, errs := kinfer(t, "inspect", "../../plugins/c/ligament/plugin.toml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"ABI version:  1", "kind:         model", "k ", "eps_r", "length_mm", "force_N", "ref_length_mm", "jacobian"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
}

// kinfer inspect FILE.wasm on a file that is missing, not a regular file
// or not a module says so of the file itself (audit 8: it was answered as
// a manifest's wasm key, "build it with kinfer build ."); a symbolic link
// to a module elsewhere is the file the user chose and loads.
func TestInspectBareModuleErrors(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.wasm")))
	must(os.WriteFile(filepath.Join(dir, "bad.wasm"), []byte("not a module at all"), 0o644))
	lig, _ := filepath.Abs("../../plugins/c/ligament/ligament.wasm")
	must(os.Symlink(lig, filepath.Join(dir, "lig.wasm")))
	for _, c := range []struct{ file, want string }{
		{"nonexist.wasm", "nonexist.wasm: no such file or directory"},
		{"zero.wasm", "zero.wasm (through a symbolic link): /dev/zero is a character device, not a regular file"},
		{"bad.wasm", `bad.wasm: not a WebAssembly binary (it starts with "not ", a module with "\x00asm")`},
	} {
		code, _, e := kinfer(t, "inspect", filepath.Join(dir, c.file))
		if code == 0 || !strings.Contains(e, c.want) || strings.Contains(e, "kinfer build") || strings.Contains(e, "wasm = ") {
			t.Errorf("%s: exit %d, %s", c.file, code, e)
		}
	}
	if code, out, e := kinfer(t, "inspect", filepath.Join(dir, "lig.wasm")); code != 0 || !strings.Contains(out, "ligament-c") {
		t.Errorf("a link to a module: exit %d\n%s\n%s", code, out, e)
	}
}

// kinfer inspect --certify checks a plugin's determinism on the
// quickstart's conditions; a required setting it lacks is a clear error.
func TestInspectCertify(t *testing.T) {
	code, out, errs := kinfer(t, "inspect", "--certify", "--set", "ref_length_mm=30",
		"--data", "../../examples/quickstart/force_length.csv", "../../plugins/c/ligament/plugin.toml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"certified:    deterministic", "kinfer_model_eval: 12 points, 41 conditions", "kinfer_model_jacobian"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, _, errs = kinfer(t, "inspect", "--certify", "../../plugins/c/ligament/plugin.toml")
	if code != 1 || !strings.Contains(errs, "ref_length_mm") {
		t.Errorf("without the required setting: exit %d, %s", code, errs)
	}
}

// copyPlugin copies a plugin directory's manifest and module to a temp dir.
func copyPlugin(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); n == "plugin.toml" || strings.HasSuffix(n, ".wasm") {
			os.WriteFile(filepath.Join(dir, n), mustRead(t, filepath.Join(src, n)), 0o644)
		}
	}
	return dir
}

func TestSHA256MismatchRefused(t *testing.T) {
	dir := copyPlugin(t, "../../plugins/c/ligament")
	wasm := filepath.Join(dir, "ligament.wasm")
	b := mustRead(t, wasm)
	b[len(b)-1] ^= 0xff
	os.WriteFile(wasm, b, 0o644)
	for _, cmd := range []string{"inspect", "validate"} {
		code, _, errs := kinfer(t, cmd, filepath.Join(dir, "plugin.toml"))
		if code == 0 || !strings.Contains(errs, "plugin ligament-c") || !strings.Contains(errs, "sha256 mismatch") {
			t.Errorf("%s: exit %d, stderr %q: want non-zero naming plugin ligament-c and the mismatch", cmd, code, errs)
		}
	}
	// Through a study, the error also names the study's file, line and key.
	study := filepath.Join(dir, "study.toml")
	os.WriteFile(study, []byte("name = \"s\"\n[model]\nplugin = \"plugin.toml\"\n"), 0o644)
	code, _, errs := kinfer(t, "validate", study)
	if want := study + `:3: key "model.plugin"`; code == 0 || !strings.Contains(errs, want) || !strings.Contains(errs, "sha256 mismatch") {
		t.Errorf("validate study: exit %d, stderr %q: want %q and the mismatch", code, errs, want)
	}
}

const spinStudy = `name = "spin"
[model]
plugin = "%s"
[[data]]
name = "d"
file = "d.csv"
[[likelihood]]
use = "gaussian"
sigma = 1.0
[prior]
a = { uniform = [0.0, 1.0] }
[method]
use = "metropolis"
chains = 2
`

// A plugin stuck in a loop fails the run within its timeout_ms (100 ms in
// host/testdata/plugins/spin) with an error naming the plugin, and the
// outputs are still written.
func TestSpinningPluginTimesOut(t *testing.T) {
	dir := t.TempDir()
	man, _ := filepath.Abs("../../host/testdata/plugins/spin/plugin.toml")
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(strings.Replace(spinStudy, "%s", man, 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n1,2\n"), 0o644)
	out := t.TempDir()
	start := time.Now()
	code, _, errs := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", out)
	el := time.Since(start)
	if code != 1 || !strings.Contains(errs, "plugin spin") || !strings.Contains(errs, "timeout_ms=100") {
		t.Fatalf("exit %d, stderr %q: want failure naming plugin spin and its timeout", code, errs)
	}
	if el > 20*time.Second {
		t.Errorf("took %v", el) // generous: the bound that matters is the plugin's timeout, checked in host/wasm
	}
	s := readSummary(t, out)
	if s.Complete {
		t.Fatal("summary says complete")
	}
}

func TestValidateListVersion(t *testing.T) {
	if code, out, errs := kinfer(t, "validate", "../../examples/quickstart-wasm/study.toml"); code != 0 || !strings.Contains(out, "ok: study ligament-quickstart-wasm") {
		t.Fatalf("validate: %d %s %s", code, out, errs)
	}
	// A study with a fixed parameter, a transform and an initial point says
	// so (the quickstart with eps_r fixed, k on a log scale, a starts file).
	dir := t.TempDir()
	abs, _ := filepath.Abs("../../examples/quickstart/force_length.csv")
	study := fmt.Sprintf(`name = "v"
init = "starts.csv"
[model]
use = "ligament"
ref_length_mm = 30.0
[[data]]
name = "pull"
file = %q
[[likelihood]]
use = "gaussian"
sigma = { force_N = 10.0 }
[prior]
k = { uniform = [2000.0, 9000.0] }
[fixed]
eps_r = 0.04
[transform]
k = "log"
[method]
use = "adam"
iterations = 1
`, abs)
	os.WriteFile(filepath.Join(dir, "starts.csv"), []byte("k\n5000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644)
	want := "1 free parameter(s) (1 fixed), 1 reparameterised by [transform], 1 initial point(s) from init, 1 dataset(s) with 41 rows"
	if code, out, errs := kinfer(t, "validate", filepath.Join(dir, "study.toml")); code != 0 || !strings.Contains(out, want) {
		t.Fatalf("validate: %d %s %s; want %q", code, out, errs, want)
	}
	if code, out, _ := kinfer(t, "validate", "../../plugins/go/metropolis/plugin.toml"); code != 0 || !strings.Contains(out, "ok: plugin") {
		t.Fatalf("validate plugin: %d %s", code, out)
	}
	// A bare module shows its spec's version (author 22: none was shown).
	if code, out, errs := kinfer(t, "inspect", "../../plugins/go/studentt/studentt.wasm"); code != 0 || !strings.Contains(out, "kind:         likelihood") || !strings.Contains(out, "plugin:       studentt 1.0.0\n") {
		t.Fatalf("inspect a bare module: %d %s %s", code, out, errs)
	}
	if code, out, _ := kinfer(t, "list"); code != 0 || !strings.Contains(out, "builtin:ligament") || !strings.Contains(out, "builtin:metropolis") {
		t.Fatalf("list: %d %s", code, out)
	}
	if code, out, _ := kinfer(t, "version"); code != 0 || !strings.Contains(out, "ABI 1") {
		t.Fatalf("version: %d %s", code, out)
	}
	// A usage error shows the command's synopsis, not all of kinfer's.
	if code, _, errs := kinfer(t, "run"); code != 2 || !strings.Contains(errs, "usage: kinfer run STUDY.toml") || strings.Count(errs, "\n") > 5 {
		t.Fatalf("run without study: %d %s", code, errs)
	}
	// A negative seed was silently taken as "not given".
	if code, _, errs := kinfer(t, "run", "../../examples/quickstart/study.toml", "--seed", "-2"); code != 2 || !strings.Contains(errs, "--seed must be ≥ 0, got -2") {
		t.Fatalf("run --seed -2: %d %s", code, errs)
	}
	// --help offered "default -1", which --seed refuses (audit 21).
	if code, out, _ := kinfer(t, "run", "--help"); code != 0 || strings.Contains(out, "default -1") || !strings.Contains(out, "default: the study's own") {
		t.Fatalf("run --help: %d %s", code, out)
	}
}

// kinfer analyze: spreads from samples.csv and the posterior-predictive fit.
// The quickstart's noise is N(0, 10²) N, so the posterior-mean prediction's
// MAE against the data is about E|ε| = 10·√(2/π) = 7.98 N; with 41 points
// its sd is about 10·0.60/√41 = 0.94 N, hence the band [4.2, 11.7] (±4 sd).
func TestAnalyzeQuickstart(t *testing.T) {
	dir := t.TempDir()
	if code, _, e := kinfer(t, "run", "../../examples/quickstart/study.toml", "-o", dir); code != 0 {
		t.Fatal(e)
	}
	code, out, errs := kinfer(t, "analyze", dir, "--predictive", "200")
	if code != 0 {
		t.Fatalf("analyze: %d %s %s", code, out, errs)
	}
	var a struct {
		Params []struct {
			Name               string
			P05, P95, Relative float64
		}
		Predictive []struct {
			Output string
			N      int
			MAE    float64
		}
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "analysis.json")), &a); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, dir)
	for i, p := range a.Params {
		// The quickstart's prior ranges: k 7000 N, eps_r 0.5.
		rng := []float64{7000, 0.5}[i]
		if math.Abs(p.Relative-(p.P95-p.P05)/rng) > 1e-12 || !(p.P05 < s.Params[i].P50 && s.Params[i].P50 < p.P95) {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if len(a.Predictive) != 1 || a.Predictive[0].N != 41 || a.Predictive[0].MAE < 4.2 || a.Predictive[0].MAE > 11.7 {
		t.Fatalf("predictive %+v", a.Predictive)
	}
	// The table names its columns, the unit one too, and prints the
	// largest error (audit 14: an unnamed unit column read as a number).
	if !regexp.MustCompile(`(?m)^dataset +output +n +MAE +RMSE +max \|error\|  unit$`).MatchString(out) || !regexp.MustCompile(`(?m)^pull-test +force_N +41 .* N$`).MatchString(out) {
		t.Errorf("predictive table:\n%s", out)
	}
	// The same run marked as stopped: its samples are a partial result,
	// and analyze says so first, in analysis.json too (audit 7: a TMCMC
	// run stopped at q = 0.0066 passed a truth check without a word).
	var raw map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "summary.json")), &raw); err != nil {
		t.Fatal(err)
	}
	raw["complete"], raw["error"] = false, "interrupted by a test"
	b, _ := json.Marshal(raw)
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = kinfer(t, "analyze", dir, "--predictive", "20")
	if code != 0 || !strings.HasPrefix(out, "WARNING: the run did not complete (interrupted by a test): its samples are the method's partial result, not a posterior sample") {
		t.Fatalf("analyze of a stopped run: %d %s %s", code, out, errs)
	}
	var st struct{ Stopped bool }
	if json.Unmarshal(mustRead(t, filepath.Join(dir, "analysis.json")), &st); !st.Stopped {
		t.Error("analysis.json of a stopped run lacks stopped: true")
	}
}

// A CI-sized knee Bayesian parameter estimation (issue 3) on synthetic
// specimen 1 — 500 chains × 10 sub-steps instead of the study's 1000 × 25 —
// finishes with a finite log evidence and a posterior-predictive fit at the
// paper's Table 4 level: MAE below 1 mm / 1° on each kinematic output. The
// data's noise (σ 0.5 or 1.0) alone gives an MAE of 0.8σ, so a sampler that
// had not found the specimen's kinematics would fail this.
func TestKneeSpecimenCISized(t *testing.T) {
	if testing.Short() {
		t.Skip("12 s")
	}
	dir := t.TempDir()
	text := string(mustRead(t, "../../examples/knee-bpe/specimen1/study.toml"))
	text = strings.Replace(strings.Replace(text, "chains = 1000", "chains = 500", 1), "substeps = 25", "substeps = 10", 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "kinematics.csv"), mustRead(t, "../../examples/knee-bpe/specimen1/kinematics.csv"), 0o644)
	out := t.TempDir()
	if code, o, e := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", out); code != 0 {
		t.Fatalf("run: %s %s", o, e)
	}
	var sum struct {
		MethodReport struct {
			LogEvidence *float64 `json:"log_evidence"`
		} `json:"method_report"`
	}
	json.Unmarshal(mustRead(t, filepath.Join(out, "summary.json")), &sum)
	if sum.MethodReport.LogEvidence == nil || math.IsInf(*sum.MethodReport.LogEvidence, 0) {
		t.Fatalf("no finite log evidence")
	}
	if code, o, e := kinfer(t, "analyze", out, "--predictive", "200"); code != 0 {
		t.Fatalf("analyze: %s %s", o, e)
	}
	var a struct {
		Predictive []struct {
			Output string
			MAE    float64
		}
	}
	json.Unmarshal(mustRead(t, filepath.Join(out, "analysis.json")), &a)
	if len(a.Predictive) != 5 {
		t.Fatalf("predictive %+v", a.Predictive)
	}
	for _, f := range a.Predictive {
		if !(f.MAE < 1.0) {
			t.Errorf("%s: posterior-predictive MAE %.3f ≥ 1", f.Output, f.MAE)
		}
	}
}

// For a TMCMC run, analyze reports Fig. 7: one CDF-change row per stage,
// each in [0, 1], the last (q reaching 1) smaller than the first.
func TestAnalyzeTMCMCStages(t *testing.T) {
	dir := t.TempDir()
	if code, _, e := kinfer(t, "run", "../../examples/quickstart-tmcmc/study.toml", "-o", dir); code != 0 {
		t.Fatal(e)
	}
	if code, o, e := kinfer(t, "analyze", dir, "--predictive", "50"); code != 0 {
		t.Fatal(o, e)
	}
	var a struct {
		Stages []struct {
			Mean float64 `json:"mean_cdf_rmse"`
			Max  float64 `json:"max_cdf_rmse"`
		}
	}
	var s struct {
		MethodReport struct{ Stages []any } `json:"method_report"`
	}
	json.Unmarshal(mustRead(t, filepath.Join(dir, "analysis.json")), &a)
	json.Unmarshal(mustRead(t, filepath.Join(dir, "summary.json")), &s)
	if len(a.Stages) < 2 || len(a.Stages) != len(s.MethodReport.Stages) {
		t.Fatalf("%d analysed stages, %d in the summary", len(a.Stages), len(s.MethodReport.Stages))
	}
	for _, st := range a.Stages {
		if !(st.Mean >= 0 && st.Max <= 1 && st.Mean <= st.Max) {
			t.Fatalf("stage %+v", st)
		}
	}
	if !(a.Stages[len(a.Stages)-1].Mean < a.Stages[0].Mean) {
		t.Fatalf("last stage moved the marginals more than the first: %+v", a.Stages)
	}
}

// A biased TMCMC variant says so where a user looks: a WARNING line after
// the run's table and method_report.warnings / evidence_biased in
// summary.json; the default variant has neither.
func TestBiasedVariantWarns(t *testing.T) {
	src, err := os.ReadFile("../../examples/quickstart-tmcmc/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := filepath.Abs("../../examples/quickstart/force_length.csv")
	for _, v := range []string{"betz", "bartsoen"} {
		dir := t.TempDir()
		study := strings.Replace(string(src), `variant = "bartsoen"`, `variant = "`+v+`"`, 1)
		study = strings.Replace(study, `file = "../quickstart/force_length.csv"`, `file = "`+data+`"`, 1)
		study = strings.Replace(study, "substeps = 20", "substeps = 3", 1)
		if err := os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", filepath.Join(dir, "out"))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", v, code, errs)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
		var s struct {
			MethodReport map[string]any `json:"method_report"`
		}
		json.Unmarshal(b, &s)
		warned := strings.Contains(out, "WARNING (method builtin:tmcmc): variant betz") && s.MethodReport["evidence_biased"] == true && s.MethodReport["warnings"] != nil
		if v == "betz" && !warned {
			t.Errorf("betz: no warning; stdout:\n%s\nreport %v", out, s.MethodReport["warnings"])
		}
		if v == "bartsoen" && (strings.Contains(out, "WARNING") || s.MethodReport["warnings"] != nil) {
			t.Errorf("bartsoen warned: %s", out)
		}
	}
}

// kinfer analyze --truth: the quickstart's data were made from
// truth.json (k 5200 N, eps_r 0.04), so both lie inside the central 90 %
// band. The check is independent of the analysis code: the band is
// summary.json's p05/p95 (the run's own quantiles) and the percentile the
// fraction of samples.csv's values below the truth, counted here. A truth
// far outside the prior is reported outside at percentile 1; a parameter
// without a truth is skipped; a key that is not a parameter, a missing
// file and bad JSON are errors naming the key, the file and the line.
func TestAnalyzeTruth(t *testing.T) {
	dir := t.TempDir()
	if code, _, e := kinfer(t, "run", "../../examples/quickstart/study.toml", "-o", dir); code != 0 {
		t.Fatal(e)
	}
	code, out, errs := kinfer(t, "analyze", dir, "--predictive", "50", "--truth", "../../examples/quickstart/truth.json")
	if code != 0 {
		t.Fatalf("analyze: %d %s %s", code, out, errs)
	}
	if !strings.Contains(out, "2 of 2 inside the central 90 % band") {
		t.Errorf("stdout lacks the count:\n%s", out)
	}
	type truthReport struct {
		Inside, Checked int
		Weighted        bool
		Skipped         []string
		Params          []struct {
			Name                        string
			Truth, P05, P95, Percentile float64
			Inside                      bool
		}
	}
	var a struct{ Truth truthReport }
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "analysis.json")), &a); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Params []struct {
			Name     string
			P05, P95 float64
		}
	}
	json.Unmarshal(mustRead(t, filepath.Join(dir, "summary.json")), &sum)
	rows, err := csv.NewReader(bytes.NewReader(mustRead(t, filepath.Join(dir, "samples.csv")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{"k": 5200, "eps_r": 0.04}
	if a.Truth.Inside != 2 || a.Truth.Checked != 2 || a.Truth.Weighted || len(a.Truth.Skipped) != 0 || len(a.Truth.Params) != 2 {
		t.Fatalf("truth report %+v", a.Truth)
	}
	for i, p := range a.Truth.Params {
		col := slices.Index(rows[0], p.Name)
		below := 0
		for _, r := range rows[1:] {
			if v, _ := strconv.ParseFloat(r[col], 64); v < truth[p.Name] {
				below++
			}
		}
		want := float64(below) / float64(len(rows)-1)
		s := sum.Params[i]
		if s.Name != p.Name || p.Truth != truth[p.Name] || p.P05 != s.P05 || p.P95 != s.P95 || math.Abs(p.Percentile-want) > 1e-12 || !p.Inside {
			t.Errorf("%s: %+v; want truth %g, band [%g, %g] as summary.json, percentile %g, inside", p.Name, p, truth[p.Name], s.P05, s.P95, want)
		}
	}

	// The log target at the truth, computed here from the model and Eq. 7
	// (uniform priors: −log 7000 − log 0.5), and its rank among the
	// samples' log_prior + log_likelihood.
	var at struct {
		Truth struct {
			AtTruth struct {
				Status        string
				LogPrior      float64 `json:"log_prior"`
				LogLikelihood float64 `json:"log_likelihood"`
				LogTarget     float64 `json:"log_target"`
				SamplesBelow  float64 `json:"samples_below"`
			} `json:"at_truth"`
		}
	}
	json.Unmarshal(mustRead(t, filepath.Join(dir, "analysis.json")), &at)
	data, _ := csv.NewReader(bytes.NewReader(mustRead(t, "../../examples/quickstart/force_length.csv"))).ReadAll()
	wantLL := 0.0
	y := make([]float64, 2)
	for _, r := range data[1:] {
		L, _ := strconv.ParseFloat(r[0], 64)
		f, _ := strconv.ParseFloat(r[1], 64)
		ligament.Model{RefLength: 30}.Eval([]float64{5200, 0.04}, []float64{L}, y)
		wantLL += -math.Log(10*math.Sqrt(2*math.Pi)) - (y[0]-f)*(y[0]-f)/200
	}
	wantLP := -math.Log(7000) - math.Log(0.5)
	lpCol, llCol := slices.Index(rows[0], "log_prior"), slices.Index(rows[0], "log_likelihood")
	below := 0
	for _, r := range rows[1:] {
		lp, _ := strconv.ParseFloat(r[lpCol], 64)
		ll, _ := strconv.ParseFloat(r[llCol], 64)
		if lp+ll < wantLP+wantLL {
			below++
		}
	}
	got := at.Truth.AtTruth
	if got.Status != "ok" || math.Abs(got.LogPrior-wantLP) > 1e-9 || math.Abs(got.LogLikelihood-wantLL) > 1e-9*math.Abs(wantLL) ||
		got.LogTarget != got.LogPrior+got.LogLikelihood || math.Abs(got.SamplesBelow-float64(below)/float64(len(rows)-1)) > 1e-12 {
		t.Errorf("at truth %+v; want log prior %g, log likelihood %g, %d of %d samples below", got, wantLP, wantLL, below, len(rows)-1)
	}
	if !strings.Contains(out, "log target at the truth") {
		t.Errorf("stdout lacks the log target at the truth:\n%s", out)
	}

	// k far above its posterior: outside, percentile 1; eps_r skipped.
	far := filepath.Join(t.TempDir(), "far.json")
	os.WriteFile(far, []byte(`{"k": 8900}`), 0o644)
	code, out, errs = kinfer(t, "analyze", dir, "--predictive", "50", "--truth", far)
	if code != 0 {
		t.Fatalf("analyze: %d %s %s", code, out, errs)
	}
	a.Truth = truthReport{}
	json.Unmarshal(mustRead(t, filepath.Join(dir, "analysis.json")), &a)
	if a.Truth.Inside != 0 || a.Truth.Checked != 1 || !slices.Equal(a.Truth.Skipped, []string{"eps_r"}) ||
		a.Truth.Params[0].Inside || a.Truth.Params[0].Percentile != 1 {
		t.Errorf("far truth: %+v", a.Truth)
	}
	if !strings.Contains(out, "0 of 1 inside") || !strings.Contains(out, "NO (above)") || !strings.Contains(out, "skipped (no truth given): eps_r") {
		t.Errorf("far truth stdout:\n%s", out)
	}

	for name, c := range map[string]struct{ text, want string }{
		"unknown key": {"{\"k\": 5200,\n \"kk\": 1}", `:2: "kk" is not a parameter`},
		"bad JSON":    {"{\"k\": 5200,\n\n \"eps_r\" 0.04}", ":3: invalid JSON"},
		"not number":  {`{"k": "5200"}`, `"k": value "5200" is not a number`},
		"not object":  {`[5200]`, "want a JSON object"},
	} {
		f := filepath.Join(t.TempDir(), "truth.json")
		os.WriteFile(f, []byte(c.text), 0o644)
		code, _, errs := kinfer(t, "analyze", dir, "--truth", f)
		if code == 0 || !strings.Contains(errs, c.want) || !strings.Contains(errs, f) {
			t.Errorf("%s: exit %d, stderr %q; want an error with %q naming the file", name, code, errs, c.want)
		}
	}
	missing := filepath.Join(t.TempDir(), "nope.json")
	if code, _, errs := kinfer(t, "analyze", dir, "--truth", missing); code == 0 || !strings.Contains(errs, missing) {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
	if code, out, _ := kinfer(t, "analyze", "--help"); code != 0 || !strings.Contains(out, "-truth FILE") {
		t.Errorf("--help does not document --truth: %s", out)
	}
}

// A path with a line feed is refused, escaped, before it is printed in
// any message (audit 20: "stat x" then a forged "certified:" line).
func TestInspectPathWithLineFeed(t *testing.T) {
	code, out, e := kinfer(t, "inspect", "x\ncertified:    deterministic")
	if code != 2 || !strings.Contains(e, `x\ncertified:`) || strings.Contains(out+e, "\ncertified:") {
		t.Errorf("exit %d\n%s\n%s", code, out, e)
	}
}
