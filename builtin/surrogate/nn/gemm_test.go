package nn

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// predictGonum is the ensemble prediction as kinfer computed it before
// builtin/internal/dgemm: the same layers with gonum's blas64.Gemm and the
// reference softplus ln(1 + eᶻ) of math.Log1p and math.Exp.
func predictGonum(e *Ensemble, x []float64, n int) []float64 {
	d, m := e.In(), e.Out()
	y := make([]float64, n*m)
	for k, net := range e.Nets {
		in := make([]float64, n*d)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				in[i*d+j] = (x[i*d+j] - net.XMean[j]) / net.XSD[j]
			}
		}
		L := net.NumLayers()
		for l := 0; l < L; l++ {
			kk, mm := net.Sizes[l], net.Sizes[l+1]
			z := make([]float64, n*mm)
			for i := 0; i < n; i++ {
				copy(z[i*mm:(i+1)*mm], net.B[l])
			}
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: n, Cols: kk, Stride: kk, Data: in},
				blas64.General{Rows: kk, Cols: mm, Stride: mm, Data: net.W[l]}, 1,
				blas64.General{Rows: n, Cols: mm, Stride: mm, Data: z})
			if l < L-1 {
				for i, v := range z {
					if v > 0 {
						z[i] = v + math.Log1p(math.Exp(-v))
					} else {
						z[i] = math.Log1p(math.Exp(v))
					}
				}
			}
			in = z
		}
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				y[i*m+j] += e.Weights[k] * (net.YMean[j] + net.YSD[j]*in[i*m+j])
			}
		}
	}
	return y
}

// goldenTol bounds |Δy|/YSD between the dgemm and the gonum predictions:
// both sum every layer's products exactly up to rounding, in different
// orders, so they differ by a few γ_k = kε/(1−kε) (≈ 1e-13 for k ≤ 1 024;
// Higham 2002, Sec. 3.1) relative to Σ|a·w| per layer, amplified through
// eight layers; measured 1.5e-15, so 1e-12 leaves a wide margin.
const goldenTol = 1e-12

// TestGoldenKneeFile: the trained knee ensemble of examples/knee-surrogate
// (51 → 13, whatever its layers and members) loads and predicts, at 64
// points inside its training box, the values the gonum code predicts,
// within goldenTol (not the same bits: the summation order changed).
func TestGoldenKneeFile(t *testing.T) {
	const n = 64
	e, x := kneeFileAndPoints(t, n)
	got := e.Predict(nil, x, n, nil)
	want := predictGonum(e, x, n)
	worst := 0.0
	m := e.Out()
	for i := range got {
		// YSD of the first member: all members share the training data's normalisation.
		r := math.Abs(got[i]-want[i]) / e.Nets[0].YSD[i%m]
		worst = math.Max(worst, r)
		if !(r <= goldenTol) {
			t.Fatalf("row %d output %d: %v, gonum path %v (|Δ|/YSD = %g > %g)", i/m, i%m, got[i], want[i], r, goldenTol)
		}
	}
	t.Logf("worst |Δ|/YSD against the gonum path: %.3g", worst)
}

// TestWorkerCountIndependent: Predict at batch 1 and 12 (the products split
// over output columns), the Jacobian and the VJP give the same bits with
// GOMAXPROCS 1 and 2.
func TestWorkerCountIndependent(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{7, 256, 512, 64, 5}, 3)}, Weights: []float64{1}}
	x := randData(12, 7, 5, 4).X
	v := make([]float64, 12*5)
	for i := range v {
		v[i] = math.Sin(float64(i))
	}
	run := func() [][]float64 {
		y1 := e.Predict(nil, x, 1, nil)
		y12 := e.Predict(nil, x, 12, nil)
		yj, jac := e.Jacobian(x[:7], nil)
		yv, gx := e.VJP(nil, x, 12, v, nil, nil)
		return [][]float64{y1, y12, yj, jac, yv, gx}
	}
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	a := run()
	runtime.GOMAXPROCS(2)
	b := run()
	for q := range a {
		for i := range a[q] {
			if math.Float64bits(a[q][i]) != math.Float64bits(b[q][i]) {
				t.Fatalf("result %d value %d: %v with 1 worker, %v with 2", q, i, a[q][i], b[q][i])
			}
		}
	}
}

// frozenTol bounds |Δy|/YSD between the float32-weight and the float64
// predictions of the knee ensemble: each weight is rounded by at most
// 2⁻²⁴ relative (6e-8), and the errors of eight layers add up, largely at
// random; measured 1.5e-7, so 5e-6 leaves a margin of about 30.
const frozenTol = 5e-6

// TestFrozen: a Frozen ensemble with float64 weights predicts the bits of
// Ensemble.Predict (batch 1, 12 and 600, over several chunks), with
// float32 weights within frozenTol of them, and either does so with
// GOMAXPROCS 1 and 2 alike.
func TestFrozen(t *testing.T) {
	const n = 600
	e, x := kneeFileAndPoints(t, n)
	m := e.Out()
	f64, f32 := e.Freeze(false), e.Freeze(true)
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	var first [][]float64
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		var outs [][]float64
		worst := 0.0
		for _, rows := range []int{1, 12, n} {
			want := e.Predict(nil, x, rows, nil)
			got := f64.Predict(nil, x, rows, nil)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("batch %d: float64 Frozen %v, Predict %v", rows, got[i], want[i])
				}
			}
			g32 := f32.Predict(nil, x, rows, nil)
			for i := range want {
				r := math.Abs(g32[i]-want[i]) / e.Nets[0].YSD[i%m]
				worst = math.Max(worst, r)
				if !(r <= frozenTol) {
					t.Fatalf("batch %d row %d output %d: float32 weights %v, float64 %v (|Δ|/YSD %g > %g)", rows, i/m, i%m, g32[i], want[i], r, frozenTol)
				}
			}
			outs = append(outs, want, g32)
		}
		t.Logf("GOMAXPROCS %d: worst |Δ|/YSD of the float32 weights: %.3g", procs, worst)
		if first == nil {
			first = outs
			continue
		}
		for q := range outs {
			for i := range outs[q] {
				if math.Float64bits(outs[q][i]) != math.Float64bits(first[q][i]) {
					t.Fatalf("result %d value %d differs between GOMAXPROCS 1 and 2", q, i)
				}
			}
		}
	}
}

// TestAdamKernel: the Adam update (AVX-512 kernel where the CPU has it,
// split over the cores) gives the bits of the portable adamGo, with and
// without the L2 term, for lengths around the vector width and beyond the
// parallel threshold.
func TestAdamKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 7, 8, 9, 31, 100, parallelMin + 13} {
		for _, l2x2 := range []float64{0, 2e-6} {
			p, g, m, v := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range p {
				p[i], g[i], m[i], v[i] = r.NormFloat64(), r.NormFloat64()*math.Exp(3*r.NormFloat64()), r.NormFloat64()*0.1, r.Float64()*0.01
			}
			p2, m2, v2 := append([]float64(nil), p...), append([]float64(nil), m...), append([]float64(nil), v...)
			b1, b2 := 0.9, 0.999 // variables: 1 − b1 rounded at run time, as in training
			adam(p, g, m, v, b1, b2, 1e-3, 1e-7, l2x2)
			c := [8]float64{b1, b2, 1 - b1, 1 - b2, 1e-3, 1e-7, l2x2}
			adamGo(p2, g, m2, v2, &c)
			for i := range p {
				if math.Float64bits(p[i]) != math.Float64bits(p2[i]) || math.Float64bits(m[i]) != math.Float64bits(m2[i]) ||
					math.Float64bits(v[i]) != math.Float64bits(v2[i]) {
					t.Fatalf("n=%d l2x2=%v element %d: kernel (%v, %v, %v), portable (%v, %v, %v)", n, l2x2, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
				}
			}
		}
	}
}

// TestTeamTune: the first call of a batch size runs alone, the second on
// the team, then the faster way on average, except one call each way every
// tuneEvery; the average moves by 1/8 of a new measurement.
func TestTeamTune(t *testing.T) {
	var tn teamTune
	if tn.choose() || !tn.choose() {
		t.Fatal("the first two calls must try alone, then the team")
	}
	tn.record(false, 1000)
	tn.record(true, 500)
	for c := 3; c <= 3*tuneEvery; c++ {
		got := tn.choose()
		want := c%tuneEvery != 1 // probes: alone at c ≡ 1, team at c ≡ 2
		if got != want {
			t.Fatalf("call %d: team=%v, want %v", c, got, want)
		}
	}
	tn.record(true, 4500) // 500 + (4500 − 500)/8 = 1000: not faster any more
	if got := tn.avg[1].Load(); got != 1000 {
		t.Fatalf("moving average %d, want 1000", got)
	}
	for tn.calls.Load()%tuneEvery < 5 {
		tn.choose()
	}
	if tn.choose() {
		t.Fatal("the team is chosen though it is not faster")
	}
}

// TestTeamBitIdentical: a small prediction with packed weights, which runs
// each layer on a team of goroutines (forwardTeam), gives the bits of the
// per-layer path (forwardPacked) at every batch size up to teamMaxRows
// (12-row tiles, 4-row tiles and single rows; partial panels in every
// layer), with float64 and float32 weights, on GOMAXPROCS 1, 2 and 3. A
// unit computed twice or not at all, a layer started before the previous
// one was done, or an activation packed in the wrong place would fail.
func TestTeamBitIdentical(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{9, 70, 129, 33, 5}, 7), randNet([]int{9, 70, 129, 33, 5}, 8)}, Weights: []float64{0.25, 0.75}}
	x := randData(teamMaxRows, 9, 5, 6).X
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	for _, f32 := range []bool{false, true} {
		f := e.Freeze(f32)
		for _, procs := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(procs)
			ws := &Workspace{}
			for rows := 1; rows <= teamMaxRows; rows++ {
				useTeam = false
				want := f.Predict(nil, x, rows, nil)
				useTeam = true
				// Three calls: teamTune tries the caller alone, then
				// the team, then the faster of the two.
				for range 3 {
					got := f.Predict(nil, x, rows, ws)
					for i := range want {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("f32=%v GOMAXPROCS %d batch %d value %d: team %v, per layer %v", f32, procs, rows, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// kneeFileAndPoints loads the trained knee ensemble of
// examples/knee-surrogate (the test is skipped without it) and spreads n
// points over its training box deterministically (a Weyl sequence).
func kneeFileAndPoints(t *testing.T, n int) (*Ensemble, []float64) {
	t.Helper()
	const path = "../../../examples/knee-surrogate/knee-nn.json"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	e, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d := e.In()
	x := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			u := math.Mod(float64(i+1)*(0.5+0.1*float64(j%7))*math.Sqrt2, 1)
			x[i*d+j] = e.InputLo[j] + u*(e.InputHi[j]-e.InputLo[j])
		}
	}
	return e, x
}

// TestRoundedWeightsLossless: training with Config.Weights "float32" (the
// default) leaves every weight matrix entry a float32 value, and the
// members' validation losses are those of the rounded networks; Freeze
// without f32 then packs those weights in float32 (half the bytes) and
// predicts the bits of Ensemble.Predict — the float64 forward pass with the
// weights in place — at every batch size up to the team's limit, at 600
// rows (several chunks), on GOMAXPROCS 1 and 2. With Weights "float64" the
// weights are not float32 values and stay packed in float64. A rounding
// after the validation, a kernel summing the float32 panels in another
// order, or a Frozen that rounds weights it calls lossless would fail.
func TestRoundedWeightsLossless(t *testing.T) {
	cfg := smallConfig()
	cfg.Hidden = []int{70, 129, 33}
	cfg.Epochs = 3
	if cfg.Weights != "float32" {
		t.Fatalf("DefaultConfig's Weights %q, want float32", cfg.Weights)
	}
	train, val := gridData(300, 11), gridData(100, 12)
	e, err := Train(cfg, train, val)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Float32Exact() {
		t.Fatal("weights trained with Weights float32 are not all float32 values")
	}
	for k, n := range e.Nets {
		v := n.Loss(val.X, val.Y, val.N, cfg.HuberDelta, 0, nil, nil)
		if math.Float64bits(v) != math.Float64bits(e.Info[k].ValidationLoss) {
			t.Fatalf("member %d: validation loss %v of the rounded network, %v recorded", k+1, v, e.Info[k].ValidationLoss)
		}
	}
	f := e.Freeze(false)
	if !f.Packed32() || f.Float32() {
		t.Fatalf("Freeze(false) of float32-valued weights: packed32 %v, rounded %v; want true, false", f.Packed32(), f.Float32())
	}
	const n = 600
	x := gridData(n, 13).X
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		ws := &Workspace{}
		for _, rows := range append(seq(1, teamMaxRows), n) {
			want := e.Predict(nil, x, rows, nil)
			for range 3 { // teamTune's three choices
				got := f.Predict(nil, x, rows, ws)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("GOMAXPROCS %d batch %d value %d: float32-packed %v, Predict %v", procs, rows, i, got[i], want[i])
					}
				}
			}
		}
	}
	cfg.Weights = "float64"
	e64, err := Train(cfg, train, val)
	if err != nil {
		t.Fatal(err)
	}
	if e64.Float32Exact() || e64.Freeze(false).Packed32() {
		t.Error("weights trained with Weights float64 are float32 values or packed in float32")
	}
	cfg.Weights = "half"
	if _, err := Train(cfg, train, val); err == nil || !strings.Contains(err.Error(), "Weights") {
		t.Errorf("Weights %q: error %v, want one naming Weights", cfg.Weights, err)
	}
}

func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}
