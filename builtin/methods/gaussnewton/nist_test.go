package gaussnewton

import (
	"path/filepath"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/internal/lsqtest"
)

// nistDir holds NIST's StRD files.
var nistDir = filepath.Join("..", "..", "models", "nist", "testdata")

// TestNIST fits all 27 StRD datasets from both certified starts with the
// defaults (pseudo-inverse steps with halving) and requires every
// parameter to LRE ≥ 6 on at least 49 of the 54 runs, what the method
// solves: the five it does not are the classic hard first starts (MGH17,
// MGH09, MGH10, Eckerle4, Rat43), far from the solution, where the
// undamped Gauss–Newton direction is poor and halving it does not help —
// the case Levenberg–Marquardt's damping is for (the levmar method solves
// all 54).
func TestNIST(t *testing.T) {
	lsqtest.CheckNIST(t, nistDir, newDefault, 49)
}

// BenchmarkNIST54 fits the 54 NIST StRD runs (the whole set, one op) with
// the defaults: the time of the Gauss–Newton method, beside levmar's in the scipy comparison in
// docs/PERFORMANCE.md (examples/nist-strd/bench/nist_scipy.py is the
// other). It includes evaluating the model's residuals and analytic
// Jacobian, as scipy's time includes its Python callbacks. Reports the
// runs solved (every parameter to LRE ≥ 6) as a metric.
func BenchmarkNIST54(b *testing.B) {
	lsqtest.BenchNIST54(b, nistDir, newDefault)
}
