package target

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/likelihood/gaussian"
	"github.com/kinfer/kinfer/builtin/models/ligament"
	"github.com/kinfer/kinfer/host/study"
)

// Tolerances of the least-squares tests.
const (
	// jacTolFD is the agreement of the analytic Jacobian with central
	// differences (error ≈ ε^⅔ ≈ 4e-11 of the scale, far below), and of
	// forward differences (≈ √ε ≈ 1.5e-8 relative, times the curvature).
	jacTolFD = 1e-6
	// llTol is the relative agreement of log L with C − ½‖r‖² (rounding of
	// sums of a few hundred terms).
	llTol = 1e-12
)

// lsqLigamentCSV: lengths 28..34 mm (slack, toe and linear region of Eq.
// 1 at L_r = 30), forces and strains of k = 5000, ε_r = 0.03 plus a fixed
// perturbation, one strain missing.
func lsqLigamentCSV(exact bool) string {
	m := ligament.Model{RefLength: 30}
	var b strings.Builder
	b.WriteString("length_mm,force_N,strain\n")
	y := make([]float64, 2)
	for i := 0; i < 13; i++ {
		L := 28 + 0.5*float64(i)
		m.Eval([]float64{5000, 0.03}, []float64{L}, y)
		if !exact {
			y[0] += 7 * math.Sin(float64(3*i+1))
			y[1] += 0.002 * math.Cos(float64(5*i+2))
		}
		if i == 4 {
			fmt.Fprintf(&b, "%g,%.17g,\n", L, y[0])
			continue
		}
		fmt.Fprintf(&b, "%g,%.17g,%.17g\n", L, y[0], y[1])
	}
	return b.String()
}

const lsqStudy = `name = "lsq"
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
k = { uniform = [2000.0, 12000.0] }
eps_r = { uniform = [-0.2, 0.3] }
[method]
use = "metropolis"
`

// loadLSQ loads lsqStudy plus extra TOML with the given data.
func loadLSQ(t *testing.T, extra, csv string) *study.Study {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(p, []byte(lsqStudy+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(context.Background(), p, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withMode is a target for s with the study's jacobian key set to mode.
func withMode(s *study.Study, mode string, workers int) *Target {
	s.JacobianMode = mode
	return New(s, workers)
}

func evalOne(t *testing.T, tg *Target, th []float64, want abi.Want) abi.Result {
	t.Helper()
	res, err := tg.Evaluate(context.Background(), [][]float64{th}, want)
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// The residuals are the Gaussian's (y − obs)/σ over all K×m values (0 for
// the missing strain), and log L = C − ½‖r‖² with C = −Σ log(σ√(2π)).
func TestResidualsAgreeWithLogLikelihood(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	tg := New(s, 2)
	if tg.Residuals() != 26 {
		t.Fatalf("R = %d, want 13 rows × 2 outputs", tg.Residuals())
	}
	r := evalOne(t, tg, []float64{5200, 0.025}, abi.WantResiduals)
	if r.Status != abi.OK || len(r.Residuals) != 26 || r.Jacobian != nil {
		t.Fatalf("status %v, %d residuals, jacobian %v", r.Status, len(r.Residuals), r.Jacobian != nil)
	}
	if r.Residuals[4*2+1] != 0 {
		t.Errorf("missing strain has residual %g", r.Residuals[9])
	}
	ss := 0.0
	for _, x := range r.Residuals {
		ss += x * x
	}
	term := s.Terms[0]
	want := gaussian.LogNormConst(term.Obs, term.Sigma) - ss/2
	if math.Abs(r.LogLik-want) > llTol*math.Abs(want) {
		t.Fatalf("log L %.15g, C − ½‖r‖² %.15g", r.LogLik, want)
	}
	// By hand for row 0: force (y − obs)/σ.
	y := make([]float64, 2)
	ligament.Model{RefLength: 30}.Eval([]float64{5200, 0.025}, []float64{28}, y)
	if got, w := r.Residuals[0], (y[0]-term.Obs[0])/8; math.Abs(got-w) > 1e-12*math.Abs(w) {
		t.Fatalf("r[0] = %g, by hand %g", got, w)
	}
}

// centralFD is ∂r/∂θ by central differences with step h_j (a reference
// independent of fdJacobians).
func centralFD(t *testing.T, tg *Target, th []float64, h []float64) []float64 {
	t.Helper()
	r0 := evalOne(t, tg, th, abi.WantResiduals).Residuals
	d := len(th)
	J := make([]float64, len(r0)*d)
	for j := range th {
		a, b := append([]float64(nil), th...), append([]float64(nil), th...)
		a[j] += h[j]
		b[j] -= h[j]
		ra := evalOne(t, tg, a, abi.WantResiduals).Residuals
		rb := evalOne(t, tg, b, abi.WantResiduals).Residuals
		for i := range r0 {
			J[i*d+j] = (ra[i] - rb[i]) / (2 * h[j])
		}
	}
	return J
}

func compareJac(t *testing.T, what string, got, want []float64, d int, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	// Scale per column: the largest entry of the reference column.
	scale := make([]float64, d)
	for i, w := range want {
		scale[i%d] = math.Max(scale[i%d], math.Abs(w))
	}
	for i := range got {
		if e := math.Abs(got[i] - want[i]); e > tol*math.Max(scale[i%d], 1e-300) {
			t.Fatalf("%s: J[%d,%d] = %.12g, reference %.12g (column scale %g)", what, i/d, i%d, got[i], want[i], scale[i%d])
		}
	}
}

// The analytic Jacobian (the ligament's ∂y/∂θ times the Gaussian's 1/σ)
// agrees with central differences, and so do the host's forward and
// central differences; points in the toe (ε < 2ε_l) and linear regions.
func TestJacobianModesAgree(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	for _, th := range [][]float64{{5200, 0.025}, {9000, -0.05}, {2500, 0.2}} {
		ref := centralFD(t, withMode(s, study.JacobianCentral, 1), th, []float64{1e-2, 1e-7})
		for _, mode := range []string{study.JacobianAnalytic, study.JacobianForward, study.JacobianCentral} {
			tg := withMode(s, mode, 2)
			r := evalOne(t, tg, th, abi.WantJacobian)
			if r.Status != abi.OK || r.Residuals == nil {
				t.Fatalf("%s at %v: status %v", mode, th, r.Status)
			}
			tol := jacTolFD
			if mode == study.JacobianForward {
				tol = 1e-5 // √ε·|x| steps: error ≈ h·|∂²r|/2
			}
			compareJac(t, fmt.Sprintf("%s at %v", mode, th), r.Jacobian, ref, 2, tol)
		}
	}
	if got := withMode(s, study.JacobianAuto, 1).JacobianMode(); got != "analytic" {
		t.Fatalf("auto mode with the ligament's Jacobian and the Gaussian's slopes: %s", got)
	}
}

// Jacobians (analytic and by differences) and residuals are bit-identical
// for any number of workers, and so is the count of difference points.
func TestJacobianWorkersIdentical(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	var pts [][]float64
	for i := 0; i < 23; i++ {
		pts = append(pts, []float64{2100 + 430*float64(i), -0.19 + 0.021*float64(i)})
	}
	for _, mode := range []string{study.JacobianAnalytic, study.JacobianForward, study.JacobianCentral} {
		var first []abi.Result
		var evals int
		for _, w := range []int{1, 2, 5} {
			tg := withMode(s, mode, w)
			res, err := tg.Evaluate(context.Background(), pts, abi.WantJacobian)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first, evals = res, tg.Counts().JacobianEvals
				continue
			}
			if tg.Counts().JacobianEvals != evals {
				t.Fatalf("%s: %d difference points on %d workers, %d on 1", mode, tg.Counts().JacobianEvals, w, evals)
			}
			for i := range res {
				for k := range res[i].Jacobian {
					if res[i].Jacobian[k] != first[i].Jacobian[k] {
						t.Fatalf("%s, %d workers: point %d J[%d] = %v, 1 worker %v", mode, w, i, k, res[i].Jacobian[k], first[i].Jacobian[k])
					}
				}
				for k := range res[i].Residuals {
					if res[i].Residuals[k] != first[i].Residuals[k] {
						t.Fatalf("%s: residual differs", mode)
					}
				}
			}
		}
		if want := map[string]int{study.JacobianAnalytic: 0, study.JacobianForward: 23 * 2, study.JacobianCentral: 23 * 4}[mode]; evals != want {
			t.Errorf("%s: %d difference points, want %d", mode, evals, want)
		}
	}
}

// The step rule: forward steps √ε·max(|x|, min(1, range)), backward at
// the upper bound; central steps ∛ε·…, one-sided (h, 2h) within h of a
// bound; a range smaller than the step shrinks it to the room there is.
func TestFDStepRule(t *testing.T) {
	h, n := fdStep(5000, 2000, 12000, 0, false)
	if n != 1 || math.Abs(h[0]-fdEtaForward*5000) > 1e-3*fdEtaForward*5000 {
		t.Fatalf("forward at 5000: %v", h[:n])
	}
	if h, _ := fdStep(12000, 2000, 12000, 0, false); !(h[0] < 0) {
		t.Fatalf("forward at the upper bound steps %g, want backward", h[0])
	}
	if h, _ := fdStep(0, 0, 1e-4, 0, false); math.Abs(h[0]-fdEtaForward*1e-4) > 1e-3*fdEtaForward*1e-4 {
		t.Fatalf("forward at 0 on a range 1e-4: %g, want √ε·1e-4", h[0])
	}
	if h, n := fdStep(0.1, -0.5, 0.4, 0, true); n != 2 || h[0] != -h[1] || !(h[1] > 0) {
		t.Fatalf("central inside: %v", h[:n])
	}
	if h, n := fdStep(-0.5, -0.5, 0.4, 0, true); n != 2 || !(h[0] > 0 && h[1] > h[0]) {
		t.Fatalf("central at the lower bound: %v, want (h, 2h)", h[:n])
	}
	if h, n := fdStep(1000, 1000, 1000+1e-6, 0, false); n != 1 || !(h[0] > 0 && h[0] <= 1e-6) {
		t.Fatalf("forward on a range smaller than the step: %v", h[:n])
	}
	// 100 prior interquartile ranges below 1 are the typical size: a
	// parameter of size 1e-8 on a box of width 1e9 (a lognormal prior) is
	// stepped by √ε·1.35e-6, not √ε·1 (audit 5); an interquartile range
	// above 0.01 changes nothing.
	if h, _ := fdStep(1e-8, 0, 1e9, 1.35e-8, false); math.Abs(h[0]-fdEtaForward*1.35e-6) > 1e-3*fdEtaForward*1.35e-6 {
		t.Fatalf("forward at 1e-8 with an interquartile range 1.35e-8: %g, want √ε·1.35e-6", h[0])
	}
	if h, _ := fdStep(0, -0.2, 0.3, 0.25, false); math.Abs(h[0]-fdEtaForward*0.5) > 1e-3*fdEtaForward*0.5 {
		t.Fatalf("forward at 0 on [-0.2, 0.3], interquartile range 0.25: %g, want √ε·0.5 (the range)", h[0])
	}
	if h, _ := fdStep(5000, 2000, 12000, 1e-3, false); math.Abs(h[0]-fdEtaForward*5000) > 1e-3*fdEtaForward*5000 {
		t.Fatalf("forward at 5000 with an interquartile range 1e-3: %g, want √ε·5000 (|x| dominates)", h[0])
	}
	// Every step is exact: x + h − x == h.
	for _, x := range []float64{0.1, 3.7, 12345.678, -0.3} {
		h, n := fdStep(x, -1e5, 1e5, 0, true)
		for k := 0; k < n; k++ {
			if (x+h[k])-x != h[k] {
				t.Fatalf("step %g at %g is not exact", h[k], x)
			}
		}
	}
}

// A start on bounds (k at its upper bound 12000, ε_r at its upper 0.3):
// the difference steps go inwards, the point is evaluated, and the
// Jacobian agrees with the analytic one.
func TestJacobianOnBounds(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	th := []float64{12000, 0.3}
	an := evalOne(t, withMode(s, study.JacobianAnalytic, 1), th, abi.WantJacobian)
	for _, mode := range []string{study.JacobianForward, study.JacobianCentral} {
		r := evalOne(t, withMode(s, mode, 2), th, abi.WantJacobian)
		if r.Status != abi.OK || r.Jacobian == nil {
			t.Fatalf("%s on the bounds: status %v, jacobian %v", mode, r.Status, r.Jacobian != nil)
		}
		compareJac(t, mode+" on the bounds", r.Jacobian, an.Jacobian, 2, 1e-5)
	}
}

// An exact fit: the data are the model at θ* = (5000, 0.03), so every
// residual there is 0 (to rounding) and the Jacobian is still the
// model's.
func TestExactFitResiduals(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(true))
	r := evalOne(t, withMode(s, study.JacobianAuto, 1), []float64{5000, 0.03}, abi.WantJacobian)
	for i, x := range r.Residuals {
		if math.Abs(x) > 1e-12 {
			t.Fatalf("r[%d] = %g at the exact fit", i, x)
		}
	}
	nonzero := 0
	for _, x := range r.Jacobian {
		if x != 0 {
			nonzero++
		}
	}
	if nonzero < 20 {
		t.Fatalf("Jacobian at the exact fit has %d non-zero entries", nonzero)
	}
}

// nanLik is a Gaussian whose residuals are NaN when y (the first force)
// exceeds a level, with status OK: a broken likelihood.
type nanLik struct{ gaussian.Likelihood }

func (l nanLik) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	st := l.Likelihood.Residuals(m, y, obs, sigma, r)
	if y[len(y)-2] > 3000 {
		r[3] = math.NaN()
	}
	return st
}

// A NaN residual makes the point non-finite: a counted failure with log
// likelihood −∞, no residuals and no Jacobian; the other points go on.
func TestNaNResidualIsCountedFailure(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	s.Terms[0].Likelihood = nanLik{}
	tg := withMode(s, study.JacobianForward, 2)
	res, err := tg.Evaluate(context.Background(), [][]float64{{5000, 0.03}, {11000, 0.3}}, abi.WantJacobian)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != abi.OK || res[0].Jacobian == nil {
		t.Fatalf("good point: %v", res[0].Status)
	}
	if res[1].Status != abi.NonFinite || res[1].Residuals != nil || res[1].Jacobian != nil || !math.IsInf(res[1].LogLik, -1) {
		t.Fatalf("NaN residual: status %v, residuals %v, log L %g", res[1].Status, res[1].Residuals != nil, res[1].LogLik)
	}
	if c := tg.Counts(); c.Failed != 1 || c.ByStatus["non-finite"] != 1 || c.Jacobians != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// stepFails is the ligament failing (no solution) for k in (lo, hi)
// except at k = except.
type stepFails struct {
	ligament.Model
	lo, hi, except float64
}

func (m stepFails) Eval(theta, x, y []float64) abi.Status {
	if theta[0] > m.lo && theta[0] < m.hi && theta[0] != m.except {
		return abi.Failed
	}
	return m.Model.Eval(theta, x, y)
}

// A difference point that fails is retried on the other side (forward),
// or replaced by the stencil's other point (central); when both sides
// fail the point keeps its residuals but has no Jacobian.
func TestFailedDifferenceStep(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	an := evalOne(t, withMode(s, study.JacobianAnalytic, 1), []float64{5000, 0.03}, abi.WantJacobian).Jacobian
	s.Model = stepFails{ligament.Model{RefLength: 30}, 5000, 5001, 0} // just above k = 5000 fails
	for _, mode := range []string{study.JacobianForward, study.JacobianCentral} {
		r := evalOne(t, withMode(s, mode, 2), []float64{5000, 0.03}, abi.WantJacobian)
		if r.Status != abi.OK || r.Jacobian == nil {
			t.Fatalf("%s: status %v jacobian %v", mode, r.Status, r.Jacobian != nil)
		}
		compareJac(t, mode+" with a failing side", r.Jacobian, an, 2, 1e-5)
	}
	s.Model = stepFails{ligament.Model{RefLength: 30}, 4999, 5001, 5000} // both sides
	tg := withMode(s, study.JacobianForward, 2)
	res, err := tg.Evaluate(context.Background(), [][]float64{{5000, 0.03}, {5001, 0.03}, {7000, 0.03}}, abi.WantJacobian)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != abi.OK || res[0].Residuals == nil || res[0].Jacobian != nil {
		t.Fatalf("both sides failing: status %v, jacobian %v", res[0].Status, res[0].Jacobian != nil)
	}
	if res[2].Jacobian == nil {
		t.Fatalf("a point far from the failures has no Jacobian")
	}
}

// A term whose likelihood gives no residuals: asking for them is an error
// naming the term; the log target alone is fine.
func TestResidualsWithoutCapability(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	s.Terms[0].Likelihood = logOnly{}
	tg := New(s, 1)
	if tg.Residuals() != 0 {
		t.Fatalf("R = %d without residuals", tg.Residuals())
	}
	if _, err := tg.Evaluate(context.Background(), [][]float64{{5000, 0.03}}, abi.WantLogTarget); err != nil {
		t.Fatal(err)
	}
	_, err := tg.Evaluate(context.Background(), [][]float64{{5000, 0.03}}, abi.WantResiduals)
	if err == nil || !strings.Contains(err.Error(), "likelihood term 1") || !strings.Contains(err.Error(), "residuals") {
		t.Fatalf("want an error naming term 1, got %v", err)
	}
}

type logOnly struct{}

func (logOnly) Spec() abi.Spec { return abi.Spec{Kind: abi.KindLikelihood, Name: "logonly"} }
func (logOnly) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	return gaussian.Likelihood{}.LogLikelihood(m, y, obs, sigma)
}

// constraintsTOML has one constraint of each kind on the ligament study:
// a soft upper bound 4000 on k, k and ε_r near their mean (units mixed, a
// test of the formula only), force errors above 5 N, and the force's slope
// over length, against zero and against the data's slope.
const constraintsTOML = `
[[constraint]]
kind = "range"
params = ["k"]
upper = 4000
weight = 0.01
[[constraint]]
kind = "group_mean"
params = ["*"]
weight = 0.5
[[constraint]]
kind = "hinge"
outputs = ["force_N"]
threshold = 5
weight = 0.3
[[constraint]]
kind = "smooth"
outputs = ["force_N"]
time = "length_mm"
weight = 0.02
[[constraint]]
kind = "smooth"
name = "force slope"
outputs = ["force_N"]
time = "length_mm"
against = "data"
weight = 0.05
`

// Each constraint's residuals by hand at θ = (5200, 0.025); they follow
// the term's 26 residuals in study order, and log L = C − ½‖r‖² over the
// whole vector, so that every method sees the same objective.
func TestConstraintResiduals(t *testing.T) {
	s := loadLSQ(t, constraintsTOML, lsqLigamentCSV(false))
	tg := New(s, 2)
	const K = 13
	if want := 26 + 1 + 2 + K + (K - 1) + (K - 1); tg.Residuals() != want {
		t.Fatalf("R = %d, want %d", tg.Residuals(), want)
	}
	th := []float64{5200, 0.025}
	r := evalOne(t, tg, th, abi.WantResiduals)
	if r.Status != abi.OK {
		t.Fatal(r.Status)
	}
	model := ligament.Model{RefLength: 30}
	y := make([]float64, 2*K)
	x := make([]float64, K)
	obs := s.Terms[0].Obs
	for i := range x {
		x[i] = 28 + 0.5*float64(i)
	}
	model.Eval(th, x, y)
	want := []float64{0.01 * (5200 - 4000)}
	mean := (5200 + 0.025) / 2
	want = append(want, 0.5*(5200-mean), 0.5*(0.025-mean))
	for i := 0; i < K; i++ {
		want = append(want, 0.3*math.Max(0, math.Abs(y[2*i]-obs[2*i])-5))
	}
	for i := 0; i+1 < K; i++ {
		want = append(want, 0.02*(y[2*i+2]-y[2*i])/0.5)
	}
	for i := 0; i+1 < K; i++ {
		want = append(want, 0.05*((y[2*i+2]-y[2*i])-(obs[2*i+2]-obs[2*i]))/0.5)
	}
	got := r.Residuals[26:]
	active := 0
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("constraint residual %d = %.12g, by hand %.12g", i, got[i], want[i])
		}
		if i >= 3 && i < 3+K && want[i] > 0 {
			active++
		}
	}
	if active == 0 || active == K {
		t.Fatalf("the hinge is active on %d of %d rows; the test wants both cases", active, K)
	}
	ss := 0.0
	for _, v := range r.Residuals {
		ss += v * v
	}
	c := gaussian.LogNormConst(s.Terms[0].Obs, s.Terms[0].Sigma)
	if math.Abs(r.LogLik-(c-ss/2)) > llTol*math.Abs(r.LogLik) {
		t.Fatalf("log L %.15g, C − ½‖r‖² %.15g", r.LogLik, c-ss/2)
	}
	// The log target alone (another method) carries the same penalty.
	lt := evalOne(t, tg, th, abi.WantLogTarget)
	if lt.LogLik != r.LogLik {
		t.Fatalf("log L without residuals %.17g, with %.17g", lt.LogLik, r.LogLik)
	}
}

// With constraints, the analytic Jacobian (the constraints' exact
// derivatives chained with the model's) agrees with central differences,
// and the analytic gradient of the log target, which now includes
// −½‖r_c‖², with finite differences of it.
func TestConstraintDerivatives(t *testing.T) {
	s := loadLSQ(t, constraintsTOML, lsqLigamentCSV(false))
	for _, th := range [][]float64{{5200, 0.025}, {3500, 0.1}} {
		ref := centralFD(t, withMode(s, study.JacobianCentral, 1), th, []float64{1e-2, 1e-7})
		r := evalOne(t, withMode(s, study.JacobianAnalytic, 2), th, abi.WantJacobian)
		compareJac(t, fmt.Sprintf("analytic with constraints at %v", th), r.Jacobian, ref, 2, jacTolFD)
		tg := New(s, 1)
		g := evalOne(t, tg, th, abi.WantGradient).Grad
		fd, err := tg.finiteDifference(tg.newScratch(), th)
		if err != nil {
			t.Fatal(err)
		}
		for j := range g {
			if math.Abs(g[j]-fd[j]) > gradTol*math.Max(1, math.Abs(fd[j])) {
				t.Errorf("at %v: ∂/∂θ%d analytic %g, finite difference %g", th, j, g[j], fd[j])
			}
		}
	}
}

// With [transform] the Jacobian is in the method's coordinates x: the
// analytic one, pulled back through ∂θ/∂x row by row, agrees with
// differences taken in x (which perturb x and evaluate θ = T(x)).
func TestJacobianWithTransforms(t *testing.T) {
	s := loadLSQ(t, "[transform]\nk = \"log\"\neps_r = { multiplier = 0.05 }\n", lsqLigamentCSV(false))
	x, err := s.Inverse([]float64{5200, 0.025})
	if err != nil {
		t.Fatal(err)
	}
	an := evalOne(t, withMode(s, study.JacobianAnalytic, 2), x, abi.WantJacobian)
	ce := evalOne(t, withMode(s, study.JacobianCentral, 2), x, abi.WantJacobian)
	if an.Theta[0] != x[0] || an.Jacobian == nil || ce.Jacobian == nil {
		t.Fatalf("results %+v %+v", an, ce)
	}
	compareJac(t, "analytic vs central in x", an.Jacobian, ce.Jacobian, 2, jacTolFD)
	// For θ_k = exp(x_k), ∂r/∂x_k = ∂r/∂θ_k · θ_k: against the Jacobian in
	// θ of the same study without transforms.
	th := s.Forward(x)
	s.Transforms, s.XParams = nil, s.Free
	jt := evalOne(t, withMode(s, study.JacobianAnalytic, 1), th, abi.WantJacobian).Jacobian
	for i := 0; i < len(jt)/2; i++ {
		if w := jt[2*i] * th[0]; math.Abs(an.Jacobian[2*i]-w) > 1e-12*math.Abs(w) {
			t.Fatalf("row %d: ∂r/∂x_k %g, ∂r/∂θ_k·θ_k %g", i, an.Jacobian[2*i], w)
		}
	}
}

// concurrent is the ligament counting how many of its evaluations run at
// once (each lasts at least 10 ms, so evaluations on two workers overlap
// whatever the machine's load).
type concurrent struct {
	ligament.Model
	active, most *atomic.Int32
}

func (m concurrent) Eval(theta, x, y []float64) abi.Status {
	n := m.active.Add(1)
	for {
		old := m.most.Load()
		if n <= old || m.most.CompareAndSwap(old, n) {
			break
		}
	}
	time.Sleep(10 * time.Millisecond)
	m.active.Add(-1)
	return m.Model.Eval(theta, x, y)
}

// The difference points of a Jacobian are one batch on the workers: with
// 2 workers two of them run at once, never more; with 1, one.
func TestDifferencesUseTheWorkers(t *testing.T) {
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	for _, w := range []int{1, 2} {
		var active, most atomic.Int32
		s.Model = concurrent{ligament.Model{RefLength: 30}, &active, &most}
		tg := withMode(s, study.JacobianCentral, w)
		res, err := tg.Evaluate(context.Background(), [][]float64{{5000, 0.03}}, abi.WantJacobian)
		if err != nil || res[0].Jacobian == nil {
			t.Fatalf("%v %v", err, res[0].Status)
		}
		if got := most.Load(); int(got) != w {
			t.Errorf("%d workers: at most %d evaluations at once, want %d", w, got, w)
		}
	}
}

// A parameter of size 1e-8 under a lognormal prior (its box (0, 1e9]):
// difference steps scale with the prior's interquartile range, so forward
// and central Jacobians agree with the analytic one. With the typical size
// 1 of before, the forward step was 1.5 times the parameter and the central
// one 600 times, and levmar stopped far from the optimum (audit 5: b1 9.03
// for 10.24, b2's standard error 164 times too large).
func TestJacobianSmallParameter(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,x2,y\n")
	for i := range 14 {
		x := 1e7 * float64(2*i+1) // y = b1 (1 − exp(−b2 x)), b2 ≈ 1e-8
		fmt.Fprintf(&b, "%g,0,%.17g\n", x, 10*(1-math.Exp(-1e-8*x))+0.05*math.Sin(float64(i)))
	}
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const toml = `name = "small"
[model]
use = "nist"
problem = "Misra1a"
[[data]]
name = "d"
file = "d.csv"
[[likelihood]]
use = "gaussian"
sigma = 0.3
[prior]
b1 = { uniform = [1.0, 50.0] }
b2 = { lognormal = [-18.42, 1.0] }
[fixed]
b3 = 0.0
b4 = 0.0
b5 = 0.0
b6 = 0.0
b7 = 0.0
b8 = 0.0
b9 = 0.0
[method]
use = "levmar"
`
	p := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(p, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(context.Background(), p, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	th := []float64{9, 1.1e-8}
	ref := evalOne(t, withMode(s, study.JacobianAnalytic, 1), th, abi.WantJacobian)
	if ref.Status != abi.OK || ref.Jacobian == nil {
		t.Fatalf("analytic: status %v", ref.Status)
	}
	for _, c := range []struct {
		mode string
		tol  float64 // relative, per column: forward ≈ √ε·(curvature), central ≈ ε^⅔
	}{{study.JacobianForward, 1e-5}, {study.JacobianCentral, 1e-6}} {
		r := evalOne(t, withMode(s, c.mode, 1), th, abi.WantJacobian)
		if r.Status != abi.OK || r.Jacobian == nil {
			t.Fatalf("%s: status %v", c.mode, r.Status)
		}
		compareJac(t, c.mode, r.Jacobian, ref.Jacobian, 2, c.tol)
	}
}

// A point with many outputs (rows × outputs) is evaluated in smaller
// chunks, down to one point, so that a worker's scratch stays near
// maxScratchOutputs values (audit 5: 8 points × 5.5 M rows × 2 outputs =
// 704 MB per worker); the results do not depend on it.
func TestChunkCapBoundsScratch(t *testing.T) {
	spec := abi.Spec{Outputs: []abi.Column{{Name: "f"}, {Name: "e"}}}
	for _, c := range []struct{ k, want int }{{1000, ChunkSize}, {300_000, 6}, {3_000_000, 1}} {
		s := &study.Study{Data: []*study.Dataset{{K: c.k}}, ModelInfo: study.Component{Spec: spec}}
		if got := chunkCap(s); got != c.want {
			t.Errorf("%d rows of 2 outputs: chunk cap %d, want %d", c.k, got, c.want)
		}
	}
	s := loadLSQ(t, "", lsqLigamentCSV(false))
	var pts [][]float64
	for i := range 40 {
		pts = append(pts, []float64{2500 + 200*float64(i), -0.1 + 0.01*float64(i)})
	}
	ref, err := New(s, 2).Evaluate(context.Background(), pts, abi.WantLogTarget|abi.WantGradient)
	if err != nil {
		t.Fatal(err)
	}
	one := New(s, 2)
	one.chunkCap = 1
	got, err := one.Evaluate(context.Background(), pts, abi.WantLogTarget|abi.WantGradient)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ref {
		if math.Float64bits(got[i].LogLik) != math.Float64bits(ref[i].LogLik) || got[i].Status != ref[i].Status ||
			math.Float64bits(got[i].Grad[0]) != math.Float64bits(ref[i].Grad[0]) {
			t.Fatalf("point %d: chunks of one give %+v, of 8 %+v", i, got[i], ref[i])
		}
	}
}

// A coordinate ±∞ of a transformed study is out of the support, even where
// the x-box is unbounded (audit 10, author10 F15: k = +∞ under a
// multiplier of 1000, whose box is unbounded above, was evaluated at the
// transform's limit θ = 10·π0 and told back as a sample of +∞).
func TestInfiniteCoordinateOutOfSupport(t *testing.T) {
	s := loadLSQ(t, "[transform]\nk = { multiplier = 1000.0 }\n", "length_mm,force_N,strain\n31,100,0.03\n32,300,0.06\n")
	if j := 0; !math.IsInf(s.XParams[j].Upper, 1) {
		t.Fatalf("x-box of k %v: the test needs it unbounded above", s.XParams[j])
	}
	tg := New(s, 1)
	for _, x := range [][]float64{{math.Inf(1), 0.05}, {0, math.Inf(-1)}} {
		if r := evalOne(t, tg, x, abi.WantLogTarget); r.Status != abi.OutOfSupport {
			t.Errorf("x = %v: status %v, log prior %v", x, r.Status, r.LogPrior)
		}
	}
}

// callRecorder is a batch model recording the size of every call.
type callRecorder struct {
	abi.Model
	mu    sync.Mutex
	sizes map[float64]int // a point's first coordinate → its call's size
}

func (c *callRecorder) EvalBatch(thetas [][]float64, x []float64, ys [][]float64, st []abi.Status) {
	for i, th := range thetas {
		st[i] = c.Model.Eval(th, x, ys[i])
	}
	c.mu.Lock()
	for _, th := range thetas {
		c.sizes[th[0]] = len(thetas)
	}
	c.mu.Unlock()
}

// recordedCalls is lsqStudy with its model recording its calls' sizes,
// and n points of distinct k.
func recordedCalls(t *testing.T, n int) (*study.Study, *callRecorder, [][]float64) {
	t.Helper()
	s := loadLSQ(t, "", "length_mm,force_N,strain\n31,100,0.03\n32,300,0.06\n")
	rec := &callRecorder{Model: s.Model, sizes: map[float64]int{}}
	s.Model = rec
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = []float64{3000 + float64(i), 0.05}
	}
	return s, rec, pts
}

// A remote worker's chunk, made of whole local calls (CallPoints) and
// evaluated with EvaluateInCalls, puts every point in a call of the size
// it has in the local run: a plugin's fuel is pooled over the same points
// (audit 10, author10 F17).
func TestEvaluateInCallsMatchesLocalCalls(t *testing.T) {
	n := 100
	s, rec, pts := recordedCalls(t, n)
	if _, err := New(s, 2).Evaluate(context.Background(), pts, abi.WantLogTarget); err != nil {
		t.Fatal(err)
	}
	local := rec.sizes
	rec.sizes = map[float64]int{}
	call := CallPoints(s, n)
	chunk := 24 - 24%call // a remote chunk of whole calls
	for lo := 0; lo < n; lo += chunk {
		if _, err := New(s, 1).EvaluateInCalls(context.Background(), pts[lo:min(lo+chunk, n)], abi.WantLogTarget, call); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pts {
		if rec.sizes[p[0]] != local[p[0]] {
			t.Fatalf("point %v: a call of %d remotely, %d locally (call %d)", p, rec.sizes[p[0]], local[p[0]], call)
		}
	}
}

// The call size of a remote chunk applies to the chunk's points only: the
// finite-difference points that follow are grouped as the worker's own
// (review 13: they were called in groups of the batch's call size, so a
// chunk holding the whole batch no longer grouped them as locally).
func TestEvaluateInCallsFiniteDifferences(t *testing.T) {
	n := 16
	s, rec, pts := recordedCalls(t, n)
	if _, err := withMode(s, "central-difference", 2).Evaluate(context.Background(), pts, abi.WantJacobian); err != nil {
		t.Fatal(err)
	}
	local := rec.sizes
	rec.sizes = map[float64]int{}
	if _, err := withMode(s, "central-difference", 1).EvaluateInCalls(context.Background(), pts, abi.WantJacobian, CallPoints(s, n)); err != nil {
		t.Fatal(err)
	}
	for k, v := range local {
		if rec.sizes[k] != v {
			t.Fatalf("point with k = %v: a call of %d remotely, %d locally", k, rec.sizes[k], v)
		}
	}
}
