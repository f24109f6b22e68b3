package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/montecarlo"
	"github.com/kinfer/kinfer/host/run"
)

// misraMC propagates b1 ~ normal(240, 10), b2 ~ lognormal(−7.5, 0.3)
// through NIST's Misra1a model y = b1·(1 − exp(−b2·x)) at x = 500
// (condition row 1), 2000 draws.
const misraMC = `name = "mc-misra"
seed = 1
[model]
use = "nist"
problem = "Misra1a"
[conditions]
x = [77.6, 500.0]
x2 = 0.0
[prior]
b1 = { normal = [240.0, 10.0] }
b2 = { lognormal = [-7.5, 0.3] }
[fixed]
b3 = 0.0
b4 = 0.0
b5 = 0.0
b6 = 0.0
b7 = 0.0
b8 = 0.0
b9 = 0.0
[method]
use = "montecarlo"
quantity = "y"
condition = 1
min_samples = 2000
max_samples = 2000
`

// A propagation run prints its result, the quantity of interest, after
// the table of the prior draws: mean, sd, p5, p50, p95 as summary.json's
// method_report.montecarlo has them, and whether the rule held; its
// report.html has a "Quantity of interest" section and titles the draws'
// histograms "Prior draws". The mean is checked against E[y] =
// E[b1]·(1 − E[exp(−500·b2)]) (b1, b2 independent), the expectation by
// the trapezoid rule over log b2 ~ normal(−7.5, 0.3), within 4 standard
// errors of a 2000-draw mean.
func TestPropagationShowsQuantity(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mc.toml")
	if err := os.WriteFile(p, []byte(misraMC), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := kinfer(t, "run", p, "-o", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		Report struct {
			MC montecarlo.Summary `json:"montecarlo"`
		} `json:"method_report"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "summary.json")), &sum); err != nil {
		t.Fatal(err)
	}
	mc := sum.Report.MC
	f := func(x float64) string { return num6(run.F(x)) }
	want := "quantity of interest y (condition row 1): mean " + f(mc.Mean) + ", sd " + f(mc.SD) +
		", p5 " + f(mc.Pct["p5"]) + ", p50 " + f(mc.Pct["p50"]) + ", p95 " + f(mc.Pct["p95"]) + "\n" +
		"  (2000 values, 0 failed draws; converged: " + strconv.FormatBool(mc.Converged) + "; the table above is of the prior draws)\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("the console lacks\n%s\nin\n%s", want, stdout)
	}
	if i, j := strings.Index(stdout, "b2 "), strings.Index(stdout, "quantity of interest"); i < 0 || j < i {
		t.Errorf("the quantity is not printed after the table:\n%s", stdout)
	}
	// E[exp(−500 b2)], log b2 = z ~ normal(−7.5, 0.3), over ±10 sd.
	const mu, sg, n = -7.5, 0.3, 20000
	h := 20 * sg / n
	e := 0.0
	for i := 0; i <= n; i++ {
		z := mu - 10*sg + float64(i)*h
		w := 1.0
		if i == 0 || i == n {
			w = 0.5
		}
		e += w * math.Exp(-500*math.Exp(z)) * math.Exp(-0.5*((z-mu)/sg)*((z-mu)/sg)) / (sg * math.Sqrt(2*math.Pi))
	}
	mean := 240 * (1 - e*h)
	if tol := 4 * mc.SD / math.Sqrt(2000); math.Abs(mc.Mean-mean) > tol {
		t.Errorf("mean of y %g, want E[y] = %g ± %g", mc.Mean, mean, tol)
	}
	secs, nfig := reportSections(t, filepath.Join(out, "report.html"))
	if got := strings.Join(secs, ", "); !strings.Contains(got, "Quantity of interest, Prior draws, Corner plot") || strings.Contains(got, "Posterior marginals") || nfig != 4 {
		t.Errorf("report sections %q, %d figures", got, nfig)
	}
	html := string(mustRead(t, filepath.Join(out, "report.html")))
	for _, k := range []string{"p5", "p50", "p95", "mean", "converged"} {
		if !regexp.MustCompile(`<tr><th>` + k + `</th><td class="n">[^<]+</td></tr>`).MatchString(html) {
			t.Errorf("report.html's quantity table lacks %s", k)
		}
	}
}

// The console's quantity line prints the counts whatever their Go type in
// the report (an int before JSON, a float after): a report with a
// non-finite mean printed "- values, - failed draws" (audit 4).
func TestQuantityLineCounts(t *testing.T) {
	rep := map[string]any{"montecarlo": map[string]any{"quantity": "huge", "n": 200, "failed": 0, "mean": nil, "converged": false,
		"percentiles": map[string]any{"p5": -1.5, "p50": 0.0, "p95": 1.5}}}
	lines := strings.Join(quantityLines(rep), "\n")
	if !strings.Contains(lines, "200 values, 0 failed draws") || !strings.Contains(lines, "mean -") {
		t.Errorf("lines:\n%s", lines)
	}
}

// analyze --truth on a propagation says its band is the prior draws', not
// a posterior's (audit 14: "2 of 2 inside" as if checked).
func TestAnalyzeTruthOnPropagation(t *testing.T) {
	dir := t.TempDir()
	study := string(mustRead(t, "../../examples/quickstart/study.toml"))
	study = study[:strings.Index(study, "[method]")] + "[method]\nuse = \"montecarlo\"\nquantity = \"force_N\"\nmin_samples = 500\nmax_samples = 1000\n"
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	out := filepath.Join(dir, "out")
	if code, _, e := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", out, "--no-report"); code != 0 {
		t.Fatal(e)
	}
	code, o, e := kinfer(t, "analyze", out, "--predictive", "5", "--truth", "../../examples/quickstart/truth.json")
	if code != 0 || !strings.Contains(o, "a propagation: samples.csv holds draws of the prior") {
		t.Errorf("exit %d\n%s\n%s", code, o, e)
	}
}

// A method's refusal of its problem names the study file, line and the
// setting's key (audit 21: montecarlo's condition past the last row named
// none).
func TestMethodInitErrorLocated(t *testing.T) {
	dir := t.TempDir()
	study := `name = "mc"
[model]
use = "ligament"
ref_length_mm = 30.0
[conditions]
length_mm = [29.0, 31.0]
[prior]
k = { uniform = [2000.0, 9000.0] }
eps_r = { uniform = [-0.2, 0.3] }
[method]
use = "montecarlo"
quantity = "force_N"
condition = 2
`
	p := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(p, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, e := kinfer(t, "run", p, "-o", filepath.Join(dir, "o"), "--no-report")
	if code == 0 || !strings.Contains(e, `s.toml:13: key "method.condition": method montecarlo: init: montecarlo: condition 2, but the study has 2 condition rows`) {
		t.Fatalf("exit %d: %s", code, e)
	}
}
