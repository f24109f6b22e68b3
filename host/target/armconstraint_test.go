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

// The fused gradient path (the arm keeps its tape, abi.Pullbacker) adds
// the soft constraints' gradient as the unfused paths do: a smooth
// constraint on an acceleration over t, a hinge on another, a range and a
// group mean on parameters; the gradient agrees with central differences
// of the log target.
func TestFusedGradientWithConstraints(t *testing.T) {
	const tol, floor = 1e-6, 1e-3 // as TestHostAnalyticGradient
	dir := t.TempDir()
	writeArmRows(t, dir, 60)
	free := []struct {
		name   string
		lo, hi float64
	}{{"humerus_mass", 1.5, 2.5}, {"DELT1_F0", 800, 1300}, {"BRA_F0", 800, 1300}, {"BRA_L0", 0.045, 0.07}}
	var b strings.Builder
	b.WriteString("name = \"arm-constraints\"\n[model]\nuse = \"arm\"\n[[data]]\nname = \"train\"\nfile = \"train.csv\"\n" +
		"[[likelihood]]\nuse = \"nmse\"\n[method]\nuse = \"adam\"\n" +
		"[[constraint]]\nkind = \"smooth\"\noutputs = [\"qdd_elbow_flexion\"]\ntime = \"t\"\nweight = 0.01\n" +
		"[[constraint]]\nkind = \"hinge\"\noutputs = [\"qdd_shoulder_elv\"]\nthreshold = 0.5\nweight = 0.2\n" +
		"[[constraint]]\nkind = \"range\"\nparams = [\"DELT1_F0\"]\nupper = 900\nweight = 0.01\n" +
		"[[constraint]]\nkind = \"group_mean\"\nparams = [\"*_F0\"]\nweight = 0.003\n[prior]\n")
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
	p := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(context.Background(), p, study.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.Model.(abi.Pullbacker); !ok {
		t.Fatal("the arm is no longer a Pullbacker: this test no longer covers the fused path")
	}
	if len(s.Constraints[3].Idx) != 2 {
		t.Fatalf("group *_F0 matched %d parameters, want DELT1_F0 and BRA_F0", len(s.Constraints[3].Idx))
	}
	tg := target.New(s, 2)
	at := map[string]float64{"humerus_mass": 2.1, "DELT1_F0": 1000, "BRA_F0": 1050, "BRA_L0": 0.06}
	theta := make([]float64, len(s.Free))
	width := make([]float64, len(s.Free))
	for j, p := range s.Free {
		theta[j], width[j] = at[p.Name], p.Upper-p.Lower
	}
	res, err := tg.Evaluate(context.Background(), [][]float64{theta}, abi.WantGradient)
	if err != nil || res[0].Status != abi.OK {
		t.Fatalf("%v %v", err, res[0].Status)
	}
	logT := func(th []float64) float64 {
		r, err := tg.Evaluate(context.Background(), [][]float64{th}, abi.WantLogTarget)
		if err != nil || r[0].Status != abi.OK {
			t.Fatalf("%v %v", err, r[0].Status)
		}
		return r[0].LogTarget()
	}
	// The constraints change the target: the penalty is there.
	plain := res[0].LogLik
	s2 := *s
	s2.Constraints = nil
	r2, err := target.New(&s2, 1).Evaluate(context.Background(), [][]float64{theta}, abi.WantLogTarget)
	if err != nil || !(r2[0].LogLik > plain) {
		t.Fatalf("log L without constraints %g, with %g: want a penalty", r2[0].LogLik, plain)
	}
	scale := 0.0
	fd := make([]float64, len(theta))
	for j, w := range width {
		h := 3e-6 * w
		th := append([]float64(nil), theta...)
		th[j] += h
		fp := logT(th)
		th[j] = theta[j] - h
		fd[j] = (fp - logT(th)) / (2 * h) * w
		scale = math.Max(scale, math.Abs(fd[j]))
	}
	for j, w := range width {
		g := res[0].Grad[j] * w
		if d := math.Abs(g - fd[j]); d > tol*(math.Abs(fd[j])+floor*scale) {
			t.Errorf("%s: fused %.12g, finite difference %.12g (range-scaled)", s.Free[j].Name, g, fd[j])
		}
	}
}
