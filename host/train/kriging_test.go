package train

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
	"github.com/kinfer/kinfer/host/designrun"
)

// TrainKriging on the toy design: both outputs (y0 = a + x·b, y1 = a·b)
// are quadratic polynomials of the inputs, so order-2 Kriging reproduces
// them (the GLS trend fits them and the residual process is zero) and the
// validation error is the rounding of the data file only. The file loads back with
// the provenance, and a second fit writes the same bytes.
func TestTrainKriging(t *testing.T) {
	// design.csv holds 6 decimals: the data are the quadratics up to
	// 5e-7, ≈ 5e-5 % of the outputs' ranges (≥ 1).
	const tolNMAE = 1e-3 // percent
	dir := t.TempDir()
	writeDesign(t, dir, 30) // (i mod 7, i mod 5) are distinct for i < 35
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Holdout: 0.2, Kriging: kriging.Options{Order: 2, Correlation: kriging.Matern52}}
	o.Config.Seed = 5
	ms, prov, rep, err := TrainKriging(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || rep.Kind != "kriging" || rep.Kriging == nil || len(rep.Kriging.Outputs) != 2 || rep.Config != nil ||
		prov.Model != "toy" || prov.Conditions != 1 || prov.Seed != 5 || prov.TrainingSamples != rep.TrainingSamples {
		t.Fatalf("report %+v, provenance %+v", rep, prov)
	}
	for _, out := range rep.Outputs {
		if !(out.NMAE < tolNMAE) {
			t.Errorf("%s: nMAE %v %% on a quadratic, want < %v", out.Name, out.NMAE, tolNMAE)
		}
	}
	path := filepath.Join(t.TempDir(), "toy-k.json")
	if err := WriteKriging(path, ms, prov, rep); err != nil {
		t.Fatal(err)
	}
	ls, p2, err := kriging.Load(path)
	if err != nil || len(ls) != 2 || !reflect.DeepEqual(p2, prov) {
		t.Fatalf("load: %v %+v", err, p2)
	}
	ms2, prov2, rep2, err := TrainKriging(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	path2 := filepath.Join(t.TempDir(), "toy-k.json")
	if err := WriteKriging(path2, ms2, prov2, rep2); err != nil {
		t.Fatal(err)
	}
	if string(must(os.ReadFile(path))) != string(must(os.ReadFile(path2))) {
		t.Error("two fits of the same design wrote different files")
	}
}

// A design whose condition x has one value is refused by the input's name
// before any fit (Kriging's correlation length along it is undefined).
func TestTrainKrigingConstantInput(t *testing.T) {
	dir := t.TempDir()
	writeDesign(t, dir, 30)
	p := filepath.Join(dir, "design.csv")
	b := strings.NewReplacer(",d,1,", ",d,0,", ",d,2,", ",d,0,").Replace(string(must(os.ReadFile(p)))) // same length: csv_bytes holds
	if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = TrainKriging(ds, Options{Holdout: 0.2, Kriging: kriging.Options{Order: 1, Correlation: kriging.Gaussian}})
	if err == nil || !strings.Contains(err.Error(), "input x is 0 at every training sample") {
		t.Fatalf("got %v", err)
	}
}

// Inputs whose standardisation overflows (a condition of 1e160, whose
// square does) are refused by name before any fit, for Kriging as for a
// network; Kriging used to fit, write the file, then fail on its report.
func TestTrainRefusesUnstandardisableInputs(t *testing.T) {
	dir := t.TempDir()
	writeDesign(t, dir, 30)
	p := filepath.Join(dir, "design.csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(strings.ReplaceAll(string(b), ",d,2,", ",d,1e160,")), 0o644)
	// The record's csv_bytes must match the edited file.
	rec := filepath.Join(dir, "design.json")
	rb, _ := os.ReadFile(rec)
	nb, _ := os.ReadFile(p)
	os.WriteFile(rec, []byte(strings.Replace(string(rb), `"csv_bytes":`+strconv.Itoa(len(b)), `"csv_bytes":`+strconv.Itoa(len(nb)), 1)), 0o644)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := TrainKriging(ds, Options{Holdout: 0.2}); err == nil || !strings.Contains(err.Error(), "input x has mean") {
		t.Errorf("Kriging: %v", err)
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs = []int{4}, 1, 1
	if _, _, _, err := Train(ds, Options{Config: cfg, Holdout: 0.2}); err == nil || !strings.Contains(err.Error(), "input x has mean") {
		t.Errorf("network: %v", err)
	}
}

// A design of more inputs than a Kriging file holds is refused before the
// fit (audit 15: 10 001 inputs trained for 70 s and wrote a file every
// reader refuses). 1 001 parameters, 6 points, one condition.
func TestTrainKrigingTooManyInputs(t *testing.T) {
	dir := t.TempDir()
	const d, n = 1001, 6
	var b strings.Builder
	b.WriteString("point,status")
	var params []string
	for j := range d {
		b.WriteString(",p" + strconv.Itoa(j))
		params = append(params, `{"name":"p`+strconv.Itoa(j)+`","lower":0,"upper":1,"default":0.5}`)
	}
	b.WriteString(",dataset,x,y\n")
	for i := range n {
		b.WriteString(strconv.Itoa(i) + ",ok")
		for j := range d {
			b.WriteString("," + strconv.FormatFloat(float64((i*(j+1))%n)/n, 'g', -1, 64))
		}
		b.WriteString(",d,1," + strconv.Itoa(i) + "\n")
	}
	os.WriteFile(filepath.Join(dir, "design.csv"), []byte(b.String()), 0o644)
	rec := `{"study":"s.toml","model":"wide","model_version":"1","design":"sobol","n":` + strconv.Itoa(n) + `,"seed":1,"space":"box","params":[` + strings.Join(params, ",") + `],
"conditions":[{"name":"x"}],"outputs":[{"name":"y"}],"datasets":["d"],"provenance":{"inputs":[]},"points_done":` + strconv.Itoa(n) + `,"csv_bytes":` + strconv.Itoa(b.Len()) + `,"points_by_status":{},"complete":true}`
	os.WriteFile(filepath.Join(dir, "design.json"), []byte(rec), 0o644)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = TrainKriging(ds, Options{Holdout: 0.2})
	if err == nil || !strings.Contains(err.Error(), "1002 inputs and 1 outputs exceed what a Kriging file holds (at most 1000 inputs") {
		t.Fatalf("got %v", err)
	}
}

// Sequence designs over the same box share their first points; a box
// moved by less than 1e-6 of a width is the same box (audit 15: 9000 and
// 9000.000001 passed as held out), one moved by 1 % is not.
func TestSharedPointsBoxTolerance(t *testing.T) {
	rec := func(hi float64, n int) *designrun.Record {
		return &designrun.Record{Kind: "sobol", N: n, Space: "box", Params: []abi.Param{{Lower: 2000, Upper: hi}, {Lower: -0.2, Upper: 0.3}}}
	}
	if n := sharedPoints(rec(9000, 64), rec(9000.000001, 32)); n != 32 {
		t.Errorf("a box moved by 1e-6: %d shared points, want 32", n)
	}
	if n := sharedPoints(rec(9000, 64), rec(9070, 32)); n != 0 {
		t.Errorf("a box moved by 1 %%: %d shared points, want 0", n)
	}
}
