package target_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// The arm has a VJP and independent rows but no Jacobian: its residual
// Jacobian for a least-squares method is formed exactly from one-row VJPs
// and agrees with central differences to 1e-6 (issue 12), on 100 training
// rows, ten free bone and muscle parameters, the Gaussian likelihood.
func TestArmJacobianExactVsDifferences(t *testing.T) {
	const jacTol = 1e-6 // relative, against the column's scale
	dir := t.TempDir()
	writeArmRows(t, dir, 100)
	free := []struct {
		name   string
		lo, hi float64
	}{
		{"humerus_mass", 1.5, 2.5}, {"humerus_Ixy", -0.0004, 0.0004}, {"ulna_com_y", -0.14, -0.08}, {"radius_Ixx", 0.0007, 0.0013},
		{"DELT1_F0", 800, 1300}, {"BIClong_vmax", 7, 13}, {"BRA_L0", 0.045, 0.07},
	}
	for _, name := range []string{"TRIlong_F0", "ulna_mass", "BIClong_L0"} { // ±10 % of MyoArm's value
		q := arm.Spec.Params[arm.Spec.ParamIndex(name)]
		free = append(free, struct {
			name   string
			lo, hi float64
		}{name, max(q.Lower, 0.9*q.Default), min(q.Upper, 1.1*q.Default)})
	}
	sigma := "sigma = { qdd_elv_angle = 1.0, qdd_shoulder_elv = 1.0, qdd_shoulder_rot = 1.0, qdd_elbow_flexion = 1.0, qdd_pro_sup = 1.0 }\n"
	var b strings.Builder
	b.WriteString("name = \"arm-jacobian\"\njacobian = \"MODE\"\n[model]\nuse = \"arm\"\n[[data]]\nname = \"train\"\nfile = \"train.csv\"\n" +
		"[[likelihood]]\nuse = \"gaussian\"\n" + sigma + "[method]\nuse = \"levmar\"\n[prior]\n")
	for _, f := range free {
		b.WriteString(f.name + " = { uniform = [" + ftoa(f.lo) + ", " + ftoa(f.hi) + "] }\n")
	}
	b.WriteString("[fixed]\n")
	for _, q := range arm.Spec.Params {
		isFree := false
		for _, f := range free {
			isFree = isFree || f.name == q.Name
		}
		if !isFree {
			b.WriteString(q.Name + " = " + ftoa(q.Default) + "\n")
		}
	}
	at := map[string]float64{} // the point, by name
	for _, f := range free {
		at[f.name] = f.lo + 0.37*(f.hi-f.lo)
	}
	theta := make([]float64, len(free))
	names := make([]string, len(free))
	jac := map[string][]float64{}
	for _, mode := range []string{"analytic", "central"} {
		p := filepath.Join(dir, mode+".toml")
		if err := os.WriteFile(p, []byte(strings.Replace(b.String(), "MODE", mode, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := study.Load(context.Background(), p, study.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range s.FreeIdx { // θ is in model order
			names[j] = arm.Spec.Params[i].Name
			theta[j] = at[names[j]]
		}
		tg := target.New(s, 2)
		if got := tg.JacobianMode(); !strings.HasPrefix(got, mode) {
			t.Fatalf("jacobian mode %s, want %s", got, mode)
		}
		res, err := tg.Evaluate(context.Background(), [][]float64{theta}, abi.WantResiduals|abi.WantJacobian)
		s.Close()
		if err != nil || res[0].Status != abi.OK || len(res[0].Jacobian) != 100*5*len(free) {
			t.Fatalf("%s: %v %v, %d Jacobian values", mode, err, res[0].Status, len(res[0].Jacobian))
		}
		jac[mode] = res[0].Jacobian
	}
	d := len(free)
	for j := 0; j < d; j++ {
		scale := 0.0
		for i := j; i < len(jac["analytic"]); i += d {
			scale = max(scale, math.Abs(jac["analytic"][i]))
		}
		for i := j; i < len(jac["analytic"]); i += d {
			a, c := jac["analytic"][i], jac["central"][i]
			if math.Abs(a-c) > jacTol*scale {
				t.Fatalf("∂r_%d/∂%s: exact %.12g, central differences %.12g (column scale %.3g)", i/d, names[j], a, c, scale)
			}
		}
	}
}
