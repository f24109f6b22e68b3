package lsq

import (
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
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
