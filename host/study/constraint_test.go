package study

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin"
)

const constraintCSV = "t,length_mm,force_N,strain\n0,29,10,0.01\n0.5,30,50,\n1.5,31,120,0.05\n"

// constraintBase has every kind of constraint; lines are numbered for the
// error cases below.
const constraintBase = `name = "c"
[model]
use = "ligament"
ref_length_mm = 30.0
[[data]]
name = "pull"
file = "d.csv"
[[likelihood]]
use = "gaussian"
sigma = { force_N = 5.0, strain = 0.01 }
[prior]
k = { uniform = [2000.0, 9000.0] }
eps_r = { normal = [0.0, 0.1] }
[method]
use = "metropolis"
[[constraint]]
kind = "range"
params = ["k"]
lower = 2500
weight = 0.1
[[constraint]]
kind = "group_mean"
params = ["k", "eps_r"]
[[constraint]]
kind = "hinge"
outputs = ["force_N"]
threshold = 6
[[constraint]]
kind = "smooth"
data = "pull"
outputs = ["force_N", "strain"]
time = "t"
against = "data"
`

func loadCons(t *testing.T, text, data string) (*Study, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), p, Options{Workers: 1})
}

func TestConstraintsResolve(t *testing.T) {
	s, err := loadCons(t, constraintBase, constraintCSV)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Constraints) != 4 {
		t.Fatalf("%d constraints", len(s.Constraints))
	}
	r, g, h, sm := s.Constraints[0], s.Constraints[1], s.Constraints[2], s.Constraints[3]
	if r.Lower != 2500 || !math.IsInf(r.Upper, 1) || r.Weight != 0.1 || len(r.Idx) != 1 || r.Len() != 1 {
		t.Fatalf("range %+v", r)
	}
	if g.Weight != 1 || g.Len() != 2 {
		t.Fatalf("group_mean %+v", g)
	}
	if h.Threshold != 6 || h.Len() != 3 || h.Obs[2] != 120 {
		t.Fatalf("hinge %+v", h)
	}
	if !sm.Against || sm.Len() != 4 || sm.DT[0] != 0.5 || sm.DT[1] != 1 || !math.IsNaN(sm.Obs[3]) {
		t.Fatalf("smooth %+v", sm)
	}
	if R, ok := s.ResidualCount(); !ok || R != 6+1+2+3+4 {
		t.Fatalf("residual count %d %v", R, ok)
	}
	// Range residual and derivative by the formula: below the soft bound.
	th := []float64{2400, 0.01}
	res := make([]float64, 1)
	r.ThetaResiduals(th, res)
	jac := make([]float64, 2)
	r.ThetaJacobian(th, jac)
	if math.Abs(res[0]-0.1*100) > 1e-12 || jac[0] != -0.1 || jac[1] != 0 {
		t.Fatalf("range at k = 2400: r %v, ∂r/∂θ %v", res, jac)
	}
	// Smooth against data skips the pair with the missing strain.
	y := []float64{12, 0.02, 49, 0.03, 125, 0.06}
	out := make([]float64, 4)
	sm.OutputResiduals(y, 2, out)
	if want := ((49 - 12) - (50 - 10)) / 0.5; math.Abs(out[0]-want) > 1e-12 || out[1] != 0 || out[3] != 0 {
		t.Fatalf("smooth residuals %v (want %g, 0, _, 0)", out, want)
	}
}

// Each case replaces one line of constraintBase; the error names the
// file, the line and the key.
func TestConstraintErrors(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{`kind = "range"`, `kind = "ranges"`, `study.toml:17: key "constraint[0].kind": unknown constraint kind "ranges"`},
		{`kind = "range"`, ``, `study.toml:16: key "constraint[0].kind": missing kind`},
		{`weight = 0.1`, `wieght = 0.1`, `study.toml:20: key "constraint.wieght": unknown key`},
		{`weight = 0.1`, `weight = -1`, `study.toml:20: key "constraint[0].weight": weight must be a positive finite number`},
		// Values whose squared residual overflows (audit 16).
		{`weight = 0.1`, `weight = 1e308`, `study.toml:20: key "constraint[0].weight": weight 1e+308 is beyond 1e100`},
		{`lower = 2500`, `lower = 1e308`, `study.toml:19: key "constraint[0].lower": lower 1e+308 is beyond 1e100`},
		{`params = ["k"]`, `params = ["q"]`, `study.toml:18: key "constraint[0].params": "q" names no free parameter (free: k, eps_r)`},
		{`params = ["k"]`, `params = ["k", "k*"]`, `study.toml:18: key "constraint[0].params": parameter "k" is named twice`},
		{`params = ["k"]`, `params = ["[k"]`, `study.toml:18: key "constraint[0].params": bad pattern`},
		{`lower = 2500`, `upper = 2500`, `no error`}, // upper = 2500 is fine; the case checks nothing breaks
		{`lower = 2500`, `threshold = 2500`, `study.toml:19: key "constraint[0].threshold": a range constraint takes no threshold`},
		{`lower = 2500`, ``, `study.toml:16: key "constraint[0]": a range constraint needs lower, upper or both`},
		{`params = ["k", "eps_r"]`, `params = ["k"]`, `study.toml:23: key "constraint[1].params": a group_mean constraint needs at least two parameters`},
		{`threshold = 6`, `threshold = -6`, `study.toml:27: key "constraint[2].threshold": threshold must be a finite number ≥ 0`},
		{`threshold = 6`, ``, `study.toml:24: key "constraint[2].threshold": a hinge constraint needs threshold`},
		{`outputs = ["force_N"]`, `outputs = ["force"]`, `study.toml:26: key "constraint[2].outputs": model "ligament" has no output "force"`},
		{`data = "pull"`, `data = "push"`, `study.toml:30: key "constraint[3].data": data = "push" names no [[data]] table`},
		{`time = "t"`, `time = "time"`, `study.toml:32: key "constraint[3].time": dataset "pull" has no column "time"`},
		{`against = "data"`, `against = "model"`, `study.toml:33: key "constraint[3].against": against must be "zero"`},
		{`outputs = ["force_N", "strain"]`, `outputs = ["force_N", "force_N"]`, `study.toml:31: key "constraint[3].outputs": output "force_N" is named twice`},
	}
	for _, c := range cases {
		text := strings.Replace(constraintBase, c.from, c.to, 1)
		if text == constraintBase {
			t.Fatalf("case %q does not change the study", c.from)
		}
		s, err := loadCons(t, text, constraintCSV)
		if c.want == `no error` {
			if err != nil {
				t.Errorf("upper instead of lower: %v", err)
			} else {
				s.Close()
			}
			continue
		}
		if err == nil {
			s.Close()
			t.Errorf("%q → %q: no error", c.from, c.to)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q → %q:\n got %v\nwant %s", c.from, c.to, err, c.want)
		}
	}
}

// A constraint on a fixed parameter, a hinge on an output the data do not
// have, a time column that does not increase.
func TestConstraintDataErrors(t *testing.T) {
	fixed := strings.Replace(constraintBase, `eps_r = { normal = [0.0, 0.1] }`, "", 1) + "[fixed]\neps_r = 0.01\n"
	_, err := loadCons(t, fixed, constraintCSV)
	if err == nil || !strings.Contains(err.Error(), `key "constraint[1].params": parameter "eps_r" is fixed`) {
		t.Errorf("fixed parameter: %v", err)
	}
	noStrain := strings.Replace(constraintBase, `sigma = { force_N = 5.0, strain = 0.01 }`, `sigma = 5.0`, 1)
	_, err = loadCons(t, noStrain, "t,length_mm,force_N\n0,29,10\n0.5,30,50\n1.5,31,120\n")
	if err == nil || !strings.Contains(err.Error(), `dataset "pull" has no column "strain"`) {
		t.Errorf("smooth against data on an output without a column: %v", err)
	}
	_, err = loadCons(t, constraintBase, "t,length_mm,force_N,strain\n0,29,10,0.01\n0.5,30,50,\n0.5,31,120,0.05\n")
	if err == nil || !strings.Contains(err.Error(), `d.csv:4: column "t": time must increase from row to row (0.5 after 0.5)`) || !strings.Contains(err.Error(), `study.toml:32: key "constraint[3].time"`) {
		t.Errorf("time not increasing: %v", err)
	}
}

// The jacobian key: its values, and "analytic" refused with a reason when
// a term has no residual slopes (nmse's residuals are not elementwise in
// the sense of abi.ResidualSlopes).
func TestJacobianKey(t *testing.T) {
	s, err := loadCons(t, `jacobian = "central"`+"\n"+constraintBase, constraintCSV)
	if err != nil {
		t.Fatal(err)
	}
	if s.JacobianMode != JacobianCentral || s.NoAnalyticJacobian() != "" {
		t.Fatalf("mode %q, no analytic: %q", s.JacobianMode, s.NoAnalyticJacobian())
	}
	s.Close()
	_, err = loadCons(t, `jacobian = "exact"`+"\n"+constraintBase, constraintCSV)
	if err == nil || !strings.Contains(err.Error(), `study.toml:1: key "jacobian": jacobian must be "auto", "analytic", "forward" or "central"`) {
		t.Errorf("bad mode: %v", err)
	}
	nmse := strings.Replace(constraintBase, `use = "gaussian"`, `use = "nmse"`, 1)
	_, err = loadCons(t, `jacobian = "analytic"`+"\n"+nmse, constraintCSV)
	if err == nil || !strings.Contains(err.Error(), `key "jacobian": no analytic Jacobian for this study: likelihood term 1 (builtin:nmse) has no residual slopes`) {
		t.Errorf("analytic without slopes: %v", err)
	}
}

// lsqMethod is a stand-in least-squares method (CapLeastSquares) for the
// load-time check.
type lsqMethod struct{ abi.Method }

var lsqSpec = abi.Spec{Kind: abi.KindMethod, Name: "lsq-test", Capabilities: []abi.Capability{abi.CapLeastSquares}}

// A least-squares method is refused when a term gives no residuals,
// naming the term; with residuals everywhere it loads.
func TestLeastSquaresNeedsResiduals(t *testing.T) {
	builtin.Methods["lsq-test"] = builtin.Entry[abi.Method]{Spec: lsqSpec, New: func([]float64) (abi.Method, error) { return lsqMethod{}, nil }}
	defer delete(builtin.Methods, "lsq-test")
	text := strings.Replace(constraintBase, `use = "metropolis"`, `use = "lsq-test"`, 1)
	s, err := loadCons(t, text, constraintCSV)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	band := text + "[[likelihood]]\nuse = \"strainband\"\noutputs = [\"strain\"]\n"
	_, err = loadCons(t, band, constraintCSV)
	if err == nil || !strings.Contains(err.Error(), `key "likelihood[1]": method lsq-test is a least-squares method (capability "least_squares") and needs every term's residuals, but likelihood term 2 (builtin:strainband on dataset "pull") gives none`) {
		t.Errorf("term without residuals: %v", err)
	}
}

// Problem starts: the defaults clamped to the bounds without an init file
// (k's default 5000 is inside the prior [2000, 9000]), the init rows with
// one.
func TestProblemStarts(t *testing.T) {
	s, err := loadCons(t, strings.Replace(constraintBase, `k = { uniform = [2000.0, 9000.0] }`, `k = { uniform = [6000.0, 9000.0] }`, 1), constraintCSV)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.ProblemStarts()
	s.Close()
	if err != nil || len(st) != 1 || st[0][0] != 6000 || st[0][1] != 0 {
		t.Fatalf("starts %v %v: want the default 5000 clamped to 6000, and ε_r's 0", st, err)
	}
}
