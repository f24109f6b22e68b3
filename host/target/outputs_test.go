package target

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

// twoDatasets is the ligament study of target_test.go with a second
// dataset, so that Result.Outputs spans datasets in study order.
const twoDatasets = `name = "t"
[model]
use = "ligament"
ref_length_mm = 30.0
[[data]]
name = "pull"
file = "d.csv"
[[data]]
name = "second"
file = "e.csv"
[[likelihood]]
use = "gaussian"
data = "pull"
sigma = { force_N = 8.0, strain = 0.005 }
[[likelihood]]
use = "gaussian"
data = "second"
sigma = 10.0
[prior]
k = { normal = [5000.0, 800.0] }
eps_r = { truncnormal = [0.0, 0.05, -0.2, 0.3] }
[method]
use = "metropolis"
`

func loadTwo(t *testing.T) *study.Study { return loadTwoB(t) }

func loadTwoB(t testing.TB) *study.Study {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("length_mm,force_N,strain\n29.5,5,\n30.3,60,0.04\n31.0,150,\n32.2,420,0.11\n33.0,560,\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "e.csv"), []byte("length_mm,force_N\n30.8,100\n31.9,300\n"), 0o644)
	p := filepath.Join(dir, "s.toml")
	os.WriteFile(p, []byte(twoDatasets), 0o644)
	s, err := study.Load(context.Background(), p, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// WantOutputs: a point's Outputs are the model's own evaluation at every
// row of every dataset, dataset after dataset, bit for bit, whatever else
// is asked with them (log target alone, with gradients — which would take
// the fused path —, with residuals); without WantOutputs there are none;
// and the numbers do not depend on the number of workers.
func TestWantOutputsEqualModelEvaluation(t *testing.T) {
	s := loadTwo(t)
	m := len(s.ModelInfo.Spec.Outputs)
	pts := [][]float64{{5100, 0.02}, {6100, 0.045}, {4300, -0.01}, {5000, 0}, {5500, 0.01}}
	tg := New(s, 2)
	if got := tg.OutputRows(); got != 7 {
		t.Fatalf("OutputRows %d, want 5 + 2", got)
	}
	var first []abi.Result
	for _, w := range []struct {
		want    abi.Want
		workers int
	}{{abi.WantOutputs, 2}, {abi.WantOutputs | abi.WantGradient, 2}, {abi.WantOutputs | abi.WantResiduals, 1}, {abi.WantOutputs, 1}} {
		res, err := New(s, w.workers).Evaluate(context.Background(), pts, w.want)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Status != abi.OK {
				t.Fatalf("want %b point %d: status %v", w.want, i, r.Status)
			}
			var direct []float64
			for _, ds := range s.Data {
				y := make([]float64, ds.K*m)
				if st := s.Model.Eval(tg.Full(pts[i]), ds.X, y); st != abi.OK {
					t.Fatal(st)
				}
				direct = append(direct, y...)
			}
			if len(r.Outputs) != len(direct) {
				t.Fatalf("want %b point %d: %d outputs, want %d", w.want, i, len(r.Outputs), len(direct))
			}
			for j := range direct {
				if r.Outputs[j] != direct[j] {
					t.Fatalf("want %b point %d output %d: %g, model %g", w.want, i, j, r.Outputs[j], direct[j])
				}
			}
			if w.want&abi.WantGradient != 0 && r.Grad == nil {
				t.Errorf("point %d: no gradient", i)
			}
			if w.want&abi.WantResiduals != 0 && r.Residuals == nil {
				t.Errorf("point %d: no residuals", i)
			}
		}
		if first == nil {
			first = res
		}
		for i := range res {
			if res[i].LogLik != first[i].LogLik {
				t.Errorf("want %b point %d: log likelihood %g, first %g", w.want, i, res[i].LogLik, first[i].LogLik)
			}
		}
	}
	res, err := tg.Evaluate(context.Background(), pts, abi.WantLogTarget)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Outputs != nil {
			t.Errorf("point %d: outputs without WantOutputs", i)
		}
	}
}

// failingOut fails below k = 4500 and returns NaN above k = 7000.
type failingOut struct{ abi.Model }

func (f failingOut) Eval(theta, x, y []float64) abi.Status {
	st := f.Model.Eval(theta, x, y)
	switch {
	case theta[0] < 4500:
		return abi.Failed
	case theta[0] > 7000:
		y[0] = math.NaN()
	}
	return st
}

// A point whose model fails or gives a non-finite output has that status
// and no Outputs; a point outside the prior's support is not evaluated.
func TestWantOutputsFailures(t *testing.T) {
	s := loadTwo(t)
	s.Model = failingOut{s.Model}
	res, err := New(s, 2).Evaluate(context.Background(), [][]float64{{4000, 0}, {8000, 0}, {5000, 0}, {5000, 0.5}}, abi.WantOutputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []abi.Status{abi.Failed, abi.NonFinite, abi.OK, abi.OutOfSupport} {
		if res[i].Status != want || (res[i].Outputs != nil) != (want == abi.OK) {
			t.Errorf("point %d: status %v with %d outputs, want %v", i, res[i].Status, len(res[i].Outputs), want)
		}
	}
}

// BenchmarkEvaluateOutputs: a batch of 256 points of the two-dataset
// ligament study (7 rows × 2 outputs) with and without WantOutputs — the
// cost of copying the outputs into the results.
func BenchmarkEvaluateOutputs(b *testing.B) {
	s := loadTwoB(b)
	pts := make([][]float64, 256)
	for i := range pts {
		pts[i] = []float64{4000 + 8*float64(i), 0.01}
	}
	for _, c := range []struct {
		name string
		want abi.Want
	}{{"logtarget", abi.WantLogTarget}, {"outputs", abi.WantOutputs}} {
		b.Run(c.name, func(b *testing.B) {
			tg := New(s, 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tg.Evaluate(context.Background(), pts, c.want); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
