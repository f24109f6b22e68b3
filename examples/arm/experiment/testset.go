package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/likelihood/nmse"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/host/dataset"
)

// TestSetErrors is the paper's Fig. 7 for an estimate π̂ (all parameters):
// on the separate test set examples/arm/test.csv (other activations than
// the training set's), per joint the RMS of the true accelerations and the
// RMS error of those predicted with π̂, and L_FD (Eq. 4, the nmse loss).
func TestSetErrors(root string, pihat []float64) (lfd float64, rms, rmse [arm.NOutputs]float64, err error) {
	t, err := dataset.Read(filepath.Join(root, "examples", "arm", "test.csv"))
	if err != nil {
		return 0, rms, rmse, err
	}
	names := func(cs []abi.Column) []string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return n
	}
	x, err := t.Matrix(names(arm.Spec.Conditions))
	if err != nil {
		return 0, rms, rmse, err
	}
	obs, err := t.Matrix(names(arm.Spec.Outputs))
	if err != nil {
		return 0, rms, rmse, err
	}
	y := make([]float64, len(obs))
	if st := arm.NewModel(arm.DefaultDamping).Eval(pihat, x, y); st != abi.OK {
		return 0, rms, rmse, fmt.Errorf("the arm at π̂: status %v", st)
	}
	lik, err := nmse.New([]float64{nmse.Pooled, 0})
	if err != nil {
		return 0, rms, rmse, err
	}
	ll, st := lik.LogLikelihood(arm.NOutputs, y, obs, nil)
	if st != abi.OK {
		return 0, rms, rmse, fmt.Errorf("the nmse loss: status %v", st)
	}
	lfd = -ll
	k := len(obs) / arm.NOutputs
	for j := range arm.NOutputs {
		for r := range k {
			o, d := obs[r*arm.NOutputs+j], y[r*arm.NOutputs+j]-obs[r*arm.NOutputs+j]
			rms[j] += o * o / float64(k)
			rmse[j] += d * d / float64(k)
		}
		rms[j], rmse[j] = math.Sqrt(rms[j]), math.Sqrt(rmse[j])
	}
	return lfd, rms, rmse, nil
}

// testSetTable is the Markdown of TestSetErrors for the estimate of a run.
func testSetTable(root string, what string, pihat []float64) string {
	lfd, rms, rmse, err := TestSetErrors(root, pihat)
	if err != nil {
		return fmt.Sprintf("\n(test set not evaluated: %v)\n", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n# Fig. 7: joint accelerations on the test set (examples/arm/test.csv) at %s\n\n", what)
	fmt.Fprintf(&b, "L_FD on the test set %.3g.\n\n| joint | RMS of q̈ [rad/s²] | RMS error [rad/s²] | relative |\n|---|---|---|---|\n", lfd)
	for j, c := range arm.Spec.Outputs {
		fmt.Fprintf(&b, "| %s | %.4g | %.3g | %.2g |\n", c.Name, rms[j], rmse[j], rmse[j]/rms[j])
	}
	return b.String()
}
