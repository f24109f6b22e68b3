package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/study"
)

// writeRun writes a run directory by hand: summary.json with the given
// method and method report, samples.csv with n rows of two parameters.
func writeRun(t *testing.T, method, report string, n int) string {
	t.Helper()
	dir := t.TempDir()
	sum := fmt.Sprintf(`{"study": "hand", "study_file": "/nonexistent/study.toml", "model": "builtin:ligament", "method": "builtin:%s",
  "seed": 7, "workers": 1, "evaluations": 10, "failed_evaluations": 0, "samples": %d,
  "params": [{"name": "k", "unit": "N", "mean": 1, "sd": null, "p05": 1, "p50": 1, "p95": 1},
             {"name": "eps_r", "mean": 0.1, "sd": 0.01, "p05": 0.09, "p50": 0.1, "p95": 0.11}],
  "best": {"theta": {"k": 1.5, "eps_r": 0.1}, "log_target": -3, "log_prior": -1, "log_likelihood": -2},
  "method_report": %s, "complete": false, "error": "stopped <by> a test"}`, method, n, report)
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("k,eps_r,log_prior,log_likelihood\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,%g,-1,-2\n", i, 0.1+0.001*float64(i%17))
	}
	if err := os.WriteFile(filepath.Join(dir, "samples.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func titles(r *Report) []string {
	var out []string
	for _, s := range r.Sections {
		out = append(out, s.Title)
	}
	return out
}

// The sections follow the method report: a TMCMC run gets the posterior,
// the corner plot and its stages; a Metropolis run traces per chain; a
// Levenberg–Marquardt run its loss per start and no posterior. A study
// that no longer loads leaves a note instead of the fit (no runtime here:
// no reload at all).
func TestSectionsPerMethod(t *testing.T) {
	stages := `{"log_evidence": -5.5, "log_evidence_se": 0.1, "stages": [
	  {"q": 0.01, "acceptance_rate": 0.3, "log_S": -2, "cdf_rmse": [0.2, 0.1]},
	  {"q": 0.2, "acceptance_rate": 0.25, "log_S": -2.5, "cdf_rmse": [0.1, null]},
	  {"q": 1, "acceptance_rate": 0.22, "log_S": -1, "cdf_rmse": [0.05, 0.02]}]}`
	cases := []struct {
		method, report string
		n              int
		want           []string
		figures        int
	}{
		{"tmcmc", stages, 300, []string{"Posterior marginals", "Corner plot", "TMCMC stage convergence"}, 4},
		{"metropolis", `{"chains": 3, "rhat": [1.01, 1.02], "ess": [100, 200]}`, 300, []string{"Posterior marginals", "Corner plot", "MCMC traces"}, 5},
		{"levmar", `{"trace_cost": [[10, 1, 0.1], [20, 2, 0.2, 0.1]]}`, 2, []string{"Optimiser loss"}, 1},
		{"adam", `{"trajectory": [{"iteration": [0, 10, 20], "log_target": [-50, -10, -9]}]}`, 1, []string{"Optimiser loss"}, 1},
		{"anneal", `{"trajectory": {"iteration": [0, 10, 20], "evaluations": [1, 100, 200], "best_log_target": [-50, -10, -9]}}`, 1, []string{"Optimiser loss"}, 1},
	}
	for _, c := range cases {
		r, err := Build(context.Background(), writeRun(t, c.method, c.report, c.n), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if got := strings.Join(titles(r), ", "); got != strings.Join(c.want, ", ") {
			t.Errorf("%s: sections %q, want %q", c.method, got, strings.Join(c.want, ", "))
		}
		if n := len(r.Figures()); n != c.figures {
			t.Errorf("%s: %d figures, want %d", c.method, n, c.figures)
		}
		var b strings.Builder
		if err := r.HTML(&b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		for _, want := range []string{"STOPPED (partial results)", "stopped &lt;by&gt; a test", `data-figures="` + fmt.Sprint(c.figures) + `"`, "/nonexistent/study.toml"} {
			if !strings.Contains(html, want) {
				t.Errorf("%s: report lacks %q", c.method, want)
			}
		}
		if strings.Contains(html, "NaN") {
			t.Errorf("%s: NaN in the report (a null sd must read —)", c.method)
		}
	}
}

// Metropolis traces read row i as chain i mod chains: with 3 chains and
// 300 rows each trace has 100 steps; MaxSamples thins them.
func TestTracesThinned(t *testing.T) {
	dir := writeRun(t, "metropolis", `{"chains": 3}`, 300)
	r, err := Build(context.Background(), dir, Options{MaxSamples: 60})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Sections {
		if s.Title == "MCMC traces" && !strings.Contains(s.Note, "3 of the 3 chains") || s.Title == "MCMC traces" && !strings.Contains(s.Note, "(20 of 100 steps drawn)") {
			t.Errorf("traces note %q", s.Note)
		}
	}
}

// Not a run directory: an error naming it.
func TestNotARun(t *testing.T) {
	dir := t.TempDir()
	if _, err := Build(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "run's output directory") {
		t.Errorf("err %v", err)
	}
	// A killed run's folder (run.json still "running", a checkpoint):
	// the error says the run did not finish and how to resume it.
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"state":"running","pid":12345,"study_file":"/s.toml","updated":"2026-11-27T08:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte(`{}`), 0o644)
	if _, err := Build(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "has not finished") || !strings.Contains(err.Error(), "kinfer run --resume "+dir) {
		t.Errorf("killed run: %v", err)
	}
	// Stopped with no checkpoint: run it again.
	os.Remove(filepath.Join(dir, "checkpoint.json"))
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"state":"stopped","study_file":"/s.toml","error":"interrupted"}`), 0o644)
	if _, err := Build(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "kinfer run /s.toml -o "+dir) {
		t.Errorf("stopped run: %v", err)
	}
}

// After kinfer analyze --truth, the table has each parameter's truth and
// its posterior percentile, and the histograms' note says where the truth
// is drawn.
func TestTruthFromAnalysis(t *testing.T) {
	dir := writeRun(t, "tmcmc", `{}`, 100)
	an := `{"params": [{"name": "k", "relative": 0.25}], "truth": {"params": [{"name": "k", "truth": 42.5, "percentile": 0.375}, {"name": "eps_r", "truth": 0.1, "percentile": 0.5}]}}`
	if err := os.WriteFile(filepath.Join(dir, "analysis.json"), []byte(an), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<th>truth percentile (%)</th>", "<th>spread/prior range (%)</th>", ">42.5<", ">37.5<", ">25<", "The solid green line is the true value"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// A truth far outside the samples is not drawn (it stretched the
	// axis until the histogram vanished, audit 17), and the report says so.
	an = strings.Replace(an, `"truth": 42.5`, `"truth": 1e12`, 1)
	if err := os.WriteFile(filepath.Join(dir, "analysis.json"), []byte(an), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err = Build(context.Background(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "the truth of k, 1e+12, lies far outside its samples' range") || !strings.Contains(b.String(), "lies far outside its samples") {
		t.Errorf("no note of the truth out of range: %q", r.Notes)
	}
}

// One sample at 1e308 and one at −1e308 in a column (hi − lo overflows
// float64): gonum/plot's tick labelling used to loop for ever on that
// axis, and kinfer report hung. The histogram, the corner plot and the
// trace of k are left out with a note; eps_r's are drawn; the report is
// written in bounded time.
func TestSamplesBeyondFloat64Span(t *testing.T) {
	dir := writeRun(t, "metropolis", `{"chains": 2, "rhat": [1.01, 1.02]}`, 40)
	p := filepath.Join(dir, "samples.csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[6] = "1e308" + lines[6][strings.Index(lines[6], ","):]
	lines[7] = "-1e308" + lines[7][strings.Index(lines[7], ","):]
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var r *Report
	var html string
	go func() {
		defer close(done)
		if r, err = Build(context.Background(), dir, Options{}); err != nil {
			return
		}
		var sb strings.Builder
		err = r.HTML(&sb)
		html = sb.String()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the report still runs after 60 s (a hang in gonum/plot's tick labelling)")
	}
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"histogram of k: posterior of k: the x axis", "corner plot: k: the x axis", "trace of k: trace of k: the y axis", "wider than a float64 can hold"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	var names []string
	for _, f := range r.Figures() {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "posterior-eps_r trace-eps_r" {
		t.Errorf("figures %q, want eps_r's histogram and trace only", got)
	}
	if !strings.Contains(html, "wider than a float64 can hold") || !strings.Contains(html, `data-figures="2"`) {
		t.Error("report.html lacks the note or has another number of figures")
	}
}

// paramHeader is the header row of report.html's parameter table, and the
// cells of the row of parameter name.
func paramHeader(t *testing.T, r *Report, name string) (header, row []string) {
	t.Helper()
	var b strings.Builder
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	i := strings.Index(html, `<h2 id="parameters">`)
	j := strings.Index(html[i:], "</table>")
	if i < 0 || j < 0 {
		t.Fatal("no parameter table")
	}
	cell := regexp.MustCompile(`<t[hd][^>]*>([^<]*)</t[hd]>`)
	for _, line := range strings.Split(html[i:i+j], "\n") {
		var cells []string
		for _, m := range cell.FindAllStringSubmatch(line, -1) {
			cells = append(cells, m[1])
		}
		switch {
		case len(cells) > 0 && cells[0] == "parameter":
			header = cells
		case len(cells) > 0 && cells[0] == name:
			row = cells
		}
	}
	return header, row
}

// Only lists that are per parameter become columns of the parameter
// table: Metropolis's rhat, ess and proposal_sd, and a plugin's list named
// *_per_param — not levmar's per-start cost, evaluations_per_start,
// failures_per_start and iterations with starts = 2 = d, nor
// acceptance_per_chain with 2 chains. A least-squares run shows its
// statistics.standard_errors (by name, whatever their order), marked at a
// bound; with [transform] they are in the method's x and are not shown
// under θ's names.
func TestParamTableColumns(t *testing.T) {
	lm := `{"cost": [22.9, 22.9], "evaluations_per_start": [21, 14], "failures_per_start": [0, 0], "iterations": [13, 13],
	  "exit_reason": ["ftol", "ftol"], "best_start": 0, "trace_cost": [[30, 22.9], [40, 22.9]],
	  "statistics": {"params": ["eps_r", "k"], "standard_errors": [0.0009987, 78.78], "at_bound": ["eps_r"]}}`
	cases := []struct {
		method, report, summaryExtra string
		n                            int
		header                       string
		k                            string // k's row
	}{
		{"levmar", lm, "", 2, "parameter unit mean sd p05 p50 p95 best standard error", "k N 1 — 1 1 1 1.5 78.78"},
		{"levmar", lm, "", 1, "parameter unit value best standard error", "k N 1 1.5 78.78"},
		{"metropolis", `{"chains": 2, "acceptance_per_chain": [0.3, 0.25], "rhat": [1.01, 1.02], "ess": [100, 200], "proposal_sd": [0.5, 0.01], "other": [1, 2], "bias_per_param": [0.5, 0.25]}`,
			"", 300, "parameter unit mean sd p05 p50 p95 best bias_per_param ess proposal_sd rhat", "k N 1 — 1 1 1 1.5 0.5 100 0.5 1.01"},
	}
	for _, c := range cases {
		r, err := Build(context.Background(), writeRun(t, c.method, c.report, c.n), Options{})
		if err != nil {
			t.Fatal(err)
		}
		header, row := paramHeader(t, r, "k")
		if got := strings.Join(header, " "); got != c.header {
			t.Errorf("%s, %d samples: header %q, want %q", c.method, c.n, got, c.header)
		}
		if got := strings.Join(row, " "); got != c.k {
			t.Errorf("%s, %d samples: k's row %q, want %q", c.method, c.n, got, c.k)
		}
		if c.method == "levmar" {
			if _, eps := paramHeader(t, r, "eps_r"); !strings.HasSuffix(strings.Join(eps, " "), "0.0009987 (at a bound)") {
				t.Errorf("eps_r's row %q: want its standard error marked at a bound", eps)
			}
		}
	}
	// [transform] k = "log": k's standard error is that of log k.
	dir := writeRun(t, "levmar", lm, 2)
	p := filepath.Join(dir, "summary.json")
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"method_report"`, `"transform": {"transforms": [{"kind": "log", "params": ["k"]}], "x_bounds": {"k": [7.6, 9.1]}, "note": "x"}, "method_report"`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, row := paramHeader(t, r, "k"); strings.Join(row, " ") != "k N 1 — 1 1 1 1.5 —" {
		t.Errorf("transformed k's row %q: want no standard error", row)
	}
	var sb strings.Builder
	r.HTML(&sb)
	if !strings.Contains(sb.String(), "standard errors of k are not shown") {
		t.Error("no note on the transformed parameter's standard error")
	}
	// With the run's delta-method standard error of θ, that is shown.
	b = []byte(strings.Replace(string(b), `"note": "x"}`, `"note": "x", "standard_errors_theta": {"k": 78.5, "eps_r": 0.0009987}}`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err = Build(context.Background(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, row := paramHeader(t, r, "k"); strings.Join(row, " ") != "k N 1 — 1 1 1 1.5 78.5 (delta method)" {
		t.Errorf("transformed k's row %q: want the delta-method standard error", row)
	}
}

// The prior curve is the prior truncated to the model's bounds, as the
// run samples it (Truncate's mass): the ligament's k ∈ [2000, 12000] with
// k ~ normal(2000, 1000) holds half the normal's mass, so its density at
// the bound is 2·φ(0)/1000 (twice the untruncated height), and 0 below
// it; eps_r ~ uniform(−0.2, 0.3) inside eps_r's bounds [−0.5, 0.4] is
// not cut (density 2). Each density integrates to 1 over the interval it
// is drawn on (trapezoid rule, 10⁵ panels).
func TestTruncatedPrior(t *testing.T) {
	const tol = 1e-9
	mustD := func(d prior.Dist, err error) prior.Dist {
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// lognormal(0, 1) in [1, 100]: mass Φ(ln 100) − Φ(0).
	lnMass := 0.5*math.Erfc(-math.Log(100)/math.Sqrt2) - 0.5
	cases := []struct {
		d              prior.Dist
		p              abi.Param
		lo, hi         float64
		at, want, zero float64
	}{
		{mustD(prior.NewNormal(2000, 1000)), abi.Param{Name: "k", Lower: 2000, Upper: 12000}, 2000, 12000, 2000, 2 / math.Sqrt(2*math.Pi) / 1000, 1999},
		{mustD(prior.NewUniform(-0.2, 0.3)), abi.Param{Name: "eps_r", Lower: -0.5, Upper: 0.4}, -0.2, 0.3, 0, 2, 0.31},
		{mustD(prior.NewUniform(-0.2, 0.3)), abi.Param{Name: "eps_r", Lower: -0.1, Upper: 0.4}, -0.1, 0.3, 0, 2.5, -0.11},
		{mustD(prior.NewLogNormal(0, 1)), abi.Param{Name: "c", Lower: 1, Upper: 100}, 1, 100, 1, 1 / math.Sqrt(2*math.Pi) / lnMass, 0.99},
	}
	for _, c := range cases {
		d := c.d
		f, lo, hi, _, err := truncatedPrior(d, c.p)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s in [%g, %g]: drawn over [%g, %g], want [%g, %g]", d, c.p.Lower, c.p.Upper, lo, hi, c.lo, c.hi)
		}
		if got := f(c.at); math.Abs(got-c.want) > tol*c.want {
			t.Errorf("%s in [%g, %g]: density at %g is %g, want %g", d, c.p.Lower, c.p.Upper, c.at, got, c.want)
		}
		if got := f(c.zero); got != 0 {
			t.Errorf("%s in [%g, %g]: density at %g (outside) is %g, want 0", d, c.p.Lower, c.p.Upper, c.zero, got)
		}
		const n = 100000
		h := (hi - lo) / n
		area := (f(lo) + f(hi)) / 2
		for i := 1; i < n; i++ {
			area += f(lo + float64(i)*h)
		}
		if area *= h; math.Abs(area-1) > 1e-6 {
			t.Errorf("%s in [%g, %g]: area %g, want 1 ± 1e-6", d, c.p.Lower, c.p.Upper, area)
		}
	}
}

// A propagation run (montecarlo) shows its result: a "Quantity of
// interest" section with the statistics of method_report.montecarlo as a
// table (percentiles in order p5 … p95) and its histogram, before the
// histograms of its draws, titled as prior draws, not a posterior.
func TestQuantityOfInterest(t *testing.T) {
	mc := `{"montecarlo": {"quantity": "force_N", "condition": 1, "n": 300, "failed": 2, "converged": true,
	  "rule_largest_relative_deviation": 0.0052, "mean": 264.355, "sd": 301.749, "cv_percent": 114.1, "min": 0, "max": 1540.13,
	  "percentiles": {"p10": 0, "p25": 0, "p5": 0, "p50": 141.682, "p75": 495.744, "p90": 715.894, "p95": 835.945},
	  "span_10_90": 715.894, "histogram_edges": [0, 500, 1000, 1540.13], "histogram_counts": [226, 70, 4], "values": [1, 2]}}`
	r, err := Build(context.Background(), writeRun(t, "montecarlo", mc, 300), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(titles(r), ", "), "Quantity of interest, Prior draws, Corner plot"; got != want {
		t.Errorf("sections %q, want %q", got, want)
	}
	var names []string
	for _, f := range r.Figures() {
		names = append(names, f.Name+": "+f.Title)
	}
	if got := strings.Join(names, "; "); !strings.HasPrefix(got, "quantity: quantity of interest: force_N; posterior-k: prior draws of k; posterior-eps_r: prior draws of eps_r") {
		t.Errorf("figures %q", got)
	}
	var b strings.Builder
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	i := strings.Index(html, `<h2 id="quantity-of-interest">`)
	if i < 0 {
		t.Fatal("no Quantity of interest section")
	}
	sec := html[i : i+strings.Index(html[i:], "</table>")]
	rows := regexp.MustCompile(`<tr><th>([^<]*)</th><td class="n">([^<]*)</td></tr>`).FindAllStringSubmatch(sec, -1)
	var got []string
	for _, m := range rows {
		got = append(got, m[1]+"="+m[2])
	}
	want := "quantity=force_N condition row=1 values=300 failed draws=2 converged=true (largest relative deviation of the stopping rule 0.0052) " +
		"mean=264.355 sd=301.749 cv %=114.1 min=0 max=1540.13 p5=0 p10=0 p25=0 p50=141.682 p75=495.744 p90=715.894 p95=835.945 span p10–p90=715.894"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("quantity table\n %s\nwant\n %s", g, want)
	}
	if strings.Contains(html, "Posterior marginals") {
		t.Error("a propagation run's draws titled as posterior marginals")
	}
	// No "best point" of prior draws (a tie among all of them with
	// uniform priors and no data; audit 19).
	if strings.Contains(html, "the dashed line is the draw") || strings.Contains(html, "best point") {
		t.Error("a propagation run shows a best point")
	}
}

// samples.csv as a spreadsheet saves it — a byte-order mark, every field
// quoted — is read as kinfer analyze reads it: the histograms are drawn,
// with no "no column" note.
func TestSamplesQuotedWithBOM(t *testing.T) {
	dir := writeRun(t, "tmcmc", `{}`, 50)
	p := filepath.Join(dir, "samples.csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var q strings.Builder
	q.WriteString("\uFEFF")
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = `"` + fields[i] + `"`
		}
		q.WriteString(strings.Join(fields, ",") + "\r\n")
	}
	if err := os.WriteFile(p, []byte(q.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "samples.csv") {
			t.Errorf("note %q", n)
		}
	}
}

// Figure file names: names that map to the same safe name, or differ only
// in case, get distinct files; a long name is cut with a hash of the whole
// (audit 4: "a/b" and "a_b" overwrote each other, a 301-byte name failed
// the command with "file name too long").
func TestFigureFileNames(t *testing.T) {
	used := map[string]bool{}
	got := []string{fileName("posterior-a/b", used), fileName("posterior-a_b", used), fileName("posterior-A_B", used), fileName("posterior-a b", used)}
	want := []string{"posterior-a_b", "posterior-a_b-2", "posterior-A_B-3", "posterior-a_b-4"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("name %d: %q, want %q", i, got[i], want[i])
		}
	}
	long1, long2 := "posterior-"+strings.Repeat("é", 200)+"1", "posterior-"+strings.Repeat("é", 200)+"2"
	a, b := fileName(long1, used), fileName(long2, used)
	if len(a) > maxFileName || len(b) > maxFileName || a == b || !utf8.ValidString(a) {
		t.Errorf("long names: %q (%d bytes), %q", a, len(a), b)
	}
}

// The report shows the warnings kinfer run prints, not only the method's:
// a sampler's run under [transform] is not the posterior of θ, and a
// prior the bounds cut (audit 6: report.html said neither).
func TestReportShowsRunWarnings(t *testing.T) {
	dir := writeRun(t, "metropolis", `{"chains": 3, "warnings": ["the method's own"]}`, 50)
	p := filepath.Join(dir, "summary.json")
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"complete": false`, `"complete": false, "prior_warnings": ["k: the bounds keep 0.6 % of its prior"],
  "transform": {"transforms": [], "x_bounds": {}, "note": "the draws are not the posterior of theta"}`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var h strings.Builder
	if err := r.HTML(&h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"WARNING: (method builtin:metropolis) the method&#39;s own",
		"WARNING: ([prior]) k: the bounds keep 0.6 % of its prior",
		"WARNING: ([transform] with the sampler builtin:metropolis) the draws are not the posterior of theta",
	} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A posterior narrow beside its magnitude (audit 8: 100000.23 ± 0.16 was
// shown as mean, p05, p50, p95 and best all "100000"): the location
// columns get the digits that resolve the sd, the sd keeps 6.
func TestParamTableNarrowPosterior(t *testing.T) {
	dir := writeRun(t, "metropolis", `{"chains": 2}`, 300)
	p := filepath.Join(dir, "summary.json")
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"mean": 1, "sd": null, "p05": 1, "p50": 1, "p95": 1`,
		`"mean": 100000.228, "sd": 0.158741, "p05": 99999.962, "p50": 100000.231, "p95": 100000.484`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, row := paramHeader(t, r, "k"); !strings.HasPrefix(strings.Join(row, " "), "k N 100000.23 0.158741 99999.96 100000.23 100000.48") {
		t.Errorf("k's row %q", row)
	}
}

// A stopped report writes nothing half (audit 10: SIGTERM left a
// .report.html.tmp-* file and 4 of 10 figures): with its context
// cancelled, Write fails leaving no file and WriteFigures says how many
// figures it wrote.
func TestInterruptedReportLeavesNothing(t *testing.T) {
	dir := writeRun(t, "metropolis", `{"chains": 2}`, 300)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by SIGTERM"))
	out := filepath.Join(t.TempDir(), "r.html")
	if _, _, err := Write(ctx, dir, out, Options{}); err == nil || !strings.Contains(err.Error(), "interrupted by SIGTERM") {
		t.Errorf("Write: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
	r, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	figs := filepath.Join(t.TempDir(), "figs")
	files, err := r.WriteFigures(ctx, figs)
	if err == nil || len(files) != 0 || !strings.Contains(err.Error(), fmt.Sprintf("0 of the %d figures written", len(r.Figures()))) {
		t.Errorf("WriteFigures: %v, %d files", err, len(files))
	}
}

// A constant quantity of interest (every edge the same) has no histogram,
// and the section says it is constant (review 11: a note about unordered
// edges with its prefix three times).
func TestQuantityOfInterestConstant(t *testing.T) {
	mc := `{"montecarlo": {"quantity": "force_N", "n": 300, "failed": 0, "converged": true, "mean": -1.25, "sd": 0, "min": -1.25, "max": -1.25,
	  "percentiles": {"p5": -1.25, "p50": -1.25, "p95": -1.25}, "span_10_90": 0, "histogram_edges": [-1.25, -1.25, -1.25], "histogram_counts": [300, 0]}}`
	r, err := Build(context.Background(), writeRun(t, "montecarlo", mc, 300), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Sections {
		if s.Title == "Quantity of interest" && (len(s.Figures) != 0 || !strings.Contains(s.Note, "It is constant, -1.25 at every draw: no histogram.")) {
			t.Errorf("section %+v", s)
		}
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "quantity of interest") {
			t.Errorf("note %q", n)
		}
	}
}

// report.html holds no raw control character from a method report or a
// record (audit 11: ESC and BEL from a plugin's report keys and warnings).
func TestReportHTMLEscapesControls(t *testing.T) {
	dir := writeRun(t, "metropolis", `{"chains": 2, "warnings": ["w\u001b[31mRED"], "\u001b]0;pwned\u0007KEY": "\u001b]0;pwned\u0007VAL"}`, 300)
	out := filepath.Join(t.TempDir(), "r.html")
	if _, _, err := Write(context.Background(), dir, out, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(b, "\x1b\x07") || !bytes.Contains(b, []byte(`w\x1b[31mRED`)) {
		t.Errorf("report.html holds raw controls, or not the escaped warning")
	}
}

// The corner plot's caption counts the drawn samples against the run's
// (audit 12: "2000 of 2000 samples" for a run of 32 000).
func TestCornerCaptionCountsRun(t *testing.T) {
	r, err := Build(context.Background(), writeRun(t, "metropolis", `{"chains": 2}`, 300), Options{MaxSamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range r.Figures() {
		if f.Name == "corner" {
			found = true
			if f.Title != "corner plot (100 of 300 samples)" {
				t.Errorf("caption %q", f.Title)
			}
		}
	}
	if !found {
		t.Error("no corner plot")
	}
}

// A dataset's observed outputs beyond MaxOutputs are not drawn, and the
// Model fit note says which (audit 19: 24 of 36 left out silently).
func TestFitOutputsCutSaid(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("length_mm,force_N,strain\n30,0,0\n31,150,0.033\n32,400,0.066\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(`name = "two"
[model]
use = "ligament"
ref_length_mm = 30.0
[[data]]
name = "d"
file = "d.csv"
[[likelihood]]
use = "gaussian"
data = "d"
sigma = { force_N = 10.0, strain = 0.01 }
[prior]
k = { uniform = [2000.0, 9000.0] }
eps_r = { uniform = [-0.2, 0.3] }
[method]
use = "metropolis"
`), 0o644)
	s, err := study.Load(context.Background(), filepath.Join(dir, "study.toml"), study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := writeRun(t, "metropolis", `{}`, 50)
	var smp strings.Builder
	smp.WriteString("k,eps_r,log_prior,log_likelihood\n")
	for i := range 50 {
		fmt.Fprintf(&smp, "%d,0.03,-1,-2\n", 5000+i)
	}
	os.WriteFile(filepath.Join(run, "samples.csv"), []byte(smp.String()), 0o644)
	r, err := Build(context.Background(), run, Options{Study: s, MaxOutputs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "At most 1 outputs a dataset are drawn: d: the first 1 of its 2 observed outputs (not drawn: strain)") {
		t.Errorf("no note of the outputs not drawn: %q", r.Notes)
	}
}
