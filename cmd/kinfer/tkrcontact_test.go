package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTkrContactDesign: the README's command for examples/tkr-contact
// (kinfer design on a Hammersley design over the pose offsets) runs, every
// point evaluates, and the columns are the documented ones; the design's
// first point (the box's lower corner: x −5 mm, y −0.2 mm, β −10°, …) is
// deep in contact on both sides.
func TestTkrContactDesign(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	code, out, e := kinfer(t, "design", "../../examples/tkr-contact/design.toml", "-o", dir, "--n", "16", "--design", "hammersley", "--workers", "2")
	if code != 0 || !strings.Contains(out, "done — 16 of 16 hammersley points (ok 16)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, e)
	}
	f, err := os.Open(filepath.Join(dir, "design.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 17 || !strings.HasPrefix(strings.Join(rows[0], ","), "point,status,x0_mm,y0_mm,z0_mm,alpha0_deg,beta0_deg,gamma0_deg,dataset,x_mm,") {
		t.Fatalf("design.csv: %d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, n := range rows[0] {
		col[n] = i
	}
	for _, n := range []string{"med_Fy_N", "lat_Fy_N"} {
		v, err := strconv.ParseFloat(rows[1][col[n]], 64)
		if err != nil || !(v > 1000) {
			t.Errorf("first point %s = %q", n, rows[1][col[n]])
		}
	}
}

// TestTkrContactIdentify: examples/tkr-contact/study.toml (Levenberg–
// Marquardt on synthetic loads from E = 400 MPa, y0 = −0.010 mm, σ = 5 N)
// recovers the truth within 3 standard errors, with a residual variance
// near 1 (the noise the data were made with).
func TestTkrContactIdentify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, out, e := kinfer(t, "run", "../../examples/tkr-contact/study.toml", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, e)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		MethodReport struct {
			Best struct {
				Theta []float64 `json:"theta"`
			} `json:"best"`
			Statistics struct {
				SE  []float64 `json:"standard_errors"`
				Var float64   `json:"residual_variance"`
			} `json:"statistics"`
		} `json:"method_report"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r := s.MethodReport
	truth := []float64{400, -0.010}
	if len(r.Best.Theta) != 2 || len(r.Statistics.SE) != 2 {
		t.Fatalf("method_report: %+v", r)
	}
	for i, tv := range truth {
		if math.Abs(r.Best.Theta[i]-tv) > 3*r.Statistics.SE[i] {
			t.Errorf("param %d: %g ± %g, truth %g", i, r.Best.Theta[i], r.Statistics.SE[i], tv)
		}
	}
	if r.Statistics.Var < 0.5 || r.Statistics.Var > 2 {
		t.Errorf("residual variance %g", r.Statistics.Var)
	}
}
