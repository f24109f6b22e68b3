package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWearMonteCarlo: a CI-sized version of examples/wear-sim/mc-all.toml
// (a propagation study: no data, no likelihood, quantity wear_total_mm3;
// elastic-foundation contact on 2 mm cells instead of the surrogate, 16 to
// 40 simulations in batches of 8) runs through the host with 2 workers,
// then again with 1 worker: the montecarlo method stops by its rule, the
// wear values are identical whatever the number of workers, and they lie
// in the range of the Table 1 extremes (30–46 mm³,
// examples/wear-sim/README.md).
func TestWearMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("wear simulations: seconds each")
	}
	b, err := os.ReadFile("../../examples/wear-sim/mc-all.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{{`contact = "surrogate"`, `contact = "ef"`}, {"cell_mm = 1.0", "cell_mm = 2.0"}, {"batch = 50", "batch = 8"}, {"min_samples = 1000", "min_samples = 16\nmax_samples = 40"}} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("mc-all.toml lacks %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "mc.toml"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	var vals [2][]float64
	for i, w := range []string{"2", "1"} {
		dir := filepath.Join(tmp, "r"+w)
		code, out, e := kinfer(t, "run", filepath.Join(tmp, "mc.toml"), "-o", dir, "--workers", w)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, e)
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Report struct {
				MC struct {
					N         int                `json:"n"`
					Converged bool               `json:"converged"`
					Pct       map[string]float64 `json:"percentiles"`
					Values    []float64          `json:"values"`
				} `json:"montecarlo"`
			} `json:"method_report"`
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		m := sum.Report.MC
		if !m.Converged || m.N < 16 || len(m.Values) != m.N || m.Pct["p10"] > m.Pct["p90"] {
			t.Fatalf("workers %s: %+v", w, m)
		}
		for _, v := range m.Values {
			if v < 29 || v > 47 {
				t.Errorf("wear %g mm³ outside the Table 1 extremes", v)
			}
		}
		vals[i] = m.Values
	}
	if len(vals[0]) != len(vals[1]) {
		t.Fatalf("%d values with 2 workers, %d with 1", len(vals[0]), len(vals[1]))
	}
	for i := range vals[0] {
		if vals[0][i] != vals[1][i] {
			t.Fatalf("value %d: %g with 2 workers, %g with 1", i, vals[0][i], vals[1][i])
		}
	}
}
