package gaussnewton

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
	"github.com/kinfer/kinfer/builtin/methods/internal/lsqtest"
)

// newWith builds the method with the defaults but for the settings named.
var newWith = lsqtest.Maker(Spec, New)

func newDefault() abi.Method { return newWith(nil) }

func reason(rep abi.Report) string {
	return rep.Extra["best"].(map[string]any)["exit_reason"].(string)
}

func TestSpec(t *testing.T) {
	conformance.CheckSpec(t, Spec, New, lsqtest.Settings(Spec, nil), map[string]float64{
		"starts": 0, "step_control": 2, "ftol": -1, "xtol": math.Inf(1), "gtol": math.NaN(),
		"max_iterations": -1, "max_evaluations": 1.5, "scale": 2, "rcond": 1,
	})
}

// The tests every least-squares method passes (lsqtest.Check): the
// conformance problems, a linear fit's analytic covariance, a rank-deficient
// Jacobian, failing evaluations, an exact fit, bounds, Rosenbrock and the
// budget, several starts, malformed results, determinism and resuming, and
// the protocol.
func TestLeastSquares(t *testing.T) {
	lsqtest.Check(t, lsqtest.Suite{
		New:      newWith,
		Failures: func(m abi.Method, k int) int { return m.(*Method).st.Runs[k].Failures },
	})
}

// r = atan(θ) from θ = 1.5: the Gauss–Newton (here Newton) step
// θ − atan(θ)·(1 + θ²) overshoots and diverges for |θ| > 1.39. With
// step_control = "none" the method takes it anyway (Gouveia's plain
// iteration: the cost rises); with "halving" it halves the step until the
// cost falls, and converges to 0.
func TestStepControl(t *testing.T) {
	target := lsqtest.Target(lsqtest.Box(1, -10, 10),
		func(th []float64) []float64 { return []float64{math.Atan(th[0])} },
		func(th []float64) []float64 { return []float64{1 / (1 + th[0]*th[0])} })
	rep := lsqtest.Drive(t, newDefault(), conformance.NewHost(target, 1), [][]float64{{1.5}})
	if th := rep.Samples[0].Theta[0]; math.Abs(th) > 1e-10 {
		t.Errorf("halving: θ = %v, want 0 (reason %s)", th, reason(rep))
	}
	m := newWith(map[string]float64{"step_control": StepNone})
	rep = lsqtest.Drive(t, m, conformance.NewHost(target, 1), [][]float64{{1.5}})
	tr := rep.Extra["trace_cost"].([]any)[0].([]any)
	if len(tr) < 2 || !(tr[1].(float64) > tr[0].(float64)) {
		t.Errorf("none: costs %v; the first step should raise the cost", tr)
	}
}
