package levmar

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/conformance"
	"github.com/kinfer/kinfer/builtin/methods/internal/lsqtest"
)

// Accepted iterates never increase the cost, also when the box clips the
// step: a projected step can predict an increase (the linear model's
// reduction of Π(x + p) − x is negative), and its ratio actual/predicted
// is then positive for an actual increase; such a step must be rejected.
// Problems: nonlinear residuals with the optimum outside the box [0, 1]^3,
// so that steps are clipped all along.
func TestBoxedStepsNeverIncreaseCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 9))
	const n, d = 8, 3
	for trial := 0; trial < 200; trial++ {
		A := make([]float64, n*d)
		b := make([]float64, n)
		for i := range A {
			A[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = 3 * rng.NormFloat64()
		}
		c := 0.5 * rng.NormFloat64()
		res := func(th []float64) []float64 {
			r := make([]float64, n)
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					r[i] += A[i*d+j] * th[j]
				}
				r[i] += c*th[0]*th[1] - b[i]
			}
			return r
		}
		jac := func(th []float64) []float64 {
			J := make([]float64, n*d)
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					J[i*d+j] = A[i*d+j]
				}
				J[i*d] += c * th[1]
				J[i*d+1] += c * th[0]
			}
			return J
		}
		target := lsqtest.Target(lsqtest.Box(d, 0, 1), res, jac)
		start := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		h := conformance.NewHost(target, 1)
		rep := lsqtest.Drive(t, newDefault(), h, [][]float64{start})
		var trace []float64
		for _, v := range rep.Extra["trace_cost"].([]any)[0].([]any) {
			f, _ := v.(float64)
			trace = append(trace, f)
		}
		for k := 1; k < len(trace); k++ {
			if trace[k] > trace[k-1]*(1+1e-12) {
				t.Fatalf("problem %d: cost rose from %.10g to %.10g at iterate %d (trace %v)", trial, trace[k-1], trace[k], k, trace)
			}
		}
		if math.IsNaN(trace[len(trace)-1]) {
			t.Fatalf("problem %d: NaN cost", trial)
		}
	}
}
