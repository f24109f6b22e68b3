package lsqtest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// Suite is a least-squares method under the tests both least-squares
// methods must pass (Check).
type Suite struct {
	// New builds the method with its default settings but for those named.
	New func(settings map[string]float64) abi.Method
	// Failures is the number of failed evaluations of start k's run so far.
	Failures func(m abi.Method, k int) int
}

// Settings are the settings of a method described by spec: the defaults
// but for those named in set (each must be one of spec's settings).
func Settings(spec abi.Spec, set map[string]float64) []float64 {
	s := make([]float64, len(spec.Settings))
	named := 0
	for i, st := range spec.Settings {
		s[i] = st.Default
		if v, ok := set[st.Name]; ok {
			s[i] = v
			named++
		}
	}
	if named != len(set) {
		panic(fmt.Sprintf("lsqtest: %v names a setting %s does not have", set, spec.Name))
	}
	return s
}

// Maker is a Suite.New for the method described by spec and built by
// newMethod (its New); it panics if newMethod refuses the settings.
func Maker(spec abi.Spec, newMethod func([]float64) (abi.Method, error)) func(map[string]float64) abi.Method {
	return func(set map[string]float64) abi.Method {
		m, err := newMethod(Settings(spec, set))
		if err != nil {
			panic(err)
		}
		return m
	}
}

func (s Suite) with(name string, v float64) abi.Method {
	return s.New(map[string]float64{name: v})
}

// The exit reasons both methods report by these names.
const (
	exitExactFit = "exact_fit"
	exitGtol     = "gtol"
	exitMaxEvals = "max_evaluations"
)

// Check runs the shared tests, each a subtest: the conformance problems,
// the analytic covariance of a linear fit, a rank-deficient Jacobian,
// failing evaluations, an exact fit, bounds, the Rosenbrock valley and the
// evaluation budget, several starts, malformed results, determinism and
// resuming from a checkpoint, and the protocol.
func Check(t *testing.T, s Suite) {
	for _, c := range []struct {
		name string
		test func(*testing.T, Suite)
	}{
		{"ConformanceCases", testConformanceCases},
		{"LinearCovariance", testLinearCovariance},
		{"SingularJacobian", testSingularJacobian},
		{"NaNResiduals", testNaNResiduals},
		{"ExactFit", testExactFit},
		{"StartOnActiveBound", testStartOnActiveBound},
		{"CornerSolution", testCornerSolution},
		{"MalformedResults", testMalformedResults},
		{"RosenbrockAndBudget", testRosenbrockAndBudget},
		{"MultiStart", testMultiStart},
		{"DeterminismAndResume", testDeterminismAndResume},
		{"Protocol", testProtocol},
		{"StoppedReport", testStoppedReport},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, s) })
	}
}

func stats(rep abi.Report) map[string]any { return rep.Extra["statistics"].(map[string]any) }

func reason(rep abi.Report) string {
	return rep.Extra["best"].(map[string]any)["exit_reason"].(string)
}

// On the conformance problems the method finds the least-squares point of
// the residuals, the maximum-likelihood estimate: it ignores the prior's
// density (Conflict1D's answer is the likelihood's 5, not the posterior
// mean 4.81). optTol: the problems are linear, so the first Gauss–Newton
// step lands on the answer up to rounding.
func testConformanceCases(t *testing.T, s Suite) {
	const optTol = 1e-9
	want := map[string][]float64{
		"stdnormal-1d": {0},
		"conflict-1d":  {5},
		"conjugate-2d": {1, -0.5},
		"gauss-10d":    {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
	}
	for _, c := range conformance.Cases() {
		m := s.with("starts", 3)
		rep, h, err := conformance.Run(m, c.Target, 7)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if len(rep.Samples) != 3 {
			t.Fatalf("%s: %d samples, want one per start", c.Name, len(rep.Samples))
		}
		for k, s := range rep.Samples {
			for i, v := range s.Theta {
				if math.Abs(v-want[c.Name][i]) > optTol {
					t.Errorf("%s start %d: θ%d = %v, want %v", c.Name, k, i, v, want[c.Name][i])
				}
			}
		}
		if h.OutOfSupport != 0 {
			t.Errorf("%s: %d points outside the box evaluated", c.Name, h.OutOfSupport)
		}
		conformance.CheckExtra(t, rep.Extra, "exit_reason", "cost", "iterations", "statistics", "best_start", "evaluations", "jacobian_evaluations", "failures", "trace_cost")
	}
}

// linearFit is y = X·β + noise with a fixed design; its least-squares
// solution, covariance (XᵀX)⁻¹·s² and s² = RSS/(n − p) are computed here
// by the normal equations in closed form (p = 3, Cramer's rule on the 3×3
// XᵀX), independently of the method's QR and SVD.
func linearFit() (conformance.Target, []float64, [][]float64) {
	const n, p = 12, 3
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range n {
		t := float64(i) / 3
		x[i] = []float64{1, t, math.Sin(t)}
		y[i] = 2 - 0.7*t + 1.3*math.Sin(t) + 0.05*math.Cos(7*t) // the cosine is "noise"
	}
	res := func(b []float64) []float64 {
		r := make([]float64, n)
		for i := range n {
			r[i] = x[i][0]*b[0] + x[i][1]*b[1] + x[i][2]*b[2] - y[i]
		}
		return r
	}
	jac := func([]float64) []float64 {
		j := make([]float64, 0, n*p)
		for i := range n {
			j = append(j, x[i]...)
		}
		return j
	}
	// Normal equations.
	var a [3][3]float64
	var g [3]float64
	for i := range n {
		for r := range p {
			g[r] += x[i][r] * y[i]
			for c := range p {
				a[r][c] += x[i][r] * x[i][c]
			}
		}
	}
	det := a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) - a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) + a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	var inv [3][3]float64
	for r := range 3 {
		for c := range 3 {
			// Cofactor C_cr / det (the adjugate is the transposed cofactor matrix).
			r1, r2 := (c+1)%3, (c+2)%3
			c1, c2 := (r+1)%3, (r+2)%3
			inv[r][c] = (a[r1][c1]*a[r2][c2] - a[r1][c2]*a[r2][c1]) / det
		}
	}
	beta := make([]float64, p)
	for r := range p {
		for c := range p {
			beta[r] += inv[r][c] * g[c]
		}
	}
	rss := 0.0
	for _, v := range res(beta) {
		rss += v * v
	}
	s2 := rss / float64(n-p)
	cov := make([][]float64, p)
	for r := range p {
		cov[r] = make([]float64, p)
		for c := range p {
			cov[r][c] = s2 * inv[r][c]
		}
	}
	return Target(Box(p, -100, 100), res, jac), beta, cov
}

// A linear problem's covariance and standard errors are the analytic
// (XᵀX)⁻¹·s² to linTol, and so is the estimate. linTol: the design's
// condition number is about 30, so QR/SVD and Cramer's rule agree to
// ~1e-14 relative; 1e-10 is the bar of the issue.
func testLinearCovariance(t *testing.T, s Suite) {
	const linTol = 1e-10
	target, beta, cov := linearFit()
	rep := Drive(t, s.New(nil), conformance.NewHost(target, 1), [][]float64{{0, 0, 0}})
	st := stats(rep)
	got := st["covariance"].([][]float64)
	se := st["standard_errors"].([]float64)
	for r := range 3 {
		if math.Abs(rep.Samples[0].Theta[r]-beta[r]) > linTol*math.Abs(beta[r]) {
			t.Errorf("β%d = %.15g, analytic %.15g", r, rep.Samples[0].Theta[r], beta[r])
		}
		if math.Abs(se[r]-math.Sqrt(cov[r][r])) > linTol*math.Sqrt(cov[r][r]) {
			t.Errorf("se%d = %.15g, analytic %.15g", r, se[r], math.Sqrt(cov[r][r]))
		}
		for c := range 3 {
			if math.Abs(got[r][c]-cov[r][c]) > linTol*math.Sqrt(cov[r][r]*cov[c][c]) {
				t.Errorf("cov[%d][%d] = %.15g, analytic %.15g", r, c, got[r][c], cov[r][c])
			}
		}
	}
	if st["dof"].(int) != 9 || st["rank"].(int) != 3 {
		t.Errorf("dof %v rank %v, want 9 and 3", st["dof"], st["rank"])
	}
}

// A Jacobian of rank 1 (the residuals depend on a + b only): the fit still
// converges, and the report says the parameters are not identifiable: no
// covariance, rank 1, and the null-space direction (1, −1)/√2.
func testSingularJacobian(t *testing.T, s Suite) {
	const tol = 1e-9
	ys := []float64{1, 2, 4}
	target := Target(Box(2, -10, 10),
		func(th []float64) []float64 {
			r := make([]float64, 3)
			for i, y := range ys {
				r[i] = float64(i+1)*(th[0]+th[1]) - y
			}
			return r
		},
		func([]float64) []float64 { return []float64{1, 1, 2, 2, 3, 3} })
	rep := Drive(t, s.New(nil), conformance.NewHost(target, 1), [][]float64{{0.5, 0}})
	st := stats(rep)
	if st["rank"].(int) != 1 || st["covariance"] != nil || st["standard_errors"] != nil {
		t.Fatalf("rank %v covariance %v se %v; want rank 1 and none", st["rank"], st["covariance"], st["standard_errors"])
	}
	ns := st["null_space"].([][]float64)
	if len(ns) != 1 || math.Abs(ns[0][0]-math.Sqrt(0.5)) > tol || math.Abs(ns[0][1]+math.Sqrt(0.5)) > tol {
		t.Errorf("null space %v, want (1, −1)/√2", ns)
	}
	if !strings.Contains(st["note"].(string), "not identifiable") {
		t.Errorf("note %q", st["note"])
	}
	// One combination fitted from 3 observations: 2 degrees of freedom
	// (n − rank, not n − p = 1), s² = RSS/2 with RSS = Σy² − (Σ i·y_i)²/Σ i²
	// = 21 − 17²/14 = 5/14.
	if st["dof"].(int) != 2 || math.Abs(st["residual_variance"].(float64)-5.0/28) > tol {
		t.Errorf("dof %v residual variance %v, want 2 and 5/28", st["dof"], st["residual_variance"])
	}
	// a + b is the least-squares 17/14 (Σ i·y_i / Σ i²), and the
	// pseudo-inverse steps leave a − b where it started.
	th := rep.Samples[0].Theta
	if math.Abs(th[0]+th[1]-17.0/14) > tol || math.Abs(th[0]-th[1]-0.5) > tol {
		t.Errorf("θ = %v: a+b = %v (want 17/14), a−b = %v (want 0.5)", th, th[0]+th[1], th[0]-th[1])
	}
}

// Residuals that are NaN beyond θ = 4 (a model failure region) while the
// unconstrained optimum is at 5: the NaN points are counted failures, the
// steps shrink, and the run ends just inside the failure region with a
// usable iterate.
func testNaNResiduals(t *testing.T, s Suite) {
	res := func(th []float64) []float64 {
		if th[0] > 4 {
			return []float64{math.NaN()}
		}
		return []float64{th[0] - 5}
	}
	target := Target(Box(1, -10, 10), res, func([]float64) []float64 { return []float64{1} })
	h := conformance.NewHost(target, 1)
	rep := Drive(t, s.New(nil), h, [][]float64{{0}})
	if h.Failures == 0 || rep.Extra["failures"].(int) != h.Failures {
		t.Errorf("host failures %d, reported %v", h.Failures, rep.Extra["failures"])
	}
	th := rep.Samples[0].Theta[0]
	if !(th <= 4 && th > 3.99) {
		t.Errorf("final θ = %v, want just below 4 (reason %s)", th, reason(rep))
	}
	if math.IsInf(rep.Samples[0].LogLik, 0) || math.IsNaN(rep.Samples[0].LogLik) {
		t.Errorf("final log-likelihood %v is not a usable iterate's", rep.Samples[0].LogLik)
	}
}

// An exact fit (a start with zero residuals) stops at once with reason
// exact_fit and reports a zero residual variance and covariance, saying so.
func testExactFit(t *testing.T, s Suite) {
	target := Target(Box(2, -10, 10),
		func(th []float64) []float64 { return []float64{th[0] - 1, th[1] - 2, th[0] + th[1] - 3} },
		func([]float64) []float64 { return []float64{1, 0, 0, 1, 1, 1} })
	rep := Drive(t, s.New(nil), conformance.NewHost(target, 1), [][]float64{{1, 2}})
	st := stats(rep)
	if reason(rep) != exitExactFit || st["residual_variance"] != 0.0 {
		t.Fatalf("reason %s, residual variance %v", reason(rep), st["residual_variance"])
	}
	for _, row := range st["covariance"].([][]float64) {
		for _, v := range row {
			if v != 0 {
				t.Errorf("covariance %v, want zero", st["covariance"])
			}
		}
	}
	if !strings.Contains(st["note"].(string), "exact fit") {
		t.Errorf("note %q", st["note"])
	}
	// From elsewhere the same problem converges to the exact solution.
	rep = Drive(t, s.New(nil), conformance.NewHost(target, 1), [][]float64{{-3, 7}})
	if th := rep.Samples[0].Theta; math.Abs(th[0]-1) > 1e-12 || math.Abs(th[1]-2) > 1e-12 {
		t.Errorf("θ = %v, want (1, 2)", th)
	}
}

// Bounds: a start on a bound whose gradient points out of the box stays
// there (the parameter is held), the other parameter is fitted, nothing
// outside the box is evaluated, and a start on a bound whose gradient points
// inward leaves it.
func testStartOnActiveBound(t *testing.T, s Suite) {
	const tol = 1e-10
	params := []abi.Param{{Name: "a", Lower: 0, Upper: 10}, {Name: "b", Lower: 0, Upper: 10}}
	target := Target(params,
		func(th []float64) []float64 { return []float64{th[0] + 1, th[1] - 3, 0.5 * (th[0] + th[1])} },
		func([]float64) []float64 { return []float64{1, 0, 0, 1, 0.5, 0.5} })
	outside := 0
	inner := target.Residuals
	target.Residuals = func(th []float64) []float64 {
		if th[0] < 0 || th[0] > 10 || th[1] < 0 || th[1] > 10 {
			outside++
		}
		return inner(th)
	}
	for _, start := range [][]float64{{0, 0}, {0, 10}, {5, 10}} {
		h := conformance.NewHost(target, 1)
		rep := Drive(t, s.New(nil), h, [][]float64{start})
		th := rep.Samples[0].Theta
		// With a held at 0: min (b−3)² + b²/4 → b = 3/(1 + 1/4) = 2.4.
		if th[0] != 0 || math.Abs(th[1]-2.4) > tol {
			t.Errorf("start %v: θ = %v, want (0, 2.4) (reason %s)", start, th, reason(rep))
		}
		if outside != 0 || h.OutOfSupport != 0 {
			t.Errorf("start %v: %d points outside the box evaluated", start, outside+h.OutOfSupport)
		}
	}
}

// Both parameters pinned: the optimum is a corner, the start is that corner,
// and the run stops at once (no free parameter: the projected gradient is 0).
func testCornerSolution(t *testing.T, s Suite) {
	target := Target(Box(2, 0, 1),
		func(th []float64) []float64 { return []float64{th[0] + 1, th[1] + 2} },
		func([]float64) []float64 { return []float64{1, 0, 0, 1} })
	h := conformance.NewHost(target, 1)
	rep := Drive(t, s.New(nil), h, [][]float64{{0, 0}})
	if reason(rep) != exitGtol || rep.Samples[0].Theta[0] != 0 || rep.Samples[0].Theta[1] != 0 || h.Evals != 1 {
		t.Errorf("reason %s θ %v evals %d; want gtol at (0, 0) after one evaluation", reason(rep), rep.Samples[0].Theta, h.Evals)
	}
}

// Malformed results are refused with an error naming the problem, never a
// panic, and leave the method able to take a correct Tell.
func testMalformedResults(t *testing.T, s Suite) {
	target := Target(Box(2, -10, 10),
		func(th []float64) []float64 { return []float64{th[0] - 1, th[1] - 2, th[0] * th[1]} },
		func(th []float64) []float64 { return []float64{1, 0, 0, 1, th[1], th[0]} })
	h := conformance.NewHost(target, 1)
	m := s.New(nil)
	if err := m.Init(target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	b, _ := m.Ask()
	good, _ := h.Eval([]float64{0.5, 0.5}, b.Want)
	for name, bad := range map[string]func(r abi.Result) abi.Result{
		"jacobian size": func(r abi.Result) abi.Result { r.Jacobian = r.Jacobian[:5]; return r },
		"no residuals":  func(r abi.Result) abi.Result { r.Residuals = nil; return r },
		"theta size":    func(r abi.Result) abi.Result { r.Theta = r.Theta[:1]; return r },
	} {
		err := m.Tell([]abi.Result{bad(good)})
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := m.Tell([]abi.Result{good}); err != nil {
		t.Fatalf("the correct result after refusals: %v", err)
	}
	// Later: a residual count that changes.
	b, _ = m.Ask()
	r, _ := h.Eval(b.Points[0], b.Want)
	r.Residuals = append(r.Residuals, 1)
	if err := m.Tell([]abi.Result{r}); err == nil || !strings.Contains(err.Error(), "residuals") {
		t.Errorf("a changed number of residuals: %v", err)
	}
	// A Jacobian of NaNs is a failure, not an error.
	r, _ = h.Eval(b.Points[0], b.Want)
	for i := range r.Jacobian {
		r.Jacobian[i] = math.NaN()
	}
	if err := m.Tell([]abi.Result{r}); err != nil {
		t.Errorf("a NaN Jacobian: %v", err)
	}
	if s.Failures(m, 0) != 1 {
		t.Error("a NaN Jacobian was not counted as a failure")
	}
}

// rosenbrock as residuals: r = (10(θ₂ − θ₁²), 1 − θ₁) (Moré, Garbow &
// Hillstrom 1981, problem 1), minimum 0 at (1, 1).
func rosenbrock() conformance.Target {
	return Target(Box(2, -5, 5),
		func(th []float64) []float64 { return []float64{10 * (th[1] - th[0]*th[0]), 1 - th[0]} },
		func(th []float64) []float64 { return []float64{-20 * th[0], 10, -1, 0} })
}

func testRosenbrockAndBudget(t *testing.T, s Suite) {
	rep := Drive(t, s.New(nil), conformance.NewHost(rosenbrock(), 1), [][]float64{{-1.2, 1}})
	th := rep.Samples[0].Theta
	if math.Abs(th[0]-1) > 1e-10 || math.Abs(th[1]-1) > 1e-10 {
		t.Errorf("θ = %v, want (1, 1) (reason %s)", th, reason(rep))
	}
	m := s.with("max_evaluations", 3)
	rep = Drive(t, m, conformance.NewHost(rosenbrock(), 1), [][]float64{{-1.2, 1}})
	if reason(rep) != exitMaxEvals || rep.Extra["best"].(map[string]any)["evaluations"].(int) != 3 {
		t.Errorf("budget 3: reason %s, %v evaluations", reason(rep), rep.Extra["best"])
	}
}

// Several starts on a problem with two minima (r = θ² − 1: θ = ±1, and a
// third residual tilting them so that +1 is better): every start ends at
// one of them and the best start is one at +1.
func testMultiStart(t *testing.T, s Suite) {
	target := Target(Box(1, -3, 3),
		func(th []float64) []float64 { return []float64{th[0]*th[0] - 1, 0.1 * (th[0] - 1)} },
		func(th []float64) []float64 { return []float64{2 * th[0], 0.1} })
	m := s.with("starts", 6)
	rep, _, err := conformance.Run(m, target, 3)
	if err != nil {
		t.Fatal(err)
	}
	best := rep.Samples[rep.Extra["best_start"].(int)].Theta[0]
	if math.Abs(best-1) > 1e-8 {
		t.Errorf("best start at %v, want 1", best)
	}
	for k, s := range rep.Samples {
		if math.Abs(math.Abs(s.Theta[0])-1) > 0.05 {
			t.Errorf("start %d ended at %v, not near ±1", k, s.Theta[0])
		}
	}
}

// failingLSQ is a least-squares target whose model fails for a < 0 (half
// the prior), with the optimum near that edge, so that runs meet
// failures and draws must be redone.
func failingLSQ() conformance.Target {
	t := Target(Box(2, -4, 4),
		func(th []float64) []float64 {
			return []float64{th[0] + 1.5, 2 * (th[1] - th[0]*th[0]), 0.3 * th[1]}
		},
		func(th []float64) []float64 { return []float64{1, 0, -4 * th[0], 2, 0, 0.3} })
	ll := t.LogLik
	t.LogLik = func(th []float64) (float64, abi.Status) {
		if th[0] < 0 {
			return 0, abi.Failed
		}
		return ll(th)
	}
	return t
}

func testDeterminismAndResume(t *testing.T, s Suite) {
	newM := func() abi.Method { return s.with("starts", 6) }
	conformance.CheckDeterminism(t, newM, failingLSQ(), 11, nil)
	conformance.CheckResume(t, newM, failingLSQ(), 11, conformance.ResumeOptions{
		Straight: func(tb testing.TB, rep abi.Report, asks int) {
			if rep.Extra["failures"].(int) == 0 || rep.Extra["init_draws"].(int) <= 6 {
				tb.Fatalf("the target exercises no failures or re-draws: %v failures, %v draws", rep.Extra["failures"], rep.Extra["init_draws"])
			}
		},
	})
	m := newM()
	h := conformance.NewHost(failingLSQ(), 11)
	if err := m.Init(failingLSQ().Problem(11)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	blob, err := m.(abi.Checkpointer).SaveState()
	if err != nil {
		t.Fatal(err)
	}
	conformance.CheckLoadRefusals(t, blob, newM, failingLSQ(), 11,
		func() abi.Method { return s.with("ftol", 1e-3) })
}

// Ask before Init, Tell without Ask, and the first batch's shape.
func testProtocol(t *testing.T, s Suite) {
	m := s.with("starts", 2)
	conformance.CheckProtocolStart(t, m, rosenbrock(), 1, 2, abi.WantResiduals|abi.WantJacobian)
}

// A run stopped early still gets a report: the current iterate of every
// start that has a point, reason "stopped", and the statistics there
// (ABI.md §6.3; audit 6: the report was refused and summary.json lost it).
func testStoppedReport(t *testing.T, s Suite) {
	c := conformance.Conjugate2D()
	conformance.CheckStoppedReport(t, func() abi.Method { return s.with("starts", 2) }, c.Target, 7, 6)
	// Stopped after one round: each start's row is its first point.
	m := s.with("starts", 2)
	h := conformance.NewHost(c.Target, 7)
	if err := m.Init(c.Target.Problem(7)); err != nil {
		t.Fatal(err)
	}
	if err := h.Step(m); err != nil {
		t.Fatal(err)
	}
	if m.Done() {
		t.Skip("done after one round")
	}
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 2 {
		t.Fatalf("%d rows after one round, want one per start: %v", len(rep.Samples), rep.Extra)
	}
	for k, r := range rep.Extra["exit_reason"].([]string) {
		if r != "stopped" {
			t.Errorf("start %d: exit reason %q, want stopped", k, r)
		}
	}
}
