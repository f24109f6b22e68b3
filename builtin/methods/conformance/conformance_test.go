package conformance

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/prior"
)

// refTol: REFERENCES.md prints the analytic values to 5–6 significant
// digits, so the closed forms here must agree to within half a unit in the
// last printed place.
const refTol = 5e-6

func TestCasesMatchReferences(t *testing.T) {
	// docs/REFERENCES.md, "Samplers", analytic checks.
	want := map[string]struct {
		mean, sd []float64
		logZ     float64
	}{
		"stdnormal-1d": {[]float64{0}, []float64{1}, -2.995732}, // −ln 20
		"conflict-1d":  {[]float64{4.80769}, []float64{0.19612}, -12.95778},
		"conjugate-2d": {[]float64{0.9, -0.45}, []float64{math.Sqrt(0.9), math.Sqrt(0.9)}, -4.20296},
		"gauss-10d":    {repeat(10, 0.4), repeat(10, math.Sqrt(0.2)), -9.04719},
	}
	for _, c := range Cases() {
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("case %s has no reference", c.Name)
			continue
		}
		if math.Abs(c.LogZ-w.logZ) > refTol*math.Abs(w.logZ) {
			t.Errorf("%s: log Z = %.7g, REFERENCES.md %v", c.Name, c.LogZ, w.logZ)
		}
		for i := range w.mean {
			if math.Abs(c.PostMean[i]-w.mean[i]) > refTol*math.Max(1, math.Abs(w.mean[i])) {
				t.Errorf("%s: mean[%d] = %.7g, want %v", c.Name, i, c.PostMean[i], w.mean[i])
			}
			if math.Abs(math.Sqrt(c.PostVar[i])-w.sd[i]) > refTol {
				t.Errorf("%s: sd[%d] = %.7g, want %v", c.Name, i, math.Sqrt(c.PostVar[i]), w.sd[i])
			}
		}
		if len(c.Target.Prior) != len(c.Target.Params) || len(c.PostMean) != len(c.Target.Params) {
			t.Errorf("%s: inconsistent dimensions", c.Name)
		}
	}
}

// The analytic log Z of every case agrees with a numerical integration
// over a grid of the prior (1-D cases: the evidence integral by Simpson).
func TestLogZByQuadrature(t *testing.T) {
	// quadTol: Simpson with 20000 intervals on smooth integrands.
	const quadTol = 1e-9
	for _, c := range []Case{StdNormal1D(), Conflict1D()} {
		h := NewHost(c.Target, 1)
		f := func(x float64) float64 {
			ll, _ := c.Target.LogLik([]float64{x})
			return math.Exp(h.LogPrior([]float64{x}) + ll)
		}
		const n = 20000
		a, b := c.Target.Params[0].Lower, c.Target.Params[0].Upper
		step := (b - a) / n
		s := f(a) + f(b)
		for i := 1; i < n; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			s += w * f(a+float64(i)*step)
		}
		z := s * step / 3
		if math.Abs(math.Log(z)-c.LogZ) > quadTol*math.Abs(c.LogZ) {
			t.Errorf("%s: log ∫prior·L = %.12g, analytic %.12g", c.Name, math.Log(z), c.LogZ)
		}
	}
}

// drawOnce is a minimal method: one batch of n prior draws, then done.
type drawOnce struct {
	n    int
	got  []abi.Result
	told bool
}

func (m *drawOnce) Spec() abi.Spec         { return abi.Spec{Kind: abi.KindMethod, Name: "draw-once"} }
func (m *drawOnce) Init(abi.Problem) error { return nil }
func (m *drawOnce) Ask() (abi.Batch, error) {
	return abi.Batch{Draw: m.n, Want: abi.WantLogTarget}, nil
}
func (m *drawOnce) Tell(r []abi.Result) error { m.got, m.told = r, true; return nil }
func (m *drawOnce) Done() bool                { return m.told }
func (m *drawOnce) Report() (abi.Report, error) {
	var rep abi.Report
	for _, r := range m.got {
		rep.Samples = append(rep.Samples, abi.Sample{Theta: r.Theta, LogPrior: r.LogPrior, LogLik: r.LogLik})
	}
	return rep, nil
}

func TestHostDrawsFromPrior(t *testing.T) {
	// Prior draws by inverse transform reproduce the prior's moments:
	// normal(0, 3) has mean 0 and variance 9; with 20000 draws the standard
	// errors are 0.021 (mean) and 0.09 (variance); drawTol is 5 of them.
	const n = 20000
	drawTol := []float64{5 * 3 / math.Sqrt(n), 5 * 9 * math.Sqrt(2.0/n)}
	c := Conjugate2D()
	m := &drawOnce{n: n}
	rep, h, err := Run(m, c.Target, 42)
	if err != nil {
		t.Fatal(err)
	}
	if h.Draws != n || h.Evals != n || h.Asks != 1 {
		t.Errorf("host counters: draws %d evals %d asks %d", h.Draws, h.Evals, h.Asks)
	}
	mean, v := Moments(rep.Samples)
	for i := range mean {
		if math.Abs(mean[i]) > drawTol[0] || math.Abs(v[i]-9) > drawTol[1] {
			t.Errorf("prior draw moments[%d] = %v, %v; want 0, 9", i, mean[i], v[i])
		}
	}
	for _, r := range m.got {
		want := h.LogPrior(r.Theta)
		ll, _ := c.Target.LogLik(r.Theta)
		if r.Status != abi.OK || r.LogPrior != want || r.LogLik != ll {
			t.Fatalf("result %+v: want log prior %v, log lik %v", r, want, ll)
		}
	}
	// Same seed, same draws.
	m2 := &drawOnce{n: n}
	rep2, _, _ := Run(m2, c.Target, 42)
	for i := range rep.Samples {
		if rep.Samples[i].Theta[0] != rep2.Samples[i].Theta[0] {
			t.Fatal("host draws are not reproducible")
		}
	}
}

func TestHostStatuses(t *testing.T) {
	u, _ := prior.NewUniform(-1, 1)
	tgt := Target{
		Params: []abi.Param{{Name: "x", Lower: -1, Upper: 0.5}},
		Prior:  []prior.Dist{u},
		LogLik: func(th []float64) (float64, abi.Status) {
			switch {
			case th[0] < -0.5:
				return 0, abi.Failed
			case th[0] < 0:
				return math.NaN(), abi.OK
			}
			return -1, abi.OK
		},
	}
	h := NewHost(tgt, 1)
	for _, c := range []struct {
		x    float64
		want abi.Status
	}{{-0.7, abi.Failed}, {-0.2, abi.NonFinite}, {0.2, abi.OK}, {0.7, abi.OutOfSupport}, {2, abi.OutOfSupport}} {
		r, err := h.Eval([]float64{c.x}, abi.WantLogTarget)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != c.want {
			t.Errorf("x = %v: status %v, want %v", c.x, r.Status, c.want)
		}
		if c.want != abi.OK && !math.IsInf(r.LogLik, -1) {
			t.Errorf("x = %v: log lik %v with status %v, want -Inf", c.x, r.LogLik, r.Status)
		}
	}
	if h.Failures != 2 || h.OutOfSupport != 2 || h.Evals != 3 {
		t.Errorf("counters: failures %d out-of-support %d evals %d", h.Failures, h.OutOfSupport, h.Evals)
	}
	if _, err := h.Eval([]float64{0.2}, abi.WantGradient); err == nil {
		t.Error("a gradient was wanted from a target without one: want an error")
	}
}

func TestHostGradientsAndResiduals(t *testing.T) {
	// fdTol: central differences of quadratic log densities.
	const fdTol, fdStep = 1e-6, 1e-5
	for _, c := range Cases() {
		h := NewHost(c.Target, 3)
		theta := h.Draw()
		r, err := h.Eval(theta, abi.WantGradient|abi.WantResiduals|abi.WantJacobian)
		if err != nil {
			t.Fatal(err)
		}
		d := len(theta)
		for i := range d {
			tp, tm := append([]float64(nil), theta...), append([]float64(nil), theta...)
			tp[i] += fdStep
			tm[i] -= fdStep
			rp, _ := h.Eval(tp, abi.WantResiduals)
			rm, _ := h.Eval(tm, abi.WantResiduals)
			fd := (rp.LogTarget() - rm.LogTarget()) / (2 * fdStep)
			if math.Abs(r.Grad[i]-fd) > fdTol*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: grad[%d] = %v, central difference %v", c.Name, i, r.Grad[i], fd)
			}
			for k := range r.Residuals {
				fdj := (rp.Residuals[k] - rm.Residuals[k]) / (2 * fdStep)
				if math.Abs(r.Jacobian[k*d+i]-fdj) > fdTol*math.Max(1, math.Abs(fdj)) {
					t.Errorf("%s: jac[%d,%d] = %v, central difference %v", c.Name, k, i, r.Jacobian[k*d+i], fdj)
				}
			}
		}
		// log L = const − ½‖r‖²: the difference between two points agrees.
		other := h.Draw()
		r2, _ := h.Eval(other, abi.WantResiduals)
		half := func(res []float64) float64 {
			s := 0.0
			for _, v := range res {
				s += v * v
			}
			return 0.5 * s
		}
		if got, want := r.LogLik-r2.LogLik, half(r2.Residuals)-half(r.Residuals); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: Δlog L = %v, −Δ½‖r‖² = %v", c.Name, got, want)
		}
	}
}

type emptyAsk struct{ drawOnce }

func (*emptyAsk) Ask() (abi.Batch, error) { return abi.Batch{}, nil }

type failingAsk struct{ drawOnce }

var errBoom = errors.New("boom")

func (*failingAsk) Ask() (abi.Batch, error) { return abi.Batch{}, errBoom }

func TestHostProtocolErrors(t *testing.T) {
	c := StdNormal1D()
	if _, _, err := Run(&emptyAsk{}, c.Target, 1); err == nil {
		t.Error("an empty batch while not done must be an error")
	}
	if _, _, err := Run(&failingAsk{}, c.Target, 1); !errors.Is(err, errBoom) {
		t.Errorf("ask error not passed on: %v", err)
	}
}

func TestSameSamplesAndReports(t *testing.T) {
	a := []abi.Sample{{Theta: []float64{1, math.NaN()}, LogPrior: -1, LogLik: -2}}
	cp := func() []abi.Sample {
		return []abi.Sample{{Theta: append([]float64(nil), a[0].Theta...), LogPrior: a[0].LogPrior, LogLik: a[0].LogLik}}
	}
	if err := SameSamples(a, cp()); err != nil {
		t.Errorf("a copy (NaN included) differs: %v", err)
	}
	for name, change := range map[string]func([]abi.Sample) []abi.Sample{
		"length":    func(s []abi.Sample) []abi.Sample { return append(s, s[0]) },
		"theta":     func(s []abi.Sample) []abi.Sample { s[0].Theta[0] = math.Nextafter(1, 2); return s },
		"dimension": func(s []abi.Sample) []abi.Sample { s[0].Theta = s[0].Theta[:1]; return s },
		"log prior": func(s []abi.Sample) []abi.Sample { s[0].LogPrior = math.Copysign(0, -1); return s },
		"log lik":   func(s []abi.Sample) []abi.Sample { s[0].LogLik = -2.0000000000000004; return s },
	} {
		if SameSamples(a, change(cp())) == nil {
			t.Errorf("a change of %s went unnoticed", name)
		}
	}
	ra := abi.Report{Samples: a, Extra: map[string]any{"k": []any{1.0}}}
	if err := SameReports(ra, abi.Report{Samples: cp(), Extra: map[string]any{"k": []any{1.0}}}); err != nil {
		t.Error(err)
	}
	if err := SameReports(ra, abi.Report{Samples: cp(), Extra: map[string]any{"k": []any{2.0}}}); err == nil || !strings.Contains(err.Error(), "[k]") {
		t.Errorf("a change of Extra: %v", err)
	}
}

func TestHostClone(t *testing.T) {
	h := NewHost(Conjugate2D().Target, 5)
	h.Draw()
	c := h.Clone()
	for range 3 {
		if x, y := h.Draw(), c.Draw(); x[0] != y[0] || x[1] != y[1] {
			t.Fatalf("clone draws %v, original %v", y, x)
		}
	}
	if h.Draws != 4 || c.Draws != 4 {
		t.Errorf("draws %d and %d, want 4", h.Draws, c.Draws)
	}
}
