package levmar

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

func TestSpec(t *testing.T) {
	conformance.CheckSpec(t, Spec, New, lsqtest.Settings(Spec, nil), map[string]float64{
		"starts": 0, "ftol": -1, "xtol": math.Inf(1), "gtol": math.NaN(),
		"max_evaluations": 1.5, "factor": 0, "scale": 2, "rcond": 1,
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
