package anneal

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/adam"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/prior"
)

// settings in Spec order: maxiter, initial_temp, restart_temp_ratio,
// visit, accept, maxfun, local, local_iterations, local_lr, trace_every,
// trace_theta.
type opts struct {
	maxiter         int
	t0, ratio       float64
	visit, accept   float64
	maxfun          int
	local           int
	localIterations int
	localLR         float64
	traceTheta      bool
}

// scipyDefaults are scipy.optimize.dual_annealing's defaults (and this
// method's) with no local search.
func scipyDefaults() opts {
	return opts{maxiter: 1000, t0: 5230, ratio: 2e-5, visit: 2.62, accept: -5, maxfun: 1e7, localIterations: 100, localLR: 1e-3}
}

func newMethod(t testing.TB, o opts) *Method {
	t.Helper()
	m, err := New([]float64{float64(o.maxiter), o.t0, o.ratio, o.visit, o.accept, float64(o.maxfun), float64(o.local), float64(o.localIterations), o.localLR, 0, b2f(o.traceTheta)})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*Method)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// startNear is a prior.Dist that is uniform on [lo, hi] (so the log target
// is the loss up to a constant) but whose draws (Quantile) fall within
// ±0.01 of x0: it fixes the starting point of a run.
type startNear struct{ x0, lo, hi float64 }

func (p startNear) LogPdf(x float64) float64 {
	if x < p.lo || x > p.hi {
		return math.Inf(-1)
	}
	return -math.Log(p.hi - p.lo)
}
func (p startNear) DLogPdf(float64) float64     { return 0 }
func (p startNear) Quantile(u float64) float64  { return p.x0 + 0.02*(u-0.5) }
func (p startNear) Support() (float64, float64) { return p.lo, p.hi }
func (p startNear) String() string              { return "start-near" }

// rastrigin is minus the Rastrigin function (Rastrigin 1974; the test
// function of scipy's dual_annealing example),
// f(x) = 10d + Σ (xᵢ² − 10 cos 2πxᵢ) on [−5.12, 5.12]^d, as log
// likelihood: global maximum 0 at the origin, a local one near every
// integer point. Runs start within 0.01 of (x0, …, x0). With flip the
// gradient has the wrong sign.
func rastrigin(d int, x0 float64, flip bool) conformance.Target {
	ps := make([]abi.Param, d)
	ds := make([]prior.Dist, d)
	for i := range ps {
		ps[i] = abi.Param{Name: string(rune('a' + i)), Lower: -5.12, Upper: 5.12}
		ds[i] = startNear{x0, -5.12, 5.12}
	}
	sign := 1.0
	if flip {
		sign = -1
	}
	return conformance.Target{
		Params: ps, Prior: ds,
		LogLik: func(th []float64) (float64, abi.Status) {
			f := 10 * float64(d)
			for _, v := range th {
				f += v*v - 10*math.Cos(2*math.Pi*v)
			}
			return -f, abi.OK
		},
		GradLogLik: func(th, g []float64) {
			for i, v := range th {
				g[i] = -sign * (2*v + 20*math.Pi*math.Sin(2*math.Pi*v))
			}
		},
	}
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func TestRastrigin(t *testing.T) {
	// From a start next to the local minimum near (3, …, 3), with scipy's
	// defaults (1000 iterations, 2d evaluations each): plain generalised
	// annealing reaches the global minimum's basin and refines it to
	// gsaTol; with the Adam local search (lr 1e-3, ≤ 100 updates) to
	// localTol. Over seeds 1–30 in 2, 3 and 4 D the worst |xᵢ| were 4.4e-4
	// (none) and 2.4e-4 (adam), the worst f 5.3e-5 and 1.6e-5.
	const gsaTol, localTol = 1e-3, 5e-4
	for _, d := range []int{2, 4} {
		for _, local := range []int{LocalNone, LocalAdam} {
			o := scipyDefaults()
			o.local = local
			rep, h, err := conformance.Run(newMethod(t, o), rastrigin(d, 3, false), 1)
			if err != nil {
				t.Fatal(err)
			}
			tol := gsaTol
			if local == LocalAdam {
				tol = localTol
				if rep.Extra["local_searches"].(int) == 0 || rep.Extra["local_improvements"].(int) == 0 {
					t.Errorf("d = %d: no local search improved the best: %v", d, rep.Extra)
				}
			}
			best := rep.Samples[0]
			if got := maxAbs(best.Theta); got > tol {
				t.Errorf("d = %d, local %s: best %v, |x| up to %.3g > %g", d, LocalNames[local], best.Theta, got, tol)
			}
			if got := rep.Extra["iterations"].(int); got != 1000 || rep.Extra["stop"] != "maxiter" {
				t.Errorf("d = %d: %d iterations, stop %v", d, got, rep.Extra["stop"])
			}
			want := 1 + 2*d*1000 + rep.Extra["local_evaluations"].(int)
			if h.Asks != want || rep.Extra["evaluations"].(int) != want {
				t.Errorf("d = %d: %d asks, %v evaluations, want %d", d, h.Asks, rep.Extra["evaluations"], want)
			}
			t.Logf("d = %d, local %s: f = %.3g at %.3g, %d evaluations (%v local, %v searches)", d, LocalNames[local],
				-best.LogLik, best.Theta, h.Asks, rep.Extra["local_evaluations"], rep.Extra["local_searches"])
		}
	}
}

func TestAdamGetsStuck(t *testing.T) {
	// The contrast: plain Adam from the same start (paper's lr, 2000
	// iterations) converges to the local minimum next to it, f ≈ 17.9 in
	// 2-D (two coordinates at ≈ 2.985, each 8.95).
	m, err := adam.New([]float64{1e-3, 0.9, 0.999, 1e-8, 2000, 1, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := conformance.Run(m, rastrigin(2, 3, false), 1)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Samples[0]
	if f := -s.LogLik; f < 17 || math.Abs(s.Theta[0]-2.985) > 0.01 || math.Abs(s.Theta[1]-2.985) > 0.01 {
		t.Errorf("Adam ended at %v with f = %g; want the local minimum near (2.985, 2.985)", s.Theta, f)
	}
}

func TestLocalSearchUsesGradient(t *testing.T) {
	// With the wrong-sign gradient every local search climbs f, so none
	// improves the best point (the search keeps its starting point).
	o := scipyDefaults()
	o.maxiter, o.local = 200, LocalAdam
	rep, _, err := conformance.Run(newMethod(t, o), rastrigin(2, 3, true), 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Extra["local_searches"].(int); n == 0 || rep.Extra["local_improvements"].(int) != 0 {
		t.Errorf("wrong-sign gradient: %d local searches, %v improvements; want some, none", n, rep.Extra["local_improvements"])
	}
	rep, _, err = conformance.Run(newMethod(t, o), rastrigin(2, 3, false), 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Extra["local_improvements"].(int) == 0 {
		t.Error("right gradient: no local search improved the best point")
	}
}

func TestPaperSettings(t *testing.T) {
	// Zhou et al. (Sec. IV-A) chose q_v = 1.1, T₀ = 0.02 and a restart
	// ratio of 2e-15 "to discourage exploration of the entire search
	// space": the visiting scale is then σ(T₀) ≈ 0.035 and nearly Gaussian,
	// so a run from next to the local minimum near (3, 3) stays in its
	// basin and settles there.
	o := opts{maxiter: 500, t0: 0.02, ratio: 2e-15, visit: 1.1, accept: -5, maxfun: 1e7, localIterations: 100, localLR: 1e-3}
	m := newMethod(t, o)
	rep, _, err := conformance.Run(m, rastrigin(2, 3, false), 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.vis.sigma(0.02); math.Abs(s-0.0348) > 1e-4 {
		t.Errorf("σ(0.02) at q_v = 1.1 is %v", s)
	}
	th := rep.Samples[0].Theta
	if math.Abs(th[0]-2.985) > 0.02 || math.Abs(th[1]-2.985) > 0.02 || rep.Extra["restarts"].(int) != 0 {
		t.Errorf("paper settings: best %v, restarts %v; want the local minimum near (2.985, 2.985)", th, rep.Extra["restarts"])
	}
}

// scipySigma0 is σ₀ = σ(T = 1) computed literally as scipy's visit_fn
// does (factor2 … factor6), or NaN where scipy's factor6 is not positive.
func scipySigma0(qv float64) float64 {
	f2 := math.Exp((4 - qv) * math.Log(qv-1))
	f3 := math.Exp((2 - qv) * math.Ln2 / (qv - 1))
	f4p := math.Sqrt(math.Pi) * f2 / (f3 * (3 - qv))
	f5 := 1/(qv-1) - 0.5
	lg, _ := math.Lgamma(2 - f5)
	f6 := math.Pi * (1 - f5) / math.Sin(math.Pi*(1-f5)) / math.Exp(lg)
	return math.Exp(-(qv - 1) * math.Log(f6/f4p) / (3 - qv))
}

func TestVisitScale(t *testing.T) {
	// σ₀ agrees with scipy's expression wherever that is defined
	// (relTol: a few ulps through exp/log/Γ), and scipy's is undefined
	// (factor6 < 0) for q_v ∈ (9/7, 7/5), where ours is finite.
	const relTol = 1e-12
	for _, qv := range []float64{1.05, 1.1, 1.2, 1.5, 2, 2.62, 2.9} {
		v := newVisitor(qv, []float64{0}, []float64{1})
		got, want := v.sigma(1), scipySigma0(qv)
		if math.Abs(got-want) > relTol*want {
			t.Errorf("q_v = %v: σ₀ = %.17g, scipy's %.17g", qv, got, want)
		}
		// σ(T) = σ₀·T^(1/(3−q_v)).
		if s := v.sigma(7); math.Abs(s-got*math.Pow(7, 1/(3-qv))) > relTol*s {
			t.Errorf("q_v = %v: σ(7) = %v", qv, s)
		}
	}
	if !math.IsNaN(scipySigma0(1.35)) {
		t.Error("scipy's σ₀ at q_v = 1.35 should be NaN")
	}
	if s := newVisitor(1.35, []float64{0}, []float64{1}).sigma(1); !(s > 0) || math.IsInf(s, 1) {
		t.Errorf("σ₀ at q_v = 1.35 is %v", s)
	}
}

func TestVisitCauchy(t *testing.T) {
	// For q_v = 2 a step at temperature T is T times a standard Cauchy
	// variate: quartiles ±T. With n = 40000 steps the standard error of a
	// sample quartile is √(p(1−p)/n)/f(q) = 2π·√(3/16/n) ≈ 0.0136; qTol is
	// 5 of them.
	const n, temp = 40000, 3.0
	const qTol = 5 * 0.0136 * temp
	v := newVisitor(2, []float64{0}, []float64{1})
	rnd := mcmcRand(1)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = v.step(rnd, v.sigma(temp))
	}
	sort.Float64s(xs)
	if q1, q3 := xs[n/4], xs[3*n/4]; math.Abs(q1+temp) > qTol || math.Abs(q3-temp) > qTol {
		t.Errorf("quartiles %.4f, %.4f; want ∓%g", q1, q3, temp)
	}
}

func TestVisitWrap(t *testing.T) {
	// Visits wrap around the box (scipy's fmod arithmetic) and change all
	// coordinates for j < d, one (j − d) for j ≥ d.
	v := newVisitor(2.62, []float64{-1, 10}, []float64{1, 20})
	for _, c := range []struct{ i, x, want float64 }{
		{0, 1.5, -0.5}, {0, -1.5, 0.5}, {0, 0.25, 0.25}, {0, 5.25, -0.75}, {1, 31, 11}, {1, 9, 19}, {0, -1, -1 + minVisitBound},
	} {
		if got := v.wrap(int(c.i), c.x); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("wrap(%v, %v) = %v, want %v", c.i, c.x, got, c.want)
		}
	}
	rnd := mcmcRand(2)
	x := []float64{0, 15}
	for j := range 4 {
		y := v.visit(rnd, x, j, 1)
		for i := range 2 {
			moved := y[i] != x[i]
			if want := j < 2 || i == j-2; moved != want {
				t.Errorf("visit %d: coordinate %d moved %v", j, i, moved)
			}
			if !(y[i] >= v.lower[i] && y[i] < v.lower[i]+v.width[i]) {
				t.Errorf("visit %d left the box: %v", j, y)
			}
		}
	}
}

func TestSchedule(t *testing.T) {
	// T(0) = T₀; T(i) = T₀(2^(q_v−1) − 1)/((i+2)^(q_v−1) − 1); decreasing.
	const t0, qv = 5230.0, 2.62
	if got := temperature(t0, qv, 0); math.Abs(got-t0) > 1e-12*t0 {
		t.Errorf("T(0) = %v", got)
	}
	for _, i := range []int{1, 10, 999} {
		want := t0 * (math.Pow(2, qv-1) - 1) / (math.Pow(float64(i)+2, qv-1) - 1)
		if got := temperature(t0, qv, i); math.Abs(got-want) > 1e-12*want || !(got < temperature(t0, qv, i-1)) {
			t.Errorf("T(%d) = %v, want %v", i, got, want)
		}
	}
	// Acceptance: 1 at ΔE = 0, the Metropolis exp(−ΔE/T) as q_a → 1, and 0
	// from ΔE = T/(1 − q_a) on.
	if p := acceptance(-5, 0, 2); p != 1 {
		t.Errorf("p(ΔE = 0) = %v", p)
	}
	if p := acceptance(1-1e-9, 1.5, 2); math.Abs(p-math.Exp(-0.75)) > 1e-6 {
		t.Errorf("q_a → 1: p = %v, want %v", p, math.Exp(-0.75))
	}
	if p := acceptance(-5, 2.0/6, 2); p != 0 {
		t.Errorf("p at the cut-off = %v", p)
	}
	if p, want := acceptance(-5, 0.1, 2), math.Pow(1-6*0.1/2, 1.0/6); math.Abs(p-want) > 1e-15 {
		t.Errorf("p = %v, want %v", p, want)
	}
}

func TestRestarts(t *testing.T) {
	// With restart_temp_ratio 0.01 and q_v = 2.62, T(i) < 0.01·T₀ once
	// (i+2)^1.62 − 1 > 100·(2^1.62 − 1), i.e. from i = 25: each annealing
	// has 25 iterations, so 100 iterations re-anneal 3 times.
	o := scipyDefaults()
	o.maxiter, o.ratio = 100, 0.01
	rep, _, err := conformance.Run(newMethod(t, o), rastrigin(2, 3, false), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Extra["restarts"].(int); got != 3 {
		t.Errorf("%d restarts, want 3", got)
	}
}

func TestMaxfun(t *testing.T) {
	o := scipyDefaults()
	o.maxfun = 57
	rep, h, err := conformance.Run(newMethod(t, o), rastrigin(2, 3, false), 1)
	if err != nil {
		t.Fatal(err)
	}
	// 57 = 1 + 14·4 evaluations: the start and 14 chains of 2d = 4 visits;
	// the run stops at the last visit of the 14th, which therefore is not
	// counted as completed (as in scipy, which returns from the chain).
	if h.Asks != 57 || rep.Extra["stop"] != "maxfun" || rep.Extra["iterations"].(int) != 13 {
		t.Errorf("maxfun 57: %d asks, stop %v after %v iterations", h.Asks, rep.Extra["stop"], rep.Extra["iterations"])
	}
}

func TestDeterminism(t *testing.T) {
	o := scipyDefaults()
	o.maxiter, o.local = 150, LocalAdam
	conformance.CheckDeterminism(t, func() abi.Method { return newMethod(t, o) }, rastrigin(3, 2, false), 7,
		func(a, b abi.Report) bool { return !reflect.DeepEqual(a.Extra["trajectory"], b.Extra["trajectory"]) })
}

// plateauTarget exercises every path of the state machine in 1-D: the log
// likelihood is min(θ, 2) on [−5, 3] and the model fails above θ = 3 (a
// fifth of the prior and of the restart points), so the best value 2 is
// reached early and then never improved — after 1000 iterations without
// improvement the local searches from the chain's minimum start — while a
// local search from a best point below 2 runs into the failures (Adam
// with a large step), and visits fail too.
func plateauTarget() conformance.Target {
	u, _ := prior.NewUniform(-5, 5)
	return conformance.Target{
		Params: []abi.Param{{Name: "a", Lower: -5, Upper: 5}},
		Prior:  []prior.Dist{u},
		LogLik: func(th []float64) (float64, abi.Status) {
			if th[0] > 3 {
				return 0, abi.Failed
			}
			return math.Min(th[0], 2), abi.OK
		},
		GradLogLik: func(th, g []float64) {
			g[0] = 0
			if th[0] < 2 {
				g[0] = 1
			}
		},
	}
}

func plateauOpts() opts {
	return opts{maxiter: 1008, t0: 5230, ratio: 0.01, visit: 2.62, accept: -5, maxfun: 1e7, local: LocalAdam, localIterations: 5, localLR: 0.7, traceTheta: true}
}

func TestCheckpointResume(t *testing.T) {
	// Seed 3: the first prior draw fails.
	const seed = 3
	o := plateauOpts()
	conformance.CheckResume(t, func() abi.Method { return newMethod(t, o) }, plateauTarget(), seed, conformance.ResumeOptions{
		Straight: func(tb testing.TB, rep abi.Report, _ int) {
			if x := rep.Extra; x["init_draws"].(int) < 2 || x["failures"].(int) == 0 || x["restart_draws"].(int) <= x["restarts"].(int) ||
				x["local_from_min"].(int) == 0 || x["local_searches"].(int) <= x["local_from_min"].(int) ||
				x["local_improvements"].(int) == 0 || x["local_step_halvings"].(int) == 0 {
				tb.Fatalf("the run should have re-drawn its start and a restart point, failures, both kinds of local search, one improving, and halvings: %v", rep.Extra)
			}
		},
		// Every n up to 300 (the start, the first chains and local
		// searches, the first restarts), then every 37th and the last few
		// (the local searches from the minimum, the end).
		Stops: func(total int) []int {
			var ns []int
			for n := 1; n <= total; n++ {
				if n <= 300 || n%37 == 0 || n > total-5 {
					ns = append(ns, n)
				}
			}
			return ns
		},
	})
}

func TestCheckpointMismatch(t *testing.T) {
	tgt := rastrigin(2, 3, false)
	o := scipyDefaults()
	o.local = LocalAdam
	m := newMethod(t, o)
	if err := m.Init(tgt.Problem(1)); err != nil {
		t.Fatal(err)
	}
	h := conformance.NewHost(tgt, 1)
	for m.st.Phase != phLocal { // stop inside a local search
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	blob, err := m.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.visit = 2.5
	conformance.CheckLoadRefusals(t, blob, func() abi.Method { return newMethod(t, o) }, tgt, 1,
		func() abi.Method { return newMethod(t, o2) })
	other := newMethod(t, o)
	other.Init(tgt.Problem(1))
	for key, val := range map[string]any{
		"x": []any{1.0}, "phase": 9.0, "ls": nil, "rng": "AAAA", "j": 99.0,
	} {
		var s map[string]any
		json.Unmarshal(blob, &s)
		s[key] = val
		if key == "j" {
			s["phase"] = float64(phChain)
		}
		bad, _ := json.Marshal(s)
		if err := other.LoadState(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("loading a checkpoint with a bad %s: %v", key, err)
		}
	}
	if err := other.LoadState(blob); err != nil {
		t.Errorf("loading the good checkpoint after refusals: %v", err)
	}
}

func TestInitFailure(t *testing.T) {
	tgt := rastrigin(2, 3, false)
	tgt.LogLik = func([]float64) (float64, abi.Status) { return 0, abi.Failed }
	_, h, err := conformance.Run(newMethod(t, scipyDefaults()), tgt, 1)
	if err == nil || !strings.Contains(err.Error(), "1000 prior draws") {
		t.Fatalf("error %v", err)
	}
	if h.Draws != MaxReinit {
		t.Errorf("%d prior draws, want %d", h.Draws, MaxReinit)
	}
}

func TestProtocol(t *testing.T) {
	tgt := rastrigin(2, 3, false)
	o := scipyDefaults()
	o.maxiter, o.local, o.traceTheta = 20, LocalAdam, true
	m := newMethod(t, o)
	conformance.CheckProtocolStart(t, m, tgt, 1, 1, abi.WantLogTarget)
	h := conformance.NewHost(tgt, 1)
	sawGrad := false
	for !m.Done() {
		b, err := m.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() != 1 {
			t.Fatalf("batch of %d points", b.Len())
		}
		if want := m.st.Phase == phLocal; (b.Want == abi.WantGradient) != want {
			t.Fatalf("phase %d asked %v", m.st.Phase, b.Want)
		}
		sawGrad = sawGrad || b.Want == abi.WantGradient
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	if !sawGrad {
		t.Error("no local search asked for gradients")
	}
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ask(); err == nil {
		t.Error("Ask after done succeeded")
	}
	if len(rep.Samples) != 1 || -rep.Samples[0].LogPrior-rep.Samples[0].LogLik != rep.Extra["best_value"].(float64) {
		t.Errorf("samples %v, best value %v", rep.Samples, rep.Extra["best_value"])
	}
	conformance.CheckExtra(t, rep.Extra, "best_value", "iterations", "restarts", "evaluations", "local_searches", "local_evaluations")
	tr := rep.Extra["trajectory"].(map[string]any)
	it, bl := tr["iteration"].([]int), tr["best_log_target"].([]float64)
	if it[0] != 0 || it[len(it)-1] != 20 || len(bl) != len(it) || bl[len(bl)-1] != rep.Extra["best_log_target"].(float64) {
		t.Errorf("trajectory %v", tr)
	}
	for i := 1; i < len(bl); i++ {
		if bl[i] < bl[i-1] {
			t.Errorf("best log target decreased: %v", bl)
		}
	}
	// trace_theta: each traced best point has the traced log target
	// (log prior + Rastrigin log likelihood, recomputed), the last one is
	// the best.
	th := tr["best_theta"].([][]float64)
	if len(th) != len(it) || !reflect.DeepEqual(th[len(th)-1], rep.Samples[0].Theta) {
		t.Errorf("best_theta %v, best %v", th, rep.Samples[0].Theta)
	}
	for i, x := range th {
		lt, _ := tgt.LogLik(x)
		for j, v := range x {
			lt += tgt.Prior[j].LogPdf(v)
		}
		if math.Abs(lt-bl[i]) > 1e-12*math.Abs(lt) {
			t.Errorf("trace point %d: log target %v at %v, traced %v", i, lt, x, bl[i])
		}
	}
	inf := abi.Problem{Params: []abi.Param{{Name: "x", Lower: 0, Upper: math.Inf(1)}}}
	if err := m.Init(inf); err == nil || !strings.Contains(err.Error(), "finite box") {
		t.Errorf("Init with an infinite bound: %v", err)
	}
	if m.Init(abi.Problem{}) == nil {
		t.Error("Init accepted a problem without parameters")
	}
}

func TestSettings(t *testing.T) {
	defaults, _ := abi.SettingValues(Spec.Settings, nil)
	conformance.CheckSpec(t, Spec, New, defaults, map[string]float64{
		"maxiter": 0, "initial_temp": 0, "restart_temp_ratio": 1, "visit": 3, "accept": 1, "maxfun": 0.5,
		"local": 2, "local_iterations": 0, "local_lr": -1, "trace_every": 1.5,
		"trace_theta": 2,
	})
	m, err := New(defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{MaxIter: 1000, InitialTemp: 5230, RestartTempRatio: 2e-5, Visit: 2.62, Accept: -5, MaxFun: 1e7,
		Local: LocalNone, LocalIterations: 100, LocalLR: 1e-3, TraceEvery: 10}
	if got := m.(*Method).Config(); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	var _ abi.Checkpointer = m.(*Method)
	// visit = 1 would divide by zero; 1.0001 is allowed.
	s := append([]float64(nil), defaults...)
	s[3] = 1.0001
	if _, err := New(s); err != nil {
		t.Errorf("visit 1.0001: %v", err)
	}
}

// mcmcRand is a stream for tests of the visiting distribution.
func mcmcRand(k int) *rand.Rand { return rand.New(mcmc.Stream(99, k)) }

// Init refuses a trace that would not fit in the memory budget (10⁹ trace
// points of 3 values against 1 MiB), naming the settings.
func TestMemoryBudget(t *testing.T) {
	m, err := New([]float64{1e9, 5230, 2e-5, 2.62, -5, 1e7, 0, 100, 1e-3, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	p := conformance.Conjugate2D().Target.Problem(1)
	p.MemoryBudget = 1 << 20
	if err := m.Init(p); err == nil || !strings.Contains(err.Error(), "maxiter / trace_every = 1000000000 / 1") || !strings.Contains(err.Error(), "memory budget of 1 MiB") {
		t.Fatalf("Init: %v", err)
	}
	p.MemoryBudget = 0 // the default, 4 GiB: 10⁹ points need ≈ 100 GiB
	if err := m.Init(p); err == nil {
		t.Fatal("Init accepted 10⁹ trace points within the default budget")
	}
}

// Init refuses a trace whose report would pass 16 MiB although it fits in
// memory: 10⁶ points of 5 numbers at 25 bytes ≈ 119 MiB.
func TestReportBudget(t *testing.T) {
	m, err := New([]float64{1e6, 5230, 2e-5, 2.62, -5, 1e7, 0, 100, 1e-3, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	p := conformance.Conjugate2D().Target.Problem(1)
	p.MemoryBudget = 64 << 30
	if err := m.Init(p); err == nil || !strings.Contains(err.Error(), "make a report of about 119 MiB, more than the 16 MiB") {
		t.Fatalf("Init: %v", err)
	}
}

// A run stopped early still gets a report: the best point so far,
// "stopped" (ABI.md §6.3; audit 6). Seed 3: the first prior draw fails.
func TestReportWhenStopped(t *testing.T) {
	conformance.CheckStoppedReport(t, func() abi.Method { return newMethod(t, plateauOpts()) }, plateauTarget(), 3, 60)
}
