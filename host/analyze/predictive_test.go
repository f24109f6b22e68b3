package analyze

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/study"
)

// The posterior-predictive mean evaluated in chunks of samples (bounded
// memory for large datasets) has the bits of one evaluation of them all.
func TestPredictiveChunksSameBits(t *testing.T) {
	s, err := study.Load(context.Background(), "../../examples/quickstart/study.toml", study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var samples [][]float64
	for i := range 30 {
		samples = append(samples, []float64{4000 + 50*float64(i), 0.02 + 0.001*float64(i%7)})
	}
	whole, n1, err := Predictive(context.Background(), s, samples, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	old := maxPredictiveValues
	maxPredictiveValues = 1 // one sample a chunk
	defer func() { maxPredictiveValues = old }()
	chunked, n2, err := Predictive(context.Background(), s, samples, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	maxPredictiveValues = old
	// The memory budget chunks too (audit 11): 41 rows × 2 outputs ×
	// 24 bytes × 6 is one sample a chunk at a budget of 11 808 bytes.
	// One sample's outputs beyond the sixth of the budget: refused, naming
	// the flag (audit 13).
	if _, _, err := Predictive(context.Background(), s, samples, 0, 1, 41*2*24*6-6); err == nil || !strings.Contains(err.Error(), "raise --memory-budget") {
		t.Errorf("one sample over the budget: %v", err)
	}
	byBudget, n3, err := Predictive(context.Background(), s, samples, 0, 1, 41*2*24*6)
	if err != nil || n3 != n1 || math.Float64bits(byBudget[0].MAE) != math.Float64bits(whole[0].MAE) {
		t.Errorf("chunked by the budget: %d samples, %v, %v", n3, byBudget, err)
	}
	if n1 != n2 || len(whole) != len(chunked) || len(whole) == 0 {
		t.Fatalf("used %d and %d samples, %d and %d fits", n1, n2, len(whole), len(chunked))
	}
	for i := range whole {
		if math.Float64bits(whole[i].MAE) != math.Float64bits(chunked[i].MAE) || math.Float64bits(whole[i].RMSE) != math.Float64bits(chunked[i].RMSE) {
			t.Errorf("fit %d: %+v whole, %+v in chunks", i, whole[i], chunked[i])
		}
	}
}

// A study without observations (a propagation's [conditions]) is not
// evaluated for a fit it cannot have (docs 24: the wear study's 1000
// evaluations, 75 s, were thrown away).
func TestPredictiveNothingObserved(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/s.toml"
	text := "name = \"mc\"\n[model]\nuse = \"ligament\"\nref_length_mm = 30.0\n[conditions]\nlength_mm = [29.0, 31.0]\n[prior]\nk = { uniform = [2000.0, 9000.0] }\neps_r = { uniform = [-0.2, 0.3] }\n[method]\nuse = \"montecarlo\"\nquantity = \"force_N\"\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(context.Background(), p, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fits, used, err := Predictive(context.Background(), s, [][]float64{{4000, 0.02}, {5000, 0.03}}, 0, 1, 0)
	if err != nil || len(fits) != 0 || used != 0 {
		t.Errorf("fits %v, %d samples evaluated, err %v: want none", fits, used, err)
	}
}

// A dataset without observations after one with them leaves the count of
// samples evaluated as it was (review 25: it reset it to 0).
func TestPredictiveLastDatasetUnobserved(t *testing.T) {
	dir := t.TempDir()
	text, err := os.ReadFile("../../examples/quickstart/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../examples/quickstart/force_length.csv")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/force_length.csv", data, 0o644)
	os.WriteFile(dir+"/s.toml", append(text, []byte("\n[[data]]\nname = \"extra\"\nfile = \"force_length.csv\"\n")...), 0o644)
	s, err := study.Load(context.Background(), dir+"/s.toml", study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fits, used, err := Predictive(context.Background(), s, [][]float64{{4000, 0.02}, {5000, 0.03}}, 0, 1, 0)
	if err != nil || len(fits) != 1 || used != 2 {
		t.Errorf("fits %d, %d samples evaluated, err %v: want 1 fit of 2 samples", len(fits), used, err)
	}
}
