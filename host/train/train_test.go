package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// writeDesign writes a design run by hand: parameters a, b, condition x,
// outputs y0 = a + x·b, y1 = a·b; point 2 failed.
func writeDesign(t *testing.T, dir string, n int) { writeDesignAs(t, dir, n, "sobol", 0) }

// writeHeldOut writes a design of other points (a Latin hypercube's, as
// far as its record says): a validation or score design.
func writeHeldOut(t *testing.T, dir string, n int) { writeDesignAs(t, dir, n, "lhs", 0.5/35) }

func writeDesignAs(t *testing.T, dir string, n int, kind string, shift float64) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	var b strings.Builder
	b.WriteString("point,status,a,b,dataset,x,y0,y1\n")
	for i := 0; i < n; i++ {
		a, bb := float64(i%7)/7+shift, float64(i%5)/5-0.5+shift
		for _, x := range []float64{0, 1, 2} {
			if i == 2 {
				b.WriteString(itoa(i) + ",failed," + ftoa(a) + "," + ftoa(bb) + ",d," + ftoa(x) + ",,\n")
				continue
			}
			b.WriteString(itoa(i) + ",ok," + ftoa(a) + "," + ftoa(bb) + ",d," + ftoa(x) + "," + ftoa(a+x*bb) + "," + ftoa(a*bb) + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "design.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := `{"study":"s.toml","model":"toy","model_version":"1","design":"` + kind + `","n":` + itoa(n) + `,"seed":1,"space":"box",
"params":[{"name":"a","unit":"mm","lower":0,"upper":1,"default":0.5},{"name":"b","lower":-1,"upper":1,"default":0}],
"conditions":[{"name":"x","unit":"deg"}],"outputs":[{"name":"y0","unit":"mm"},{"name":"y1","unit":"1"}],
"datasets":["d"],"provenance":{"inputs":[]},"points_done":` + itoa(n) + `,"csv_bytes":` + itoa(b.Len()) + `,"points_by_status":{},"complete":true}`
	if err := os.WriteFile(filepath.Join(dir, "design.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return strings.TrimSuffix(ftoa(float64(i)), ".0") }
func ftoa(v float64) string {
	return strings.TrimRight(strings.TrimRight(strconvF(v), "0"), ".")
}

func TestReadDesign(t *testing.T) {
	dir := t.TempDir()
	writeDesign(t, dir, 10)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Data.N != 27 || ds.Data.In != 3 || ds.Data.Out != 2 || ds.Skipped["failed"] != 3 || ds.Conditions != 1 ||
		!reflect.DeepEqual(ds.InNames, []string{"a", "b", "x"}) || !reflect.DeepEqual(ds.OutUnits, []string{"mm", "1"}) {
		t.Fatalf("read %+v", ds)
	}
	// Row 4 of the samples: point 1 (a = 1/7, b = −0.3), x = 0.
	if got := ds.Data.X[3*3 : 4*3]; got[0] != 0.142857 || got[2] != 0 || ds.Point[3] != 1 {
		t.Errorf("sample 4: %v (point %d)", got, ds.Point[3])
	}
	if len(ds.CSVSHA) != 64 || len(ds.RecordSHA) != 64 {
		t.Errorf("digests %q %q", ds.CSVSHA, ds.RecordSHA)
	}
}

func TestReadDesignRefuses(t *testing.T) {
	cases := map[string]func(dir string){
		// A received design folder's text reaches the terminal: control
		// characters are refused (audit 4).
		"model \"toy\\x1b[2J\" has a control character": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.json"))
			os.WriteFile(filepath.Join(dir, "design.json"), []byte(strings.Replace(string(b), `"model":"toy"`, `"model":"toy\u001b[2J"`, 1)), 0o644)
		},
		"not complete": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.json"))
			os.WriteFile(filepath.Join(dir, "design.json"), []byte(strings.Replace(string(b), `"complete":true`, `"complete":false`, 1)), 0o644)
		},
		"does not match design.json": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
			os.WriteFile(filepath.Join(dir, "design.csv"), []byte(strings.Replace(string(b), "y1", "z", 1)), 0o644)
		},
		"design.csv:3: column \"y0\"": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
			os.WriteFile(filepath.Join(dir, "design.csv"), []byte(strings.Replace(string(b), "0,ok,0,-0.5,d,1,-0.5", "0,ok,0,-0.5,d,1,NaN", 1)), 0o644)
		},
		"fields": func(dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, "design.csv"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("3,ok,1\n")
			f.Close()
		},
		"a line longer than 1 MiB": func(dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, "design.csv"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(strings.Repeat("9", MaxLineBytes+10))
			f.Close()
		},
		// Rows cut at a row's end, or repeated, parse; the length
		// design.json records tells (once trained on silently).
		"was cut or changed": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
			os.WriteFile(filepath.Join(dir, "design.csv"), b[:strings.LastIndex(string(b[:len(b)-1]), "\n")+1], 0o644)
		},
		"design.json records csv_bytes": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
			os.WriteFile(filepath.Join(dir, "design.csv"), append(b, b[strings.Index(string(b), "\n")+1:]...), 0o644)
		},
		// n is the size of the holdout's permutation: 10^12 crashed the
		// host out of memory.
		"n = 1000000000000": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.json"))
			os.WriteFile(filepath.Join(dir, "design.json"), []byte(strings.Replace(string(b), `"n":10,`, `"n":1000000000000,`, 1)), 0o644)
		},
		"not a directory": func(dir string) {
			os.Remove(filepath.Join(dir, "design.json"))
			os.Mkdir(filepath.Join(dir, "design.json"), 0o755)
		},
		// A box that is not one trained, and every study then refused the
		// surrogate (audit 6); a point outside the recorded box.
		`param "a" has bounds [9000, 1]: want finite lower < upper`: func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.json"))
			os.WriteFile(filepath.Join(dir, "design.json"), []byte(strings.Replace(string(b), `"lower":0,"upper":1`, `"lower":9000,"upper":1`, 1)), 0o644)
		},
		`design.csv:2: column "b": -3.5 is outside the box [-1, 1]`: func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
			os.WriteFile(filepath.Join(dir, "design.csv"), []byte(strings.Replace(string(b), "0,ok,0,-0.5,d,0,", "0,ok,0,-3.5,d,0,", 1)), 0o644)
		},
	}
	for want, spoil := range cases {
		dir := t.TempDir()
		writeDesign(t, dir, 10)
		spoil(dir)
		_, err := ReadDesign(dir)
		if err == nil || !strings.Contains(err.Error(), want) && !strings.Contains(err.Error(), "directory") {
			t.Errorf("%s: error %v", want, err)
		}
	}
}

func TestTrainWritesProvenanceAndReport(t *testing.T) {
	dir, vdir := t.TempDir(), t.TempDir()
	writeDesign(t, dir, 40)
	writeHeldOut(t, vdir, 12)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs, cfg.Seed = []int{8}, 2, 3, 5
	// Holdout: whole points go to one side.
	e, prov, rep, err := Train(ds, Options{Config: cfg, Holdout: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainingPoints+rep.ValidationPoints != 39 || rep.ValidationPoints != 10 || rep.TrainingSamples != 3*rep.TrainingPoints {
		t.Errorf("split %d + %d points, %d samples", rep.TrainingPoints, rep.ValidationPoints, rep.TrainingSamples)
	}
	if prov.Model != "toy" || prov.Conditions != 1 || prov.TrainingDataSHA256 != ds.CSVSHA || prov.Seed != 5 ||
		!reflect.DeepEqual([]float64(prov.ParamUpper), []float64{1, 1}) || !strings.HasPrefix(prov.Design, "sobol n=40") {
		t.Errorf("provenance %+v", prov)
	}
	// A separate validation design; a prefix of the training points.
	v, err := ReadDesign(vdir)
	if err != nil {
		t.Fatal(err)
	}
	_, prov2, rep2, err := Train(ds, Options{Config: cfg, Validation: v, Points: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.TrainingPoints != 19 || rep2.ValidationSamples != 33 || prov2.ValidationSHA256 != v.CSVSHA {
		t.Errorf("validation design: %d training points, %d validation samples, %q", rep2.TrainingPoints, rep2.ValidationSamples, prov2.ValidationSHA256)
	}
	path := filepath.Join(t.TempDir(), "toy-nn.json")
	if err := Write(path, e, prov, rep); err != nil {
		t.Fatal(err)
	}
	// Deterministic: the same design, options and seed give the same file.
	e3, prov3, rep3, err := Train(ds, Options{Config: cfg, Holdout: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	path3 := filepath.Join(t.TempDir(), "toy-nn.json")
	if err := Write(path3, e3, prov3, rep3); err != nil {
		t.Fatal(err)
	}
	if b1, _ := os.ReadFile(path); string(b1) != string(must(os.ReadFile(path3))) {
		t.Error("two trainings with the same seed wrote different files")
	}
	e2, p2, err := nn.Load(path)
	if err != nil || e2.In() != 3 || !reflect.DeepEqual(p2, prov) {
		t.Fatalf("load: %v, %+v", err, p2)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "toy-nn.report.json")); err != nil {
		t.Error(err)
	}
	if tb := rep.Table(); !strings.Contains(tb, "y1 [1]") || !strings.Contains(tb, "y0 [mm]") {
		t.Errorf("table:\n%s", tb)
	}
	// A validation design of other columns is refused.
	v.OutNames = []string{"y0", "z"}
	if _, _, _, err := Train(ds, Options{Config: cfg, Validation: v}); err == nil {
		t.Error("validation design with other outputs accepted")
	}

}

func strconvF(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// Merge: a design and a refinement train together as one set whose points
// stay distinct (a holdout takes whole points of either run), whose box is
// the union of the runs' boxes, and whose provenance names both runs;
// runs of another model or other columns are refused.
func TestMergeDesigns(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	writeDesign(t, d1, 10)
	writeDesign(t, d2, 6)
	// The refinement's box: a in [0, 2] (the first run's is [0, 1]).
	rec := filepath.Join(d2, "design.json")
	b := must(os.ReadFile(rec))
	os.WriteFile(rec, []byte(strings.Replace(string(b), `"upper":1,"default":0.5`, `"upper":2,"default":0.5`, 1)), 0o644)
	a, err := ReadDesign(d1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadDesign(d2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(a, r)
	if err != nil {
		t.Fatal(err)
	}
	// 9 + 5 points with status ok, 3 conditions each; point 2 of each failed.
	if m.Data.N != 27+15 || m.Record.N != 16 || m.Skipped["failed"] != 6 || len(m.Point) != m.Data.N {
		t.Fatalf("merged: %d samples, n = %d, skipped %v", m.Data.N, m.Record.N, m.Skipped)
	}
	seen := map[int]bool{}
	for _, p := range m.Point {
		seen[p] = true
	}
	if len(seen) != 14 || !seen[15] || seen[2] || seen[12] {
		t.Errorf("merged points %v", seen)
	}
	// The refinement's samples follow the first run's, unchanged.
	if !reflect.DeepEqual(m.Data.X[27*3:], r.Data.X) || !reflect.DeepEqual(m.Data.Y[:27*2], a.Data.Y) {
		t.Error("merged samples differ from the runs'")
	}
	// The inputs of the first run are not modified by the merge.
	if a.Record.N != 10 || a.Record.Params[0].Upper != 1 || m.Record.Params[0].Upper != 2 {
		t.Errorf("boxes: first run n=%d upper %g, merged upper %g", a.Record.N, a.Record.Params[0].Upper, m.Record.Params[0].Upper)
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs, cfg.Seed = []int{8}, 1, 2, 5
	_, prov, rep, err := Train(m, Options{Config: cfg, Holdout: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainingPoints+rep.ValidationPoints != 14 || rep.ValidationPoints != 4 {
		t.Errorf("holdout over the merged points: %d + %d", rep.TrainingPoints, rep.ValidationPoints)
	}
	if !reflect.DeepEqual([]float64(prov.ParamUpper), []float64{2, 1}) || prov.TrainingDataSHA256 == a.CSVSHA || len(prov.TrainingDataSHA256) != 64 ||
		!strings.Contains(prov.Design, a.CSVSHA) || !strings.Contains(prov.Design, r.CSVSHA) || !strings.Contains(prov.Design, " + sobol n=6") {
		t.Errorf("provenance %+v", prov)
	}
	// Merging in another order is another training set.
	m2, _ := Merge(r, a)
	if m2.CSVSHA == m.CSVSHA {
		t.Error("the merged digest does not depend on the order")
	}
	if one, _ := Merge(a); one != a {
		t.Error("one run is not its own merge")
	}
	// Refused: another model; other outputs.
	o := *r.Record
	o.Model = "other"
	bad := *r
	bad.Record = &o
	if _, err := Merge(a, &bad); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("another model: %v", err)
	}
	bad2 := *r
	bad2.OutNames = []string{"y0", "z"}
	if _, err := Merge(a, &bad2); err == nil {
		t.Error("other outputs accepted")
	}
	// The same run twice (kinfer train d d) counted every sample twice.
	if _, err := Merge(a, r, a); err == nil || !strings.Contains(err.Error(), "the same design.csv") {
		t.Errorf("the same run twice: %v", err)
	}
}

// TestReportNaNNMAE: an output whose validation values are constant has
// no nMAE (NaN); the report writes it as null (json.Marshal refused the
// whole report, after the surrogate file was written).
func TestReportNaNNMAE(t *testing.T) {
	b, err := json.Marshal(&Report{Outputs: []OutputReport{{Name: "f", NMAE: math.NaN(), MAE: 2, AE90: 3}, {Name: "g", NMAE: 1.5}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, `"nmae_percent":null`) {
		t.Errorf("report %s", s)
	}
	if !strings.Contains(s, `"nmae_percent":1.5`) {
		t.Errorf("a finite nMAE is not kept: %s", s)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Outputs[0].MAE != 2 || back.Outputs[1].NMAE != 1.5 {
		t.Errorf("read back %+v, %v", back.Outputs, err)
	}
	// The console table says why there is no nMAE instead of "NaN".
	tab := OutputTable([]OutputReport{{Name: "f", NMAE: math.NaN(), MAE: 2, AE90: 3}, {Name: "g", NMAE: 1.5}})
	if strings.Contains(tab, "NaN") || !strings.Contains(tab, "all equal") || !strings.Contains(tab, "1.50") {
		t.Errorf("table:\n%s", tab)
	}
}

// TestHoldoutOfOnePointRefused: a holdout from a design of one point
// would leave nothing to train on; the refusal says what to give instead.
func TestHoldoutOfOnePointRefused(t *testing.T) {
	dir := t.TempDir()
	writeDesign(t, dir, 1)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs = []int{4}, 1, 1
	if _, _, _, err := Train(ds, Options{Config: cfg, Holdout: 0.5}); err == nil || !strings.Contains(err.Error(), "--validation") {
		t.Errorf("one-point holdout: %v", err)
	}
}

// TestCombineBoundsParts: more member files than an ensemble may have
// networks are refused before any is read (each part is held in memory
// until all are joined).
func TestCombineBoundsParts(t *testing.T) {
	paths := make([]string, nn.MaxMembers+1)
	for i := range paths {
		paths[i] = "/nonexistent/m.json"
	}
	if _, _, _, err := Combine(paths, &Design{}); err == nil || !strings.Contains(err.Error(), "65 member files") {
		t.Errorf("error %v", err)
	}
}

// Two runs of the same sequence over the same box (10 and 6 points of
// sobol: the second is the first's first 6) are not merged: their common
// samples would count twice.
func TestMergeRefusesSharedSequence(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	writeDesign(t, d1, 10)
	writeDesign(t, d2, 6)
	a, err := ReadDesign(d1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadDesign(d2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(a, b); err == nil || !strings.Contains(err.Error(), "share their first 6 points") {
		t.Fatalf("merged a run with its own prefix: %v", err)
	}
}

// Strains (unit 1, named so) are printed in percent, other dimensionless
// outputs on their own scale; an nMAE below 0.01 % keeps three
// significant digits (audit 15: the line model's y was printed ×100 as
// "y [%]", and an nMAE of 5.25e-6 % as "0.00").
func TestOutputTableUnits(t *testing.T) {
	tb := OutputTable([]OutputReport{
		{Name: "strain_ACL", Unit: "1", NMAE: 1.5, MAE: 0.0123, AE90: 0.0456},
		{Name: "y", Unit: "1", NMAE: 5.25e-6, MAE: 0.000253, AE90: 0.000604},
	})
	for _, want := range []string{"strain_ACL [%]", " 1.23 ", " 4.56\n", "y [1]", "5.25e-06", "0.000253", "0.000604"} {
		if !strings.Contains(tb, want) {
			t.Errorf("no %q in\n%s", want, tb)
		}
	}
	if strings.Contains(tb, "y [%]") || strings.Contains(tb, "0.00 ") {
		t.Errorf("y in percent, or its nMAE as 0.00:\n%s", tb)
	}
	// The footnote on equal validation values only for the NaN nMAE
	// they give (nn.Metrics), not for predictions gone infinite (audit
	// 15: printed for an MAE of +Inf).
	inf := OutputTable([]OutputReport{{Name: "f", Unit: "N", NMAE: math.Inf(1), MAE: math.Inf(1), AE90: math.Inf(1)}})
	if strings.Contains(inf, "all equal") || !strings.Contains(inf, "+Inf") {
		t.Errorf("infinite errors:\n%s", inf)
	}
	flat := OutputTable([]OutputReport{{Name: "f", Unit: "N", NMAE: math.NaN(), MAE: 0, AE90: 0}})
	if !strings.Contains(flat, "all equal") {
		t.Errorf("equal validation values:\n%s", flat)
	}
}

// A dataset name with a comma and a quote, which kinfer design writes
// quoted, reads back (review 17: "9 fields, want 8").
func TestReadDesignQuotedDataset(t *testing.T) {
	dir := t.TempDir()
	writeDesign(t, dir, 12)
	p := filepath.Join(dir, "design.csv")
	b := strings.ReplaceAll(string(must(os.ReadFile(p))), ",d,", `,"pull, ""A""",`)
	os.WriteFile(p, []byte(b), 0o644)
	rp := filepath.Join(dir, "design.json")
	r := string(must(os.ReadFile(rp)))
	r = strings.Replace(r, `"datasets":["d"]`, `"datasets":["pull, \"A\""]`, 1)
	r = regexp.MustCompile(`"csv_bytes":\d+`).ReplaceAllString(r, `"csv_bytes":`+strconv.Itoa(len(b)))
	os.WriteFile(rp, []byte(r), 0o644)
	ds, err := ReadDesign(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Data.N != 33 { // 11 ok points (point 2 failed) × 3 rows
		t.Errorf("%d samples, want 33", ds.Data.N)
	}
}
