package nn

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Save → Load gives bit-identical weights and predictions and keeps the
// provenance.
func TestSaveLoadRoundTrip(t *testing.T) {
	cfg := smallConfig()
	cfg.Hidden = []int{8, 5}
	cfg.Epochs = 2
	train := gridData(100, 4)
	e, err := Train(cfg, train, train)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "design.csv")
	os.WriteFile(data, []byte("a,b\n1,2\n"), 0o644)
	sum, err := SHA256File(data)
	if err != nil {
		t.Fatal(err)
	}
	// sha256 of "a,b\n1,2\n" (sha256sum).
	if sum != "492d5ea496056f1a6a6592241032fab764c321596317930b4fa0e1e8bc3b7470" {
		t.Fatalf("sha256 %q", sum)
	}
	prov := Provenance{KinferVersion: "0.1.0", TrainingDataSHA256: sum, Seed: cfg.Seed, Model: "knee", ModelVersion: "1"}
	path := filepath.Join(dir, "nn.json")
	if err := e.Save(path, prov); err != nil {
		t.Fatal(err)
	}
	f, p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.TrainingDataSHA256 != sum || p.Seed != cfg.Seed || p.Model != "knee" || p.KinferVersion != "0.1.0" {
		t.Errorf("provenance %+v", p)
	}
	x := train.X[:20]
	a := e.Predict(nil, x, 10, nil)
	b := f.Predict(nil, x, 10, nil)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("prediction %d: %v before, %v after", i, a[i], b[i])
		}
	}
	if f.Config == nil || f.Config.Seed != cfg.Seed || len(f.InputLo) != 2 {
		t.Errorf("config/box not kept: %+v %v", f.Config, f.InputLo)
	}
	if !f.Outside([]float64{5, 0}) || f.Outside(train.X[:2]) {
		t.Error("training box flag wrong")
	}
}

// Hostile or broken files are refused with a clear error before large
// allocations.
func TestLoadRefusesBadFiles(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{2, 3, 1}, 1)}, Weights: []float64{1}}
	var buf bytes.Buffer
	if err := e.Write(&buf, Provenance{}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, _, err := Read(strings.NewReader(good)); err != nil {
		t.Fatalf("good file refused: %v", err)
	}
	cases := []struct{ name, old, new, want string }{
		{"huge width", `"sizes": [
    2,
    3,`, `"sizes": [
    2,
    300000000,`, "width"},
		{"too deep", `"sizes": [
    2,`, `"sizes": [
    2,` + strings.Repeat("1,", 100), "sizes"},
		{"absurd params", `"sizes": [
    2,
    3,`, `"sizes": [
    60000,
    60000,`, "parameters"},
		{"format", Format, "other", "format"},
		{"version", `"format_version": 1`, `"format_version": 9`, "version"},
		{"weights", `"weights": [
  1
 ]`, `"weights": [
  0.5
 ]`, "sum"},
		{"truncated", good[len(good)/2:], "", "unexpected end"},
		{"unknown key", `"activation"`, `"bogus": 1, "activation"`, "unknown field"},
		// Provenance text reaches the terminal: no control characters
		// (audit 4: an escape sequence in "model" cleared the screen).
		{"escape in provenance", `"kinfer_version": "`, `"model": "line\u001b[2J", "kinfer_version": "`, `provenance model "line\x1b[2J" has a control character`},
	}
	old := maxFileBytes
	maxFileBytes = int64(len(good) / 2)
	_, _, err := Read(strings.NewReader(good))
	maxFileBytes = old
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: error %v", err)
	}
	for _, c := range cases {
		s := strings.Replace(good, c.old, c.new, 1)
		if s == good {
			t.Fatalf("%s: substitution did not apply", c.name)
		}
		_, _, err := Read(strings.NewReader(s))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// Decoding holds the file once: the weights decode straight from the
// text, so what Decode allocates is about the values (8 bytes for each
// 10.7 base64 characters, 0.75× the file) and never a second copy of the
// text. The bound, 1.0× the file, fails for encoding/json's Decoder with
// string fields (its buffer, the strings and the decoded bytes: ≈ 3×).
func TestDecodeAllocatesAboutTheValues(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{51, 256, 256, 13}, 1), randNet([]int{51, 256, 256, 13}, 2)}, Weights: []float64{0.5, 0.5}}
	var buf bytes.Buffer
	if err := e.Write(&buf, Provenance{}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, _, err := Decode(b)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(len(b)); alloc > limit {
		t.Errorf("Decode of a %d-byte file allocated %d bytes, want at most the file's size", len(b), alloc)
	}
	if !slices.EqualFunc(got.Nets[1].W[1], e.Nets[1].W[1], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
		t.Error("weights differ after the round trip")
	}
}

// Lists that would cost far more decoded than their text (a list of empty
// objects, of empty names, of numbers) are refused by their bounds.
func TestListBombsRefused(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{2, 3, 1}, 1)}, Weights: []float64{1}}
	var buf bytes.Buffer
	if err := e.Write(&buf, Provenance{}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for _, c := range []struct{ name, old, new, want string }{
		{"training records", `"networks"`, `"training": [` + strings.Repeat("{},", 1000) + `{}], "networks"`, `more than 64 values in the list "training"`},
		{"networks", `"networks": [`, `"networks": [` + strings.Repeat("{},", 1000), `more than 64 values in the list "networks"`},
		{"names", `"seed"`, `"input_names": [` + strings.Repeat(`"",`, 1<<20) + `""], "seed"`, `more than 1048576 values in the list "provenance.input_names"`},
		{"numbers", `"weights": [`, `"weights": [` + strings.Repeat("0,", 1<<20), "at most 1048576"},
		{"null weight", `"weights": [`, `"weights": [null,`, "null"},
		{"string weight", `"weights": [`, `"weights": ["1",`, "not a finite number"},
	} {
		s := strings.Replace(good, c.old, c.new, 1)
		if s == good {
			t.Fatalf("%s: substitution did not apply", c.name)
		}
		_, _, err := Decode([]byte(s))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
