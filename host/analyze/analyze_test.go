package analyze

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/run"
)

// regressions groups parameters by bundle and fits Eq. 9–11: with ε_r an
// exact linear function of the attachments, Eq. 9 has R² = 1 and recovers
// the coefficients (ε_r in percent: 100·0.01 = 1 per mm); k independent of
// both gives R² ≈ 0 for Eq. 10–11.
func TestRegressionsGroupByBundle(t *testing.T) {
	names := []string{"k_A", "epsr_A", "xF_A", "yT_A", "k_B"}
	rng := rand.New(rand.NewPCG(3, 4))
	var samples [][]float64
	for i := 0; i < 2000; i++ {
		xf, yt := rng.Float64()*10-5, rng.Float64()*10-5
		samples = append(samples, []float64{5000 + 1000*rng.Float64(), 0.01*xf - 0.02*yt + 0.05, xf, yt, 1})
	}
	rs := regressions(names, samples)
	if len(rs) != 3 {
		t.Fatalf("want Eq. 9, 10, 11 for bundle A only (B has no epsr), got %d: %+v", len(rs), rs)
	}
	eq9 := rs[0]
	if eq9.Equation != "9" || math.Abs(float64(eq9.R2)-1) > 1e-12 || math.Abs(float64(eq9.Coef[0])-1) > 1e-9 || math.Abs(float64(eq9.Coef[1])+2) > 1e-9 || math.Abs(float64(eq9.Intercept)-5) > 1e-9 {
		t.Fatalf("Eq. 9: %+v", eq9)
	}
	// 2000 independent samples: R² of an unrelated regression is O(p/n).
	if rs[1].R2 > 0.01 || rs[2].R2 > 0.01 {
		t.Fatalf("Eq. 10 R² %g, Eq. 11 R² %g: want ≈ 0", rs[1].R2, rs[2].R2)
	}
}

// A skipped regression (R² NaN) and a stage without q still marshal:
// analysis.json writes null for them instead of failing.
func TestAnalysisNaNMarshals(t *testing.T) {
	a := Analysis{
		Regressions: []Regression{{Bundle: "b", Equation: "9", R2: run.F(math.NaN()), Intercept: run.F(math.NaN()), Skipped: "constant y"}},
		Stages:      []StageChange{{Stage: 1, Q: run.F(math.NaN())}},
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"r2":null`) || !strings.Contains(string(b), `"q":null`) {
		t.Errorf("NaN not written as null: %s", b)
	}
}

// Columns line up in a terminal for names with combining marks and East
// Asian wide characters (review 19).
func TestTableDisplayWidth(t *testing.T) {
	out := table([][]string{{"name", "value"}, {"e\u0301te", "1"}, {"力", "22"}, {"ab", "333"}}, 1)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if w := displayWidth(l); w != displayWidth(lines[0]) {
			t.Errorf("line %q is %d columns wide, the header %d", l, w, displayWidth(lines[0]))
		}
	}
	if displayWidth("e\u0301") != 1 || displayWidth("力") != 2 {
		t.Error("displayWidth")
	}
}
