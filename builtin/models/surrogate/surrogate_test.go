package surrogate

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// f is the function the test ensemble learns: two parameters a, b and one
// condition x; two outputs.
func f(a, b, x float64) (float64, float64) {
	return math.Sin(a+x) * b, a*a - 0.5*b*x
}

var (
	once   sync.Once
	toy    *nn.Ensemble
	toyErr error
)

// trained returns a small ensemble fitted to f on [0,1]² × [0,2] (trained
// once per test binary) and the provenance `kinfer train` would write for
// it.
func trained(t testing.TB) (*nn.Ensemble, nn.Provenance) {
	t.Helper()
	once.Do(func() { toy, toyErr = train("float32") })
	if toyErr != nil {
		t.Fatal(toyErr)
	}
	p := nn.Provenance{Model: "toy", ModelVersion: "1", Seed: 3, TrainingSamples: 400,
		InputNames: []string{"a", "b", "x"}, OutputNames: []string{"y0", "y1"},
		InputUnits: []string{"1", "1", "deg"}, OutputUnits: []string{"mm", "1"},
		Conditions: 1, ParamLower: []float64{0, 0}, ParamUpper: []float64{1, 1}, Design: "test"}
	return toy, p
}

// train fits the toy ensemble, its weight matrices kept in weights
// (float32, kinfer train's default, or float64).
func train(weights string) (*nn.Ensemble, error) {
	r := rand.New(rand.NewPCG(7, 1))
	d := &nn.Data{In: 3, Out: 2}
	for i := 0; i < 400; i++ {
		a, b, x := r.Float64(), r.Float64(), 2*r.Float64()
		y0, y1 := f(a, b, x)
		d.X = append(d.X, a, b, x)
		d.Y = append(d.Y, y0, y1)
		d.N++
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs, cfg.Dropout, cfg.Seed, cfg.Weights = []int{16, 16}, 2, 150, 0, 3, weights
	return nn.Train(cfg, d, nil)
}

// Tolerances: the FD step and the agreement of an exact derivative with a
// central difference of a smooth float64 function (error O(h²) + O(ε/h)).
const (
	fdStep = 1e-5
	fdTol  = 1e-6
)

func TestSpecFromProvenance(t *testing.T) {
	e, p := trained(t)
	m, err := New(e, p, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Spec()
	if len(s.Params) != 2 || s.Params[0].Name != "a" || s.Params[1].Upper != 1 || s.Params[0].Default != 0.5 ||
		len(s.Conditions) != 1 || s.Conditions[0].Name != "x" || s.Conditions[0].Unit != "deg" ||
		len(s.Outputs) != 2 || s.Outputs[0].Unit != "mm" || !s.Has(abi.CapJacobian) || !s.Has(abi.CapVJP) {
		t.Fatalf("spec %+v", s)
	}
	if !strings.Contains(s.Doc, "toy") {
		t.Errorf("doc %q does not name the source model", s.Doc)
	}
}

func TestSpecRefusesMismatch(t *testing.T) {
	e, p := trained(t)
	cases := map[string]func(p *nn.Provenance){
		"names 2 inputs":       func(p *nn.Provenance) { p.InputNames = p.InputNames[:2] },
		"names 3 outputs":      func(p *nn.Provenance) { p.OutputNames = append(p.OutputNames, "z") },
		"leave no parameter":   func(p *nn.Provenance) { p.Conditions = 3 },
		"training box of 1":    func(p *nn.Provenance) { p.ParamLower = p.ParamLower[:1] },
		"duplicate input name": func(p *nn.Provenance) { p.InputNames = []string{"a", "a", "x"} },
		"units":                func(p *nn.Provenance) { p.InputUnits = []string{"1"} },
	}
	for want, mutate := range cases {
		q := p
		q.InputNames = append([]string(nil), p.InputNames...)
		mutate(&q)
		if _, err := SpecOf(e, q); err == nil {
			t.Errorf("%s: accepted", want)
		} else {
			t.Logf("%s: %v", want, err)
		}
	}
}

func TestEvalIsTheEnsembleRowByRow(t *testing.T) {
	e, p := trained(t)
	m, _ := New(e, p, []float64{0, 0})
	theta, x := []float64{0.3, 0.7}, []float64{0.2, 0.5, 1.5}
	y := make([]float64, 6)
	if st := m.Eval(theta, x, y); st != abi.OK {
		t.Fatal(st)
	}
	for k, xk := range x {
		want := e.Predict(nil, []float64{theta[0], theta[1], xk}, 1, nil)
		for i := 0; i < 2; i++ {
			if y[k*2+i] != want[i] {
				t.Errorf("row %d output %d: %v, ensemble %v", k, i, y[k*2+i], want[i])
			}
		}
	}
	// It learned f (a loose check that the plumbing maps inputs right).
	for k, xk := range x {
		y0, _ := f(theta[0], theta[1], xk)
		if math.Abs(y[k*2]-y0) > 0.2 {
			t.Errorf("row %d: y0 %v, f %v", k, y[k*2], y0)
		}
	}
}

func TestOutsideTrainingConditions(t *testing.T) {
	e, p := trained(t)
	strict, _ := New(e, p, []float64{0, 0})
	loose, _ := New(e, p, []float64{1, 0})
	x := []float64{0.5, 2.5} // 2.5 beyond the training range [≈0, ≈2]
	y := make([]float64, 4)
	if st := strict.Eval([]float64{0.5, 0.5}, x, y); st != abi.Invalid {
		t.Errorf("outside = invalid: status %v", st)
	}
	if got := strict.OutsideConditions(x); len(got) != 1 || got[0] != 1 {
		t.Errorf("OutsideConditions %v, want [1]", got)
	}
	if st := loose.Eval([]float64{0.5, 0.5}, x, y); st != abi.OK {
		t.Errorf("outside = extrapolate: status %v", st)
	}
	if st := strict.Eval([]float64{math.NaN(), 0.5}, x[:1], y[:2]); st != abi.Invalid {
		t.Errorf("NaN θ: status %v", st)
	}
}

func TestJacobianAndVJPAgainstFiniteDifferences(t *testing.T) {
	e, p := trained(t)
	m, _ := New(e, p, []float64{0, 0})
	checkJacobianAndVJP(t, m)
}

// checkJacobianAndVJP: m's Jacobian against central differences of Eval
// (fdStep, fdTol), and its VJP's y equal to the Jacobian's and g = vᵀJ,
// at one θ and three conditions of the two-parameter, two-output toys.
func checkJacobianAndVJP(t *testing.T, m *Model) {
	t.Helper()
	theta, x := []float64{0.31, 0.62}, []float64{0.1, 0.8, 1.7}
	K, d, o := 3, 2, 2
	y := make([]float64, K*o)
	jac := make([]float64, K*o*d)
	if st := m.Jacobian(theta, x, y, jac); st != abi.OK {
		t.Fatal(st)
	}
	yp, ym := make([]float64, K*o), make([]float64, K*o)
	for j := 0; j < d; j++ {
		tp, tm := append([]float64(nil), theta...), append([]float64(nil), theta...)
		tp[j] += fdStep
		tm[j] -= fdStep
		m.Eval(tp, x, yp)
		m.Eval(tm, x, ym)
		for r := 0; r < K*o; r++ {
			fd := (yp[r] - ym[r]) / (2 * fdStep)
			if math.Abs(jac[r*d+j]-fd) > fdTol*(1+math.Abs(fd)) {
				t.Errorf("∂y[%d]/∂θ%d: %v, FD %v", r, j, jac[r*d+j], fd)
			}
		}
	}
	v := []float64{0.3, -1, 2, 0.5, -0.7, 1.1}
	y2, g := make([]float64, K*o), make([]float64, d)
	if st := m.VJP(theta, x, v, y2, g); st != abi.OK {
		t.Fatal(st)
	}
	for r := range y {
		if math.Abs(y2[r]-y[r]) > 1e-14*(1+math.Abs(y[r])) {
			t.Errorf("VJP y[%d] %v, Jacobian's %v", r, y2[r], y[r])
		}
	}
	for j := 0; j < d; j++ {
		want := 0.0
		for r := 0; r < K*o; r++ {
			want += v[r] * jac[r*d+j]
		}
		if math.Abs(g[j]-want) > 1e-12*(1+math.Abs(want)) {
			t.Errorf("VJP g[%d] %v, vᵀJ %v", j, g[j], want)
		}
	}
}

func BenchmarkEvalKneeSized(b *testing.B) {
	// 51 → [128 128 128 64] → 13, two members, 21 rows: the knee surrogate
	// of examples/knee-surrogate.
	r := rand.New(rand.NewPCG(1, 1))
	d := &nn.Data{In: 51, Out: 13, N: 64}
	for i := 0; i < d.N*d.In; i++ {
		d.X = append(d.X, r.Float64())
	}
	for i := 0; i < d.N*d.Out; i++ {
		d.Y = append(d.Y, r.Float64())
	}
	cfg := nn.DefaultConfig()
	cfg.Hidden, cfg.Members, cfg.Epochs = []int{128, 128, 128, 64}, 2, 1
	e, err := nn.Train(cfg, d, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := nn.Provenance{Conditions: 1}
	for j := 0; j < 51; j++ {
		p.InputNames = append(p.InputNames, "in"+string(rune('A'+j/26))+string(rune('a'+j%26)))
	}
	for j := 0; j < 13; j++ {
		p.OutputNames = append(p.OutputNames, "out"+string(rune('a'+j)))
	}
	for j := 0; j < 50; j++ {
		p.ParamLower, p.ParamUpper = append(p.ParamLower, 0), append(p.ParamUpper, 1)
	}
	m, err := New(e, p, []float64{1, 0})
	if err != nil {
		b.Fatal(err)
	}
	theta := make([]float64, 50)
	x := make([]float64, 21)
	y := make([]float64, 21*13)
	for b.Loop() {
		m.Eval(theta, x, y)
	}
}

// TestFloat32Weights: on a network trained with float64 weights,
// weights = "float32" predicts within the rounding of the weights
// (relative 2⁻²⁴ per weight, summed over the layers: a bound of 1e-5 of
// each output's training spread YSD, nn's own Frozen test measures
// ~1e-7), differs from the float64 network somewhere (it is not silently
// the float64 path), and is refused for Kriging. On a network trained with
// float32 weights (the default) both settings give the same bits.
func TestFloat32Weights(t *testing.T) {
	_, p := trained(t)
	e, err := train("float64")
	if err != nil {
		t.Fatal(err)
	}
	m64, err := New(e, p, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	m32, err := New(e, p, []float64{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	theta, x := []float64{0.3, 0.7}, []float64{0.2, 0.5, 1.5}
	y64, y32 := make([]float64, 6), make([]float64, 6)
	if m64.Eval(theta, x, y64) != abi.OK || m32.Eval(theta, x, y32) != abi.OK {
		t.Fatal("eval failed")
	}
	const tol = 1e-5
	differ := false
	for i := range y64 {
		if d := math.Abs(y32[i] - y64[i]); d > tol*e.Nets[0].YSD[i%2] {
			t.Errorf("output %d: float32 weights %v, float64 %v (|Δ| %.3g > %g·YSD)", i, y32[i], y64[i], d, tol)
		}
		differ = differ || y32[i] != y64[i]
	}
	if !differ {
		t.Error("float32 weights gave the float64 network's bits: the setting is not applied")
	}
	e32, _ := trained(t)
	a, err := New(e32, p, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(e32, p, []float64{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Eval(theta, x, y64) != abi.OK || b.Eval(theta, x, y32) != abi.OK {
		t.Fatal("eval failed")
	}
	for i := range y64 {
		if math.Float64bits(y32[i]) != math.Float64bits(y64[i]) {
			t.Errorf("float32-trained network, output %d: weights float32 %v, float64 %v (want the same bits)", i, y32[i], y64[i])
		}
	}
	ms, pk := krigingToy(t)
	if _, err := NewKriging(ms, pk, []float64{0, 1}); err == nil {
		t.Error("Kriging accepted weights = float32")
	}
}

// weights = "float32" on a network with a weight beyond float32's range is
// refused, naming it (rounded, it became +Inf and points went non-finite
// silently; audit 4).
func TestFloat32WeightOverflowRefused(t *testing.T) {
	_, p := trained(t)
	e, err := train("float64")
	if err != nil {
		t.Fatal(err)
	}
	e.Nets[0].W[1][2] = 1e39
	if _, err := New(e, p, []float64{0, 1}); err == nil || !strings.Contains(err.Error(), "network 1, layer 2, weight 3 is 1e+39") {
		t.Errorf("err %v", err)
	}
	if _, err := New(e, p, []float64{0, 0}); err != nil {
		t.Errorf("float64: %v", err)
	}
}
