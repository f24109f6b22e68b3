package kriging

import (
	"bytes"
	"encoding/json"
	"github.com/kinfer/kinfer/builtin/surrogate/internal/floatcode"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// twoOutputs fits order-1 Gaussian and order-0 Matérn 5/2 predictors to two
// functions on 30 scrambled Sobol sites of [0, 1]².
func twoOutputs(t testing.TB) []*Model {
	x, _ := sites(30, 2)
	y1, y2 := make([]float64, len(x)), make([]float64, len(x))
	for i, p := range x {
		y1[i] = branin2(p)
		y2[i] = math.Exp(-p[0]) + 3*p[1]
	}
	m1, err := Fit(x, y1, Options{Order: 1, Correlation: Gaussian})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Fit(x, y2, Options{Order: 0, Correlation: Matern52, EstimateNugget: true})
	if err != nil {
		t.Fatal(err)
	}
	return []*Model{m1, m2}
}

// Save → Load rebuilds predictors that give bit-identical predictions,
// MSEs and gradients (same code, same bits: Read refits at the stored θ
// and λ), and keeps the provenance.
func TestSaveLoadRoundTrip(t *testing.T) {
	ms := twoOutputs(t)
	prov := Provenance{Model: "analytic", Seed: 7, InputNames: []string{"a", "b"}, OutputNames: []string{"f", "g"}, TrainingDataSHA256: "abc"}
	path := filepath.Join(t.TempDir(), "k.json")
	if err := Save(path, ms, prov); err != nil {
		t.Fatal(err)
	}
	ls, p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Model != "analytic" || p.Seed != 7 || p.TrainingDataSHA256 != "abc" || len(ls) != 2 {
		t.Fatalf("provenance %+v, %d models", p, len(ls))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range ms {
		if ls[k].Order() != ms[k].Order() || ls[k].Correlation() != ms[k].Correlation() || !sameBits(ls[k].Theta(), ms[k].Theta()) || ls[k].Nugget() != ms[k].Nugget() {
			t.Fatalf("output %d: settings changed", k)
		}
		for range 20 {
			x := []float64{rng.Float64()*1.2 - 0.1, rng.Float64()*1.2 - 0.1}
			ga, gb, da, db := make([]float64, 2), make([]float64, 2), make([]float64, 2), make([]float64, 2)
			ya, sa, _ := ms[k].PredictGrad(x, ga, da)
			yb, sb, _ := ls[k].PredictGrad(x, gb, db)
			if math.Float64bits(ya) != math.Float64bits(yb) || math.Float64bits(sa) != math.Float64bits(sb) ||
				!sameBits(ga, gb) || !sameBits(da, db) {
				t.Fatalf("output %d at %v: ŷ %v → %v, MSE %v → %v, ∂ŷ %v → %v", k, x, ya, yb, sa, sb, ga, gb)
			}
		}
	}
	// Writing the loaded predictors again gives the same file.
	var a, b bytes.Buffer
	Write(&a, ms, prov)
	Write(&b, ls, prov)
	if a.String() != b.String() {
		t.Error("write → read → write is not the identity")
	}
}

// MeanGrad's gradient matches central differences of Mean and
// PredictGrad's gradient, for every regression order and correlation.
func TestMeanGrad(t *testing.T) {
	const h, tol = 1e-6, 1e-5 // relative to max(1, |derivative|), as TestPredictGradient
	x, _ := sites(30, 2)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = branin2(x[i])
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range allCorr {
		for order := 0; order <= 2; order++ {
			m, err := Fit(x, y, Options{Order: order, Correlation: c, Nugget: 1e-6})
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				p := []float64{rng.Float64(), rng.Float64()}
				g, gp := make([]float64, 2), make([]float64, 2)
				v, err := m.MeanGrad(p, g)
				if err != nil {
					t.Fatal(err)
				}
				yp, _, _ := m.PredictGrad(p, gp, nil)
				if math.Abs(v-yp) > 1e-9*max(1, math.Abs(yp)) { // sums in another order
					t.Errorf("%v order %d: MeanGrad %v, Predict %v", c, order, v, yp)
				}
				for k := range 2 {
					pp := append([]float64(nil), p...)
					pp[k] += h
					a, _ := m.Mean(pp)
					pp[k] -= 2 * h
					b, _ := m.Mean(pp)
					fd := (a - b) / (2 * h)
					if math.Abs(fd-g[k]) > tol*max(1, math.Abs(fd)) || math.Abs(gp[k]-g[k]) > 1e-9*max(1, math.Abs(g[k])) {
						t.Errorf("%v order %d: ∂ŷ/∂x_%d = %v, FD %v, PredictGrad %v", c, order, k, g[k], fd, gp[k])
					}
				}
			}
		}
	}
}

// Hostile or broken files are refused with a clear error before large
// allocations.
func TestReadRefusesBadFiles(t *testing.T) {
	ms := twoOutputs(t)
	var buf bytes.Buffer
	if err := Write(&buf, ms, Provenance{}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, _, err := Read(strings.NewReader(good)); err != nil {
		t.Fatalf("good file refused: %v", err)
	}
	var f fileSet
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	enc := func(g fileSet) string { b, _ := json.Marshal(g); return string(b) }
	mod := func(fn func(g *fileSet)) string {
		g := f
		g.Outputs = append([]fileOutput(nil), f.Outputs...)
		fn(&g)
		return enc(g)
	}
	y := make([]float64, 30)
	for i := range y {
		y[i] = float64(i * i)
	}
	cases := []struct{ name, file, want string }{
		{"not json", "{", "unexpected end"},
		{"unknown key", strings.Replace(good, `"format"`, `"evil": 1, "format"`, 1), "unknown field"},
		{"other format", mod(func(g *fileSet) { g.Format = "kinfer-nn-ensemble" }), "format"},
		{"newer version", mod(func(g *fileSet) { g.FormatVersion = 2 }), "format version"},
		{"huge site count", mod(func(g *fileSet) { g.Sites = 1 << 40 }), "sites, must be"},
		{"huge dimension", mod(func(g *fileSet) { g.Dim = 1 << 30 }), "coordinates, must be"},
		{"matrix budget", mod(func(g *fileSet) {
			g.Sites = MaxSites
			for len(g.Outputs) < 2*MaxCells/(MaxSites*MaxSites) {
				g.Outputs = append(g.Outputs, g.Outputs[0])
			}
		}), "correlation-matrix entries"},
		{"no output", mod(func(g *fileSet) { g.Outputs = nil }), "0 outputs"},
		{"short sites", mod(func(g *fileSet) { g.X = g.X[:len(g.X)-12] }), "base64 characters"},
		{"NaN site", mod(func(g *fileSet) { g.X = floatcode.Encode(append([]float64{math.NaN()}, make([]float64, 59)...)) }), "is NaN"},
		{"bad correlation", mod(func(g *fileSet) { g.Outputs[0].Correlation = "cubic" }), "unknown correlation"},
		{"bad order", mod(func(g *fileSet) { g.Outputs[0].Order = 3 }), "regression order 3"},
		{"θ count", mod(func(g *fileSet) { g.Outputs[0].Theta = []float64{1} }), "θ values"},
		{"negative θ", mod(func(g *fileSet) { g.Outputs[0].Theta = []float64{-1, 1} }), "need > 0"},
		{"zero nugget", mod(func(g *fileSet) { g.Outputs[0].Nugget = 0 }), "nugget"},
		{"β count", mod(func(g *fileSet) { g.Outputs[0].Beta = []float64{1} }), "β values"},
		{"edited responses", mod(func(g *fileSet) { g.Outputs[0].Y = floatcode.Encode(y) }), "edited or corrupted"},
		// null inside θ or β once read as 0.
		{"null θ", strings.Replace(enc(f), `"theta":[`, `"theta":[null,`, 1), "null"},
		{"null β", strings.Replace(enc(f), `"beta":[`, `"beta":[null,`, 1), "null"},
		{"output list bomb", strings.Replace(enc(f), `"outputs":[`, `"outputs":[`+strings.Repeat("{},", 1000), 1), "more than 1000 values"},
	}
	for _, c := range cases {
		_, _, err := Read(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	old := maxFileBytes
	maxFileBytes = 1000
	defer func() { maxFileBytes = old }()
	if _, _, err := Read(strings.NewReader(good)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("size limit: %v", err)
	}
}

// Predictors fitted on different sites cannot share a file.
func TestWriteRefusesMixedSites(t *testing.T) {
	ms := twoOutputs(t)
	x, _ := sites(31, 2)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = branin2(x[i])
	}
	m, err := Fit(x, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, []*Model{ms[0], m}, Provenance{}); err == nil {
		t.Error("mixed sites accepted")
	}
}

func BenchmarkMeanGrad30x2(b *testing.B) {
	ms := twoOutputs(b)
	g := make([]float64, 2)
	x := []float64{0.3, 0.6}
	for b.Loop() {
		ms[0].MeanGrad(x, g)
	}
}
