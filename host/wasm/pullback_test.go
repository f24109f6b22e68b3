package wasm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// pullbackModel loads a testdata variant of quad with capability pullback
// (testmod.c: y1 = s·(a·x + b), y2 = s·a·x², s the setting "scale").
func pullbackModel(t *testing.T, file string) abi.Model {
	t.Helper()
	p := load(t, newRT(t, nil), testManifest("quadpb", file, abi.KindModel, 16, 0))
	m, err := p.Model(context.Background(), []float64{1.5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.(interface{ Close() error }).Close() })
	return m
}

// fdTol is the relative tolerance of a central difference with step
// 1e-6·max(1, |θ_j|) on quad, whose outputs are at most quadratic in θ:
// exact up to rounding, about 1e-10 relative here.
const fdTol = 1e-7

// fdVJP is vᵀ·∂y/∂θ by central differences of Eval.
func fdVJP(m abi.Model, theta, x, v []float64) []float64 {
	g := make([]float64, len(theta))
	yp, ym := make([]float64, len(v)), make([]float64, len(v))
	for j := range theta {
		h := 1e-6 * math.Max(1, math.Abs(theta[j]))
		tp, tm := append([]float64(nil), theta...), append([]float64(nil), theta...)
		tp[j] += h
		tm[j] -= h
		m.Eval(tp, x, yp)
		m.Eval(tm, x, ym)
		for i := range v {
			g[j] += v[i] * (yp[i] - ym[i]) / (tp[j] - tm[j])
		}
	}
	return g
}

// The pullback (capability pullback): the forward pass gives Eval's y bit
// for bit, the pullback the plugin's own VJP's g bit for bit (testmod.c
// does the same arithmetic), both agree with central differences, the tape
// can be pulled twice, and a bad cotangent is Invalid with g zero.
func TestPullback(t *testing.T) {
	m := pullbackModel(t, "pullback.wasm")
	pbr, ok := m.(abi.Pullbacker)
	if !ok {
		t.Fatal("a model with capability pullback is not an abi.Pullbacker")
	}
	if _, ok := m.(abi.Jacobian); !ok {
		t.Fatal("the model lists jacobian but is not an abi.Jacobian")
	}
	x := []float64{0.5, 1, 2, -3, 4}
	v := []float64{1, -2, 0.5, 3, -1, 0.25, 2, 2, -0.5, 1}
	for _, theta := range [][]float64{{1, 0}, {-2.5, 3}, {400, -7}} {
		y, ye := make([]float64, 10), make([]float64, 10)
		if st := m.Eval(theta, x, ye); st != abi.OK {
			t.Fatal(st)
		}
		pb, st := pbr.EvalPullback(theta, x, y)
		if st != abi.OK {
			t.Fatalf("θ %v: EvalPullback status %v (%v)", theta, st, m.(abi.Faulter).Fault())
		}
		if k := sameBits(y, ye); k >= 0 {
			t.Fatalf("θ %v: forward y[%d] = %v, Eval %v", theta, k, y[k], ye[k])
		}
		g1, g2 := make([]float64, 2), make([]float64, 2)
		if st := pb.Pull(v, g1); st != abi.OK {
			t.Fatal(st)
		}
		if st := pb.Pull(v, g2); st != abi.OK || sameBits(g1, g2) >= 0 {
			t.Fatalf("second Pull: %v, g %v then %v", st, g1, g2)
		}
		// Invalid cotangents: g all zero, the pullback still usable.
		bad := append([]float64(nil), v...)
		bad[3] = math.NaN()
		g3 := []float64{7, 7}
		if st := pb.Pull(bad, g3); st != abi.Invalid || g3[0] != 0 || g3[1] != 0 {
			t.Fatalf("NaN in v: status %v, g %v; want invalid, zeros", st, g3)
		}
		if st := pb.Pull(v[:4], g3); st != abi.Invalid {
			t.Fatalf("short v: status %v", st)
		}
		pb.Release()
		yv, gv := make([]float64, 10), make([]float64, 2)
		if st := m.(abi.VJP).VJP(theta, x, v, yv, gv); st != abi.OK {
			t.Fatal(st)
		}
		if k := sameBits(g1, gv); k >= 0 {
			t.Fatalf("θ %v: pullback g[%d] = %v, kinfer_model_vjp %v", theta, k, g1[k], gv[k])
		}
		fd := fdVJP(m, theta, x, v)
		for j := range fd {
			if math.Abs(g1[j]-fd[j]) > fdTol*math.Max(1, math.Abs(fd[j])) {
				t.Errorf("θ %v: g[%d] = %v, central differences %v", theta, j, g1[j], fd[j])
			}
		}
	}
	// A point the model refuses: the forward pass's status, no pullback.
	if pb, st := pbr.EvalPullback([]float64{-600, 0}, x, make([]float64, 10)); st != abi.Invalid || pb != nil {
		t.Fatalf("a < -500: %v %v, want invalid and no pullback", pb, st)
	}
}

// With "pullback" but not "vjp", the host's VJP is forward then pullback;
// it agrees with central differences.
func TestPullbackOnlyGivesVJP(t *testing.T) {
	m := pullbackModel(t, "pullback_only.wasm")
	vm, ok := m.(abi.VJP)
	if !ok {
		t.Fatal("a model with capability pullback is not an abi.VJP")
	}
	if _, ok := m.(abi.Jacobian); ok {
		t.Fatal("pullback_only does not list jacobian")
	}
	x := []float64{1, 2, 3}
	v := []float64{0.5, 1, -1, 2, 0.25, -0.5}
	theta := []float64{3, -1}
	y, g := make([]float64, 6), make([]float64, 2)
	if st := vm.VJP(theta, x, v, y, g); st != abi.OK {
		t.Fatal(st, m.(abi.Faulter).Fault())
	}
	ye := make([]float64, 6)
	m.Eval(theta, x, ye)
	if k := sameBits(y, ye); k >= 0 {
		t.Fatalf("VJP y[%d] = %v, Eval %v", k, y[k], ye[k])
	}
	fd := fdVJP(m, theta, x, v)
	for j := range fd {
		if math.Abs(g[j]-fd[j]) > fdTol*math.Max(1, math.Abs(fd[j])) {
			t.Errorf("g[%d] = %v, central differences %v", j, g[j], fd[j])
		}
	}
}

// A guest that breaks the pullback's contract is a trap naming the export:
// a tape span left unwritten, out of memory, too long; g left unwritten.
func TestPullbackFaults(t *testing.T) {
	x := []float64{1, 2}
	v := []float64{1, 1, 1, 1}
	for _, c := range []struct {
		a     float64
		pull  bool
		parts []string
	}{
		{901, false, []string{"kinfer_model_forward", "without writing its tape span"}},
		{902, false, []string{"kinfer_model_forward", "tape [4294967280, +32)", "outside memory"}},
		{903, false, []string{"kinfer_model_forward", "tape of 16777216 values", "at most 8388608"}},
		{904, true, []string{"kinfer_model_pullback", "without writing g[0]"}},
	} {
		m := pullbackModel(t, "pullback.wasm")
		pb, st := m.(abi.Pullbacker).EvalPullback([]float64{c.a, 0}, x, make([]float64, 4))
		if c.pull {
			if st != abi.OK {
				t.Fatalf("a=%v: forward %v", c.a, st)
			}
			st = pb.Pull(v, make([]float64, 2))
		}
		if st != abi.Trap {
			t.Fatalf("a=%v: status %v, want trap", c.a, st)
		}
		var e *Error
		err := m.(abi.Faulter).Fault()
		if !errors.As(err, &e) || !e.Deterministic() {
			t.Fatalf("a=%v: fault %v, want a deterministic *Error", c.a, err)
		}
		wantErr(t, err, c.parts...)
	}
}

// Certification compares the pullback with the plugin's own eval and VJP:
// the honest module passes; one whose g or y differs is reported with the
// point and the value.
func TestCertifyPullback(t *testing.T) {
	r := newRT(t, nil)
	cert, err := load(t, r, testManifest("quadpb", "pullback.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cert.Checks {
		if strings.Contains(c, "kinfer_model_pullback") && strings.Contains(c, "bit for bit at 10 of 10") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no pullback check in %q", cert.Checks)
	}
	// A model listing only pullback: the host's VJP is forward then
	// pullback, and its determinism check names kinfer_model_pullback, not
	// an export the model does not have (audit 6).
	only, err := load(t, r, testManifest("quadonly", "pullback_only.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(only.Checks, "\n")
	if strings.Contains(all, "kinfer_model_vjp") || !strings.Contains(all, "kinfer_model_pullback: 12 points on two instances in opposite orders: identical") {
		t.Errorf("pullback-only model's checks: %q", only.Checks)
	}
	// A pullback that reads the instance's own last tape, not the one it
	// is given (ABI.md §6.1 MUST NOT), is refused: its g after another
	// point's forward pass differs (audit 16: certified, then gave
	// workers-dependent gradients).
	_, err = load(t, r, testManifest("quadstate", "pullback_state.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	wantErr(t, err, "plugin quadstate", "kinfer_model_pullback", "after a forward pass of another point on that instance", "ABI.md §6.1")
	for _, c := range []struct{ file, want string }{
		{"pullback_lie.wasm", "g[1] = "},
		{"pullback_liey.wasm", "kinfer_model_forward gives y[0] = "},
	} {
		_, err := load(t, r, testManifest("quadlie", c.file, abi.KindModel, 16, 0)).
			Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
		var pm *PullbackMismatchError
		if !errors.As(err, &pm) || pm.Point != 0 {
			t.Fatalf("%s: %v, want a *PullbackMismatchError at point 0", c.file, err)
		}
		wantErr(t, err, "plugin quadlie", c.want, "ABI.md §6.1")
	}
}

// Certification checks a model's derivatives: the honest module's Jacobian
// and VJP agree with each other and with central differences of its eval;
// a VJP with the wrong sign on g[1] (its Jacobian right) is refused with
// the export and the point. (A wrong VJP silently misled Adam.)
func TestCertifyDerivatives(t *testing.T) {
	r := newRT(t, nil)
	cert, err := load(t, r, testManifest("quad", "model.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cert.Checks, "\n"), "derivatives: y of the Jacobian/VJP identical") {
		t.Fatalf("no derivative check in %q", cert.Checks)
	}
	_, err = load(t, r, testManifest("quadvjp", "vjp_lie.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	var dm *DerivativeMismatchError
	if !errors.As(err, &dm) || dm.Export != "kinfer_model_vjp" {
		t.Fatalf("vjp_lie.wasm: %v, want a *DerivativeMismatchError of kinfer_model_vjp", err)
	}
	wantErr(t, err, "plugin quadvjp", "differs from vᵀ·J of kinfer_model_jacobian", "(relative), most in ", "ABI.md §6.1")
}

// Certification checks a likelihood's residuals and grad_y against its
// logL: the test likelihood passes (logL = −½‖r‖², gy its derivative);
// one whose residuals are twice the true ones is refused.
func TestCertifyLikelihoodDerivatives(t *testing.T) {
	r := newRT(t, nil)
	cert, err := load(t, r, testManifest("wgauss", "lik.wasm", abi.KindLikelihood, 0, 0)).
		Certify(context.Background(), CertifyOptions{Seed: 4, Outputs: 2, Points: 6})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(cert.Checks, "\n")
	if !strings.Contains(all, "kinfer_likelihood_residuals: logL + ½‖r‖² constant") || !strings.Contains(all, "kinfer_likelihood_grad: gy against central differences") {
		t.Fatalf("checks %q", cert.Checks)
	}
	_, err = load(t, r, testManifest("wlie", "lik_reslie.wasm", abi.KindLikelihood, 0, 0)).
		Certify(context.Background(), CertifyOptions{Seed: 4, Outputs: 2, Points: 6})
	var dm *DerivativeMismatchError
	if !errors.As(err, &dm) || dm.Export != "kinfer_likelihood_residuals" {
		t.Fatalf("lik_reslie.wasm: %v, want a *DerivativeMismatchError of kinfer_likelihood_residuals", err)
	}
	// The missing-observation check: the test likelihood skips a NaN
	// observation; one that does not (logL NaN) is refused.
	if !strings.Contains(all, "a missing observation (NaN) is skipped") {
		t.Errorf("checks %q: no missing-observation check", cert.Checks)
	}
	_, err = load(t, r, testManifest("noskip", "lik_noskip.wasm", abi.KindLikelihood, 0, 0)).
		Certify(context.Background(), CertifyOptions{Seed: 4, Outputs: 2, Points: 6})
	if err == nil || !strings.Contains(err.Error(), "with observation 0 (row 0, output 0) missing (NaN), which a likelihood must skip") {
		t.Fatalf("lik_noskip.wasm: %v", err)
	}
	// Every output's missing observation is skipped, not only the first
	// (audit 20: output 1's NaN read as 0 was certified).
	_, err = load(t, r, testManifest("noskip1", "lik_noskip1.wasm", abi.KindLikelihood, 0, 0)).
		Certify(context.Background(), CertifyOptions{Seed: 4, Outputs: 2, Points: 6})
	if err == nil || !strings.Contains(err.Error(), "with observation 1 (row 0, output 1) missing (NaN), which a likelihood must skip") {
		t.Fatalf("lik_noskip1.wasm: %v", err)
	}
	// Its ∂logL/∂y there must be 0 too (audit 18: a nonzero one moved
	// Adam's optimum and was certified).
	_, err = load(t, r, testManifest("gynan", "lik_gynan.wasm", abi.KindLikelihood, 0, 0)).
		Certify(context.Background(), CertifyOptions{Seed: 4, Outputs: 2, Points: 6})
	if err == nil || !strings.Contains(err.Error(), "kinfer_likelihood_grad with observation 0 (row 0, output 0) missing (NaN)") || !strings.Contains(err.Error(), "MUST be 0") {
		t.Fatalf("lik_gynan.wasm: %v", err)
	}
}

// A model that lists rows_independent although its rows depend on how many
// are evaluated together is refused by certification (the host would
// split its rows across workers and change its results).
func TestCertifyRowsIndependent(t *testing.T) {
	r := newRT(t, nil)
	_, err := load(t, r, testManifest("rowslie", "rows_lie.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	var dm *DerivativeMismatchError
	if !errors.As(err, &dm) || !strings.Contains(err.Error(), "the rows are not independent") {
		t.Fatalf("rows_lie.wasm: %v, want a rows_independent mismatch", err)
	}
	wantErr(t, err, "plugin rowslie", "ABI.md §4")

	// Outputs right, but the Jacobian's rows depend on the call's first
	// condition: the host assembles least-squares Jacobians from blocks
	// (audit 18: certified, then a wrong fit).
	_, err = load(t, r, testManifest("jacrows", "jac_rows_lie.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	if !errors.As(err, &dm) || !strings.Contains(err.Error(), "kinfer_model_jacobian (rows_independent)") || !strings.Contains(err.Error(), "the Jacobian's rows are not independent") {
		t.Fatalf("jac_rows_lie.wasm: %v, want a rows_independent mismatch of the Jacobian", err)
	}

	// A model that lies only in calls of the host's block of 256 rows is
	// caught on 600 rows (recheck of audit 5: certified).
	x600 := make([]float64, 600)
	for i := range x600 {
		x600[i] = float64(i%7) + 0.5
	}
	_, err = load(t, r, testManifest("blocklie", "block_lie.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4, X: x600})
	if !errors.As(err, &dm) || !strings.Contains(err.Error(), "rows 0–255 alone") {
		t.Fatalf("block_lie.wasm: %v, want a mismatch of rows 0–255", err)
	}

	// A model without conditions is called with a dataset's K rows too;
	// one that uses a row's place in the call is caught with the rows
	// given (Rows), and by default (5 rows), not evaluated on one row only
	// (audit 5: "certified", then a wrong fit).
	for _, rows := range []int{0, 600} {
		_, err = load(t, r, testManifest("nocond", "nocond_lie.wasm", abi.KindModel, 16, 0)).
			Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4, Rows: rows})
		if !errors.As(err, &dm) || !strings.Contains(err.Error(), "the rows are not independent") {
			t.Fatalf("nocond_lie.wasm, Rows %d: %v, want a rows_independent mismatch", rows, err)
		}
		if want := fmt.Sprintf("but all %d rows together give", max(rows, 5)); !strings.Contains(err.Error(), want) {
			t.Errorf("Rows %d: %v, want %q", rows, err, want)
		}
		// The point is named by θ, not only by its index (audit 10).
		if !strings.Contains(err.Error(), "the point is θ = (") {
			t.Errorf("Rows %d: %v names no θ", rows, err)
		}
	}
}

// A Jacobian with the wrong sign in one column is refused even beside an
// output of 1e6 (whose size once widened the tolerance of every entry)
// and whatever the other columns' size: columns are compared one by one,
// each entry within its measured noise.
func TestCertifyJacobianColumnwise(t *testing.T) {
	r := newRT(t, nil)
	_, err := load(t, r, testManifest("offlie", "offset_lie.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	var dm *DerivativeMismatchError
	if !errors.As(err, &dm) || dm.Export != "kinfer_model_jacobian" || !strings.Contains(err.Error(), "the derivative in b differs") {
		t.Fatalf("offset_lie.wasm: %v, want a Jacobian mismatch in b", err)
	}
}

// A likelihood that refuses every certification point (its domain
// excludes the synthetic observations) is not certified on refusals alone
// (audit 20: a log-normal likelihood was "certified").
func TestCertifyLikelihoodAllRefused(t *testing.T) {
	r := newRT(t, nil)
	// lik_positive.wasm refuses an observation ≤ 0 (status 2): each
	// point has some of certify's 16 standard normal observations below 0.
	_, err := load(t, r, testManifest("allbad", "lik_positive.wasm", abi.KindLikelihood, 0, 0)).
		Certify(context.Background(), CertifyOptions{Seed: 4, Outputs: 2, Points: 6})
	if err == nil || !strings.Contains(err.Error(), "kinfer_likelihood_eval failed at all 6 points") || !strings.Contains(err.Error(), "nothing could be certified") {
		t.Fatalf("%v", err)
	}
}

// A trap in the rows_independent check names the rows of the call that
// trapped (audit 20: only θ was named).
func TestCertifyRowsTrapLocated(t *testing.T) {
	r := newRT(t, nil)
	_, err := load(t, r, testManifest("jactrap", "jac_rows_trap.wasm", abi.KindModel, 16, 0)).
		Certify(context.Background(), CertifyOptions{Settings: []float64{1.5}, Seed: 4})
	if err == nil || !strings.Contains(err.Error(), "rows_independent check: row 2 alone") {
		t.Fatalf("%v", err)
	}
}
