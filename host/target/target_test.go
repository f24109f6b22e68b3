package target

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/ligament"
	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/study"
)

const gradTol = 1e-5 // relative: analytic chain rule vs central differences

const studyText = `name = "t"
[model]
use = "ligament"
ref_length_mm = 30.0
[[data]]
name = "pull"
file = "d.csv"
[[likelihood]]
use = "gaussian"
sigma = { force_N = 8.0, strain = 0.005 }
[prior]
k = { normal = [5000.0, 800.0] }
eps_r = { truncnormal = [0.0, 0.05, -0.2, 0.3] }
[method]
use = "metropolis"
`

func loadStudy(t *testing.T) *study.Study {
	t.Helper()
	dir := t.TempDir()
	csv := "length_mm,force_N,strain\n29.5,5,\n30.3,60,0.04\n31.0,150,\n32.2,420,0.11\n33.0,560,\n"
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644)
	p := filepath.Join(dir, "s.toml")
	os.WriteFile(p, []byte(studyText), 0o644)
	s, err := study.Load(context.Background(), p, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The chain rule through the ligament's Jacobian and the Gaussian's ∂logL/∂y
// (plus the priors' derivatives) equals central finite differences of the
// whole log target.
func TestAnalyticGradientMatchesFiniteDifferences(t *testing.T) {
	s := loadStudy(t)
	tg := New(s, 2)
	if tg.GradientMode() != "analytic" {
		t.Fatalf("gradient mode %s", tg.GradientMode())
	}
	pts := [][]float64{{5100, 0.02}, {6100, 0.045}, {4300, -0.01}}
	res, err := tg.Evaluate(context.Background(), pts, abi.WantGradient)
	if err != nil {
		t.Fatal(err)
	}
	sc := tg.newScratch()
	for i, r := range res {
		if r.Status != abi.OK || len(r.Grad) != 2 {
			t.Fatalf("point %d: %v grad %v", i, r.Status, r.Grad)
		}
		fd, err := tg.finiteDifference(sc, pts[i])
		if err != nil {
			t.Fatal(err)
		}
		for j := range fd {
			if math.Abs(fd[j]-r.Grad[j]) > gradTol*math.Max(1, math.Abs(fd[j])) {
				t.Errorf("point %d param %d: analytic %g, finite difference %g", i, j, r.Grad[j], fd[j])
			}
		}
	}
}

// The log target is the sum of the prior's log densities and the Gaussian
// log-likelihood (Bartsoen Eq. 7) of the observed force only; the strain
// column is observed too (dataset default: every model output with a
// column), with missing cells skipped.
func TestLogTargetComposition(t *testing.T) {
	s := loadStudy(t)
	if got := s.Data[0].Outputs; len(got) != 2 || got[1] != "strain" {
		t.Fatalf("observed outputs %v", got)
	}
	tg := New(s, 1)
	th := []float64{5100, 0.02}
	res, err := tg.Evaluate(context.Background(), [][]float64{th}, abi.WantLogTarget)
	if err != nil {
		t.Fatal(err)
	}
	want := s.Priors[0].LogPdf(th[0]) + s.Priors[1].LogPdf(th[1])
	if math.Abs(res[0].LogPrior-want) > 1e-12 {
		t.Fatalf("log prior %g want %g", res[0].LogPrior, want)
	}
	// Eq. 7 by hand over the 5 forces and the 2 observed strains.
	m := ligament.Model{RefLength: 30}
	obs := [][3]float64{{29.5, 5, math.NaN()}, {30.3, 60, 0.04}, {31.0, 150, math.NaN()}, {32.2, 420, 0.11}, {33.0, 560, math.NaN()}}
	ll := 0.0
	y := make([]float64, 2)
	for _, o := range obs {
		m.Eval(th, []float64{o[0]}, y)
		for j, sd := range []float64{8.0, 0.005} {
			if !math.IsNaN(o[j+1]) {
				ll += -math.Log(sd*math.Sqrt(2*math.Pi)) - (y[j]-o[j+1])*(y[j]-o[j+1])/(2*sd*sd)
			}
		}
	}
	if math.Abs(res[0].LogLik-ll) > 1e-9*math.Abs(ll) {
		t.Fatalf("log likelihood %.12g, by hand %.12g", res[0].LogLik, ll)
	}
}

// Results do not depend on the number of workers, bit for bit.
func TestWorkersDoNotChangeResults(t *testing.T) {
	s := loadStudy(t)
	rng := rand.New(rand.NewPCG(1, 2))
	pts, err := New(s, 1).DrawPrior(rng, 101)
	if err != nil {
		t.Fatal(err)
	}
	a, errA := New(s, 1).Evaluate(context.Background(), pts, abi.WantGradient)
	b, errB := New(s, 4).Evaluate(context.Background(), pts, abi.WantGradient)
	if errA != nil || errB != nil || len(a) != len(pts) || len(b) != len(pts) {
		t.Fatalf("evaluate: %v %v", errA, errB)
	}
	for i := range a {
		if a[i].LogLik != b[i].LogLik || a[i].LogPrior != b[i].LogPrior || a[i].Status != b[i].Status {
			t.Fatalf("point %d differs: %+v vs %+v", i, a[i], b[i])
		}
		for j := range a[i].Grad {
			if a[i].Grad[j] != b[i].Grad[j] {
				t.Fatalf("point %d gradient differs", i)
			}
		}
	}
}

// failing wraps a model: it fails (no equilibrium) for k > 6000 and faults
// like a trapped plugin for k < 0.
type failing struct{ abi.Model }

func (f failing) Eval(theta, x, y []float64) abi.Status {
	if theta[0] > 6000 {
		return abi.Failed
	}
	if theta[0] < 2500 {
		return abi.Trap
	}
	return f.Model.Eval(theta, x, y)
}
func (failing) Fault() error {
	return errors.New("plugin fake: kinfer_model_eval trapped: unreachable")
}

func TestFailuresAreCountedFaultsStop(t *testing.T) {
	s := loadStudy(t)
	s.Model = failing{s.Model}
	tg := New(s, 2)
	res, err := tg.Evaluate(context.Background(), [][]float64{{5000, 0}, {7000, 0}, {9999, 9}}, abi.WantLogTarget)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != abi.OK || res[1].Status != abi.Failed || !math.IsInf(res[1].LogLik, -1) || res[2].Status != abi.OutOfSupport {
		t.Fatalf("statuses %v %v %v", res[0].Status, res[1].Status, res[2].Status)
	}
	c := tg.Counts()
	if c.Evaluations != 2 || c.Failed != 1 || c.ByStatus["out-of-support"] != 1 {
		t.Fatalf("counts %+v", c)
	}
	_, err = tg.Evaluate(context.Background(), [][]float64{{5000, 0}, {2400, 0}}, abi.WantLogTarget)
	if err == nil || !strings.Contains(err.Error(), "plugin fake") {
		t.Fatalf("want the plugin's fault, got %v", err)
	}
}

// A prior with little mass inside the model's bounds is drawn exactly, by
// inversion from the start (below invertBelow, 0.1 %): k ~ normal(0, 600)
// holds 0.043 % of its mass in the ligament's [2000, 12000], where
// rejection needed about 2 300 tries a draw — each draw is the truncated
// prior's quantile of one uniform of the stream. The draws are the truncated normal's: mean
// 2156.73 and sd 148.24 (scipy.stats.truncnorm(2000/600, 20, 0, 600)).
func TestDrawPriorLittleMassInsideBounds(t *testing.T) {
	const n = 400
	s := loadStudy(t)
	defer s.Close()
	for j, p := range s.Free {
		if p.Name == "k" {
			d, err := prior.NewNormal(0, 600)
			if err != nil {
				t.Fatal(err)
			}
			s.Priors[j] = d
		}
	}
	pts, err := New(s, 1).DrawPrior(rand.New(rand.NewPCG(3, 1)), n)
	if err != nil {
		t.Fatal(err)
	}
	var q func(float64) float64
	for j, p := range s.Free {
		if p.Name == "k" {
			q, _, _ = prior.Truncate(s.Priors[j], p.Lower, p.Upper)
		}
	}
	rng := rand.New(rand.NewPCG(3, 1))
	if u := rng.Float64(); q == nil || pts[0][0] != q(u) {
		t.Errorf("the first draw %g is not the truncated prior's quantile of the stream's first uniform", pts[0][0])
	}
	var sum float64
	for _, th := range pts {
		if !(th[0] >= 2000 && th[0] <= 12000) {
			t.Fatalf("k = %g outside the bounds", th[0])
		}
		sum += th[0]
	}
	// 5 standard errors of the mean of n draws.
	if mean := sum / n; math.Abs(mean-2156.730245557653) > 5*148.24/math.Sqrt(n) {
		t.Errorf("mean k %g, truncated normal's 2156.73", mean)
	}
}
