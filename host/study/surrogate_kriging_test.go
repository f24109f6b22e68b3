package study

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// writeKrigingToy replaces toy.json by Kriging predictors of y0 = sin(a +
// x)·b and y1 = a² − b·x/2 fitted on 30 Hammersley points of [0,1]² ×
// [0, 1] (a, b; condition x), with the provenance kinfer train writes.
func writeKrigingToy(t *testing.T, dir string) {
	t.Helper()
	pts, err := design.Hammersley(30, 3)
	if err != nil {
		t.Fatal(err)
	}
	y0, y1 := make([]float64, 30), make([]float64, 30)
	for i, p := range pts {
		y0[i], y1[i] = math.Sin(p[0]+p[2])*p[1], p[0]*p[0]-0.5*p[1]*p[2]
	}
	var ms []*kriging.Model
	for _, y := range [][]float64{y0, y1} {
		m, err := kriging.Fit(pts, y, kriging.Options{Order: 1, Nugget: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	p := nn.Provenance{Model: "toy", InputNames: []string{"a", "b", "x"}, OutputNames: []string{"y0", "y1"},
		Conditions: 1, ParamLower: []float64{0, 0}, ParamUpper: []float64{1, 1}}
	if err := kriging.Save(filepath.Join(dir, "toy.json"), ms, p); err != nil {
		t.Fatal(err)
	}
}

// A study with use = "surrogate" loads a Kriging file like an ensemble:
// same keys, exact gradients, predictions close to the function on
// 30 sites.
func TestKrigingSurrogateLoads(t *testing.T) {
	const tol = 0.05 // 30 sites in 3-D of smooth functions of range ≈ 1
	s, err := loadSurr(t, surrStudy, func(dir string) { writeKrigingToy(t, dir) })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.ModelInfo.Ref, SurrogatePrefix) || !strings.Contains(s.ModelInfo.Spec.Doc, "Kriging") ||
		!s.ModelInfo.Spec.Has(abi.CapJacobian) || !s.ModelInfo.Spec.Has(abi.CapVJP) {
		t.Fatalf("model %+v", s.ModelInfo)
	}
	y := make([]float64, 3*2)
	if st := s.Model.Eval([]float64{0.4, 0.6}, s.Data[0].X, y); st != abi.OK {
		t.Fatalf("eval: %v", st)
	}
	for k, x := range s.Data[0].X {
		f0, f1 := math.Sin(0.4+x)*0.6, 0.16-0.3*x
		if math.Abs(y[2*k]-f0) > tol || math.Abs(y[2*k+1]-f1) > tol {
			t.Errorf("row %d (x = %v): %v %v, want %v %v", k, x, y[2*k], y[2*k+1], f0, f1)
		}
	}
}

// Broken Kriging files and unknown formats are refused with the study's
// file, line and key.
func TestKrigingSurrogateRefused(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown format", `{"format":"kinfer-gp","format_version":1}`, `format "kinfer-gp"`},
		{"huge site count", `{"format":"kinfer-kriging","format_version":1,"sites":1000000000,"dim":3,"x":"","outputs":[{}]}`, "sites, must be"},
		{"unknown key", `{"format":"kinfer-kriging","format_version":1,"sites":2,"dim":1,"evil":1}`, "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := loadSurr(t, surrStudy, func(dir string) { os.WriteFile(filepath.Join(dir, "toy.json"), []byte(c.file), 0o644) })
			if err == nil {
				s.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "study.toml:") || !strings.Contains(err.Error(), "model.file") {
				t.Fatalf("error %q, want it to name study.toml, model.file and contain %q", err, c.want)
			}
		})
	}
}
