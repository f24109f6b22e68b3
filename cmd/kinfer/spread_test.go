package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// kinfer analyze's "spread / prior range" for a non-uniform prior (known
// audit #5): a normal prior's support is the model's bounds (±1e6 for the
// line model), so a posterior spread was shown as 0.0 % of it. Here the
// samples are prior draws (montecarlo), so whatever the prior the
// relative spread must be 0.9: the p05–p95 spread of the prior over its
// range, which for a uniform is its support's width (0.9 of it, unchanged)
// and for a normal (q95 − q05)/0.9 (analysis.PriorRange). Tolerance 0.05:
// the sampling sd of the relative spread of 4000 normal draws is about
// 0.014 (the quantile's sd √(0.05·0.95/n)/φ(1.645) = 0.034 σ at each end).
func TestAnalyzeSpreadNormalPrior(t *testing.T) {
	dir := t.TempDir()
	p := writePriorDrawStudy(t, dir, "priorspread", 4000, "condition = 1\n")
	out := filepath.Join(dir, "out")
	if code, o, e := kinfer(t, "run", p, "-o", out, "--no-report"); code != 0 {
		t.Fatalf("run: %s %s", o, e)
	}
	if code, o, e := kinfer(t, "analyze", out); code != 0 {
		t.Fatalf("analyze: %s %s", o, e)
	}
	var a struct {
		Params []struct {
			Name          string
			PriorRange    float64 `json:"prior_range"`
			PriorRangeDef string  `json:"prior_range_def"`
			Relative      float64
		}
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "analysis.json")), &a); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		rng float64
		def string
	}{
		"a": {2, "support"},
		// 2·0.2·z(0.95)/0.9, z(0.95) = 1.6448536269514722.
		"b": {2 * 0.2 * 1.6448536269514722 / 0.9, "central-90/0.9"},
	}
	if len(a.Params) != 2 {
		t.Fatalf("params %+v", a.Params)
	}
	for _, q := range a.Params {
		w := want[q.Name]
		if math.Abs(q.PriorRange-w.rng) > 1e-9*w.rng || q.PriorRangeDef != w.def || math.Abs(q.Relative-0.9) > 0.05 {
			t.Errorf("%s: prior range %g (%s), relative %.4f; want %g (%s), ≈ 0.9", q.Name, q.PriorRange, q.PriorRangeDef, q.Relative, w.rng, w.def)
		}
	}
}

// writePriorDrawStudy writes dir/study.toml: montecarlo draws of the line
// model's y at x = 0 and 3 under a ~ uniform(0, 2), b ~ normal(2, 0.2)
// (samples draws, a prior sample), with extra method settings.
func writePriorDrawStudy(t *testing.T, dir, name string, samples int, extra string) string {
	t.Helper()
	study := fmt.Sprintf(`name = %q
seed = 1
[model]
use = "line"
[conditions]
x = [0.0, 3.0]
[prior]
a = { uniform = [0.0, 2.0] }
b = { normal = [2.0, 0.2] }
[method]
use = "montecarlo"
quantity = "y"
%smin_samples = %d
max_samples = %d
`, name, extra, samples, samples)
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
