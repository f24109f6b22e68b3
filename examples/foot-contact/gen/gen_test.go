package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	hostrun "github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
)

// The generator is deterministic: it reproduces the committed files byte
// for byte, and every generated study loads.
func TestGeneratorReproducesExample(t *testing.T) {
	if testing.Short() {
		t.Skip("writes five trials (about 2 s)")
	}
	dir := t.TempDir()
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) < 20 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	for _, f := range files {
		got, _ := os.ReadFile(f)
		want, err := os.ReadFile(filepath.Join("..", filepath.Base(f)))
		if err != nil {
			t.Fatalf("%s is not in examples/foot-contact: %v", filepath.Base(f), err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the committed file (rerun go run ./examples/foot-contact/gen examples/foot-contact)", filepath.Base(f))
		}
	}
	for _, name := range []string{"stage1.toml", "stage3.toml", "eval_trial1.toml"} {
		o := study.Options{Workers: 1}
		{
			// Later stages inherit what they leave out (y0; in an
			// evaluation stage every contact parameter).
			o.Previous = map[string]float64{"y0": 0.003, "mu_s": 0.12, "mu_d": 0.09, "mu_v": 0.01}
			for i := 1; i <= 38; i++ {
				o.Previous[kName("k", i)], o.Previous[kName("c", i)] = 2600, 1
			}
		}
		s, err := study.Load(context.Background(), filepath.Join("..", name), o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Data) != 1 || s.Data[0].K < 100 {
			t.Fatalf("%s: data %+v", name, s.Data)
		}
		s.Close()
	}
}

func kName(p string, i int) string {
	return p + "_" + string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// A CI-sized run of the calibration's stage 3 (markers and all six
// quantities, 429 free parameters, every soft constraint) from the true
// contact parameters and zero deviations: three Levenberg–Marquardt
// evaluations must lower the cost, which guards the example's model, data
// and constraints against drifting apart.
func TestStage3Runs(t *testing.T) {
	if testing.Short() {
		t.Skip("three Jacobians of 126 frames × 429 parameters (a few seconds)")
	}
	dir := t.TempDir()
	text, err := os.ReadFile(filepath.Join("..", "stage3.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text = bytes.Replace(text, []byte("max_evaluations = 25"), []byte("max_evaluations = 3"), 1)
	table, err := os.ReadFile(filepath.Join("..", "trial5_table.sto"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"stage3.toml": text, "trial5_table.sto": table} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prev := map[string]float64{"y0": 0.003, "mu_s": 0.12, "mu_d": 0.09, "mu_v": 0.01}
	for i := 1; i <= 38; i++ {
		prev[kName("k", i)], prev[kName("c", i)] = 2600, 1
	}
	s, err := study.Load(context.Background(), filepath.Join(dir, "stage3.toml"), study.Options{Workers: 2, Previous: prev})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sum, err := hostrun.Run(context.Background(), s, hostrun.Options{OutDir: filepath.Join(dir, "out"), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, ok := sum.MethodReport.(map[string]any)
	if !ok {
		t.Fatalf("method report %T", sum.MethodReport)
	}
	trace := rep["trace_cost"].([]any)[0].([]any)
	first, last := trace[0].(float64), rep["cost"].([]any)[0].(float64)
	if !(last < first) {
		t.Fatalf("cost %g → %g", first, last)
	}
	t.Logf("cost %g → %g in %d evaluations", first, last, sum.Evaluations)
}
