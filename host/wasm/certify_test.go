package wasm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
)

// Every plugin of the repository and the test modules certify: the same
// points give bit-identical results on fresh instances, in any order and
// batch size.
func TestCertifyDeterministicPlugins(t *testing.T) {
	r := newRT(t, nil)
	for _, c := range []struct {
		p        *Plugin
		settings map[string]float64
		want     []string
	}{
		{load(t, r, testManifest("quad", "model.wasm", abi.KindModel, 16, 0)), map[string]float64{"scale": 2},
			[]string{"kinfer_model_eval", "kinfer_model_jacobian", "kinfer_model_vjp"}},
		{load(t, r, testManifest("wgauss", "lik_batch.wasm", abi.KindLikelihood, 0, 0)), nil,
			[]string{"kinfer_likelihood_eval:", "kinfer_likelihood_eval_batch"}},
		{load(t, r, testManifest("grid", "method.wasm", abi.KindMethod, 0, 0)), nil, []string{"kinfer_method_ask"}},
		{loadPlugin(t, "plugins/c/ligament"), map[string]float64{"ref_length_mm": 30}, []string{"kinfer_model_jacobian"}},
		{loadPlugin(t, "plugins/go/ligament"), map[string]float64{"ref_length_mm": 30}, []string{"kinfer_model_eval"}},
		{loadPlugin(t, "plugins/go/studentt"), nil, []string{"kinfer_likelihood_eval"}},
		{loadPlugin(t, "plugins/go/metropolis"), map[string]float64{"samples": 20, "burn_in": 10}, []string{"kinfer_method_ask", "kinfer_method_samples"}},
	} {
		s, err := abi.SettingValues(c.p.Spec.Settings, c.settings)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := c.p.Certify(context.Background(), CertifyOptions{Settings: s, Points: 40, Seed: 3})
		if err != nil {
			t.Errorf("%s: %v", c.p.Manifest.Name, err)
			continue
		}
		all := strings.Join(cert.Checks, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: checks %q lack %s", c.p.Manifest.Name, all, w)
			}
		}
	}
}

// A model whose output depends on how many calls its instance served is
// caught, with the export and the point.
func TestCertifyCatchesCallHistory(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("stateful", "stateful.wasm", abi.KindModel, 16, 0))
	_, err := p.Certify(context.Background(), CertifyOptions{Settings: []float64{1}, Seed: 1})
	var nd *NondeterminismError
	if !errors.As(err, &nd) {
		t.Fatalf("err = %v, want a NondeterminismError", err)
	}
	if nd.Export != "kinfer_model_eval" || nd.Point < 0 || !strings.Contains(err.Error(), "plugin stateful is not deterministic: kinfer_model_eval at point") {
		t.Errorf("err = %v", err)
	}
}

// A method is certified on the parameters given (a study's: its d and
// bounds), not a made-up problem: the grid test method accepts 1 ≤ d ≤ 8,
// so two parameters certify and nine are refused by its init.
func TestCertifyMethodOnTheStudysParameters(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("grid", "method.wasm", abi.KindMethod, 0, 0))
	set, err := abi.SettingValues(p.Spec.Settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	two := []abi.Param{{Name: "k", Lower: 2000, Upper: 9000}, {Name: "eps_r", Lower: -0.2, Upper: 0.3}}
	if _, err := p.Certify(context.Background(), CertifyOptions{Settings: set, Params: two, Seed: 1}); err != nil {
		t.Fatalf("two parameters: %v", err)
	}
	// Half-infinite boxes (a log transform of a parameter from 0, a
	// multiplier): the start and draws stay inside them.
	// (The grid test method needs a finite box; the shipped C Gauss–Newton
	// plugin refuses a start outside its box.)
	gn := loadPlugin(t, "plugins/c/gaussnewton")
	gset, err := abi.SettingValues(gn.Spec.Settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	half := []abi.Param{{Name: "a", Lower: math.Inf(-1), Upper: math.Log(0.001)}, {Name: "b", Lower: 0.5, Upper: math.Inf(1)}}
	if _, err := gn.Certify(context.Background(), CertifyOptions{Settings: gset, Params: half, Seed: 1}); err != nil {
		t.Fatalf("half-infinite boxes: %v", err)
	}
	nine := make([]abi.Param, 9)
	for i := range nine {
		nine[i] = abi.Param{Name: string(rune('a' + i)), Lower: -1, Upper: 1}
	}
	if _, err := p.Certify(context.Background(), CertifyOptions{Settings: set, Params: nine, Seed: 1}); err == nil || !strings.Contains(err.Error(), "1 <= d <= 8") {
		t.Fatalf("nine parameters: %v, want the method's own refusal", err)
	}
}

// A method whose load drops the batch pending at the save (the grid test
// method with bad_span = 3) would resume into another run: certify says
// so, naming kinfer_method_load; the honest one (bad_span = 0) passes.
func TestCertifyMethodResume(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("grid", "method.wasm", abi.KindMethod, 0, 0))
	for _, c := range []struct {
		bad  float64
		want string
	}{{0, ""}, {3, "kinfer_method_load"}} {
		set, err := abi.SettingValues(p.Spec.Settings, map[string]float64{"bad_span": c.bad})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Certify(context.Background(), CertifyOptions{Settings: set, Seed: 1})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "pending batch")) {
			t.Errorf("bad_span = %g: %v", c.bad, err)
		}
	}
}

// Certify's points lie in the box, finite, also for finite bounds more
// than MaxFloat64 apart (ABI.md §4 allows [−1e308, 1e308]; audit 7: the
// model was given θ = +Inf), and are lower + u·(upper − lower) to the bit
// for ordinary bounds.
func TestInBoxFinite(t *testing.T) {
	wide := abi.Param{Lower: -1e308, Upper: 1e308}
	for _, u := range []float64{0, 1e-300, 0.25, 0.5, 0.999999} {
		if v := inBox(wide, u); math.IsInf(v, 0) || math.IsNaN(v) || v < wide.Lower || v > wide.Upper {
			t.Errorf("u = %g: %v", u, v)
		}
		k := abi.Param{Lower: 2000, Upper: 12000}
		if v := inBox(k, u); v != 2000+10000*u {
			t.Errorf("k, u = %g: %v", u, v)
		}
	}
}

// halfJacobian is y = a·x with a Jacobian that fails for a > 0.5.
type halfJacobian struct{ spec abi.Spec }

func (m halfJacobian) Spec() abi.Spec { return m.spec }
func (m halfJacobian) Eval(th, x, y []float64) abi.Status {
	for k := range x {
		y[k] = th[0] * x[k]
	}
	return abi.OK
}
func (m halfJacobian) Jacobian(th, x, y, j []float64) abi.Status {
	if th[0] > 0.5 {
		return abi.Failed
	}
	m.Eval(th, x, y)
	copy(j, x)
	return abi.OK
}

// A Jacobian that fails at some points is certified (a counted status),
// with a note saying where (audit 10, author10 F4: no word of it).
func TestCertifyNotesPartialDerivativeFailures(t *testing.T) {
	spec := abi.Spec{Kind: abi.KindModel, Name: "half", Params: []abi.Param{{Name: "a", Lower: 0, Upper: 1}},
		Conditions: []abi.Column{{Name: "x"}}, Outputs: []abi.Column{{Name: "y"}}}
	p := &Plugin{Manifest: &manifest.Manifest{Name: "half"}, Spec: spec}
	m := halfJacobian{spec}
	thetas := [][]float64{{0.2}, {0.4}, {0.7}, {0.9}}
	x := []float64{1, 2}
	y0 := make([][]float64, len(thetas))
	s0 := make([]abi.Status, len(thetas))
	for i, th := range thetas {
		y0[i] = make([]float64, 2)
		s0[i] = m.Eval(th, x, y0[i])
	}
	line, err := p.certifyDerivatives(m, thetas, x, 2, y0, s0, rand.New(rand.NewPCG(1, 2)))
	if err != nil || !strings.Contains(line, "NOTE: kinfer_model_jacobian failed at 2 of the 4 points where kinfer_model_eval succeeded, the first θ = (a 0.7)") {
		t.Errorf("%q, %v", line, err)
	}
}

// negInf is a likelihood that is −∞ everywhere (status 0), with residuals.
type negInf struct{}

func (negInf) Spec() abi.Spec { return abi.Spec{Kind: abi.KindLikelihood, Name: "neginf"} }
func (negInf) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	return math.Inf(-1), abi.OK
}
func (negInf) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	for i := range r {
		r[i] = y[i] - obs[i]
	}
	return abi.OK
}

// A residuals check that could compare nothing (logL −∞ at every point)
// is said, not dropped (audit 10, author10 F6).
func TestCertifySaysResidualsNotChecked(t *testing.T) {
	p := &Plugin{Manifest: &manifest.Manifest{Name: "neginf"}, Spec: negInf{}.Spec()}
	ys := [][]float64{{1, 2}, {3, 4}}
	la := []float64{math.Inf(-1), math.Inf(-1)}
	line, err := p.certifyLikelihoodDerivatives(negInf{}, 2, ys, []float64{0, 0}, []float64{1, 1}, la, []abi.Status{abi.OK, abi.OK})
	if err != nil || !strings.Contains(line, "kinfer_likelihood_residuals: NOT CHECKED: logL was −∞ or a call failed at every point") {
		t.Errorf("%q, %v", line, err)
	}
}

// A batch that leaves an output unwritten while its points, called alone,
// are right (batch_nowrite.wasm: point 1 of a batch skips y[1]): a run
// gets the single-point results and is told (BatchFaults, summary.json
// batch_faults), and certify refuses the plugin (audit 21: both were
// silent, and certify said deterministic).
func TestBatchFaultTalliedAndRefused(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("bnw", "batch_nowrite.wasm", abi.KindModel, 16, 0))
	m, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.(interface{ Close() error }).Close()
	x := []float64{1, 2}
	th := [][]float64{{1, 2}, {3, 1}, {2, 0}}
	ys := [][]float64{make([]float64, 4), make([]float64, 4), make([]float64, 4)}
	st := make([]abi.Status, 3)
	m.(abi.BatchModel).EvalBatch(th, x, ys, st)
	// y = (a·x + b, a·x²) per row (testmod.c, scale 1): point 1, a = 3,
	// b = 1, at x = 1 and 2.
	if st[1] != abi.OK || !slices.Equal(ys[1], []float64{4, 3, 7, 12}) {
		t.Fatalf("point 1: status %v, y %v, want ok and [4 3 7 12] (its call alone)", st[1], ys[1])
	}
	note := m.(interface{ BatchFaults() string }).BatchFaults()
	for _, want := range []string{"kinfer_model_eval faulted in 1 batched calls", "a batch of 3 points", "without writing y[1]"} {
		if !strings.Contains(note, want) {
			t.Errorf("BatchFaults %q lacks %q", note, want)
		}
	}
	p2 := load(t, r, testManifest("bnw", "batch_nowrite.wasm", abi.KindModel, 16, 0))
	_, err = p2.Certify(context.Background(), CertifyOptions{Settings: []float64{1}, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "kinfer_model_eval faults in a batch whose points each succeed alone") {
		t.Errorf("certify: %v", err)
	}
}
