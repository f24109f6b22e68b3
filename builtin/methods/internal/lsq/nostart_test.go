package lsq

import (
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// A start refused for a −∞ log likelihood with finite residuals and
// Jacobian (a likelihood's hard constraint, ABI.md §6.2) says so, not
// that the residuals failed (audit 10, author10 F1); a point without a
// Jacobian says that; any other names its log likelihood.
func TestNoStartNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		r    abi.Result
		want string
	}{
		{abi.Result{Status: abi.OK, Residuals: []float64{1, 2}, Jacobian: []float64{1, 0, 0, 1}, LogLik: math.Inf(-1)}, "its log likelihood was −∞"},
		{abi.Result{Status: abi.OK, Residuals: []float64{1, 2}, LogLik: -2.5}, "its Jacobian could not be"},
		{abi.Result{Status: abi.Failed, LogLik: math.NaN()}, "(last: status failed, 0 residuals, Jacobian of 0 values, log likelihood NaN)"},
	} {
		if err := noStart("levmar", 0, 100, c.r); !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
}

// A start that stopped with gaussnewton's "no_decrease" passed no
// convergence test: it is warned about, best start or not, with the
// gradient test's cosine at its point (audit 21: NIST Rat43 stopped so at
// 141 times the certified cost, unwarned). J = [1; 0], r = [1; 1]: the
// cosine between r and J's column is 1/√2 (analytic).
func TestNoDecreaseWarned(t *testing.T) {
	fac := func(r0 float64) *Factor {
		f, err := Factorize([]float64{1, 0}, []float64{r0, r0}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	outs := []Outcome{
		{Start: 0, X: []float64{0}, Fac: fac(2), Reason: "no_decrease", Done: true},
		{Start: 1, X: []float64{0}, Fac: fac(1), Reason: "no_decrease", Done: true},
	}
	b := mcmc.Bounds{Lower: []float64{-10}, Upper: []float64{10}}
	rep := Report(outs, nil, 1e-12, 2, []string{"a"}, b, []int{1, 1}, multistart.Counts{}, false)
	w, _ := rep.Extra["warnings"].([]any)
	all := ""
	for _, x := range w {
		all += x.(string) + "\n"
	}
	for _, want := range []string{`the best start stopped with "no_decrease"`, "there is 0.71", `start 0 ("no_decrease", cost 4 × the best's, largest cosine 0.71)`} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

// freeCosine skips a parameter on a bound only where its gradient points
// out of the box, as the methods' gtol test does (review 22: every
// parameter on a bound was skipped, so a start stuck there with the
// gradient pointing inward read "0 at a minimum"). r = [1; 1], x on the
// lower bound: J = [1; 0] gives ∂(½‖r‖²)/∂x = 1 > 0 (out of the box,
// skipped: 0), J = [−1; 0] gives −1 (inward: cosine 1/√2).
func TestFreeCosineActiveSet(t *testing.T) {
	b := mcmc.Bounds{Lower: []float64{-10}, Upper: []float64{10}}
	for _, c := range []struct {
		j0, want float64
	}{{1, 0}, {-1, 1 / math.Sqrt2}} {
		f, err := Factorize([]float64{c.j0, 0}, []float64{1, 1}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := freeCosine(Outcome{X: []float64{-10}, Fac: f}, b); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("J = [%g; 0]: cosine %g, want %g", c.j0, got, c.want)
		}
	}
}
