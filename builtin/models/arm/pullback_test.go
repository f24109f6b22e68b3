package arm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// The fused path: EvalPullback's y is Eval's and Pull's g is VJP's, both
// bit for bit, on 300 training rows at random θ and random cotangents
// (some rows with a zero cotangent); Pull can be called again with
// another cotangent; the pullback of a second θ taken out meanwhile does
// not disturb the first.
func TestPullbackEqualsEvalAndVJP(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	x := trainRows(t, 300, 33)
	K := len(x) / NConditions
	var m abi.Model = NewModel(DefaultDamping)
	pb := m.(abi.Pullbacker)
	for trial := 0; trial < 3; trial++ {
		theta := randomTheta(rng)
		want := make([]float64, K*NOutputs)
		if st := m.Eval(theta, x, want); st != abi.OK {
			t.Fatal(st)
		}
		y := make([]float64, K*NOutputs)
		p, st := pb.EvalPullback(theta, x, y)
		if st != abi.OK {
			t.Fatal(st)
		}
		other, st := pb.EvalPullback(randomTheta(rng), x, make([]float64, K*NOutputs))
		if st != abi.OK {
			t.Fatal(st)
		}
		for i := range y {
			if math.Float64bits(y[i]) != math.Float64bits(want[i]) {
				t.Fatalf("y[%d]: EvalPullback %.17g, Eval %.17g", i, y[i], want[i])
			}
		}
		for rep := 0; rep < 2; rep++ {
			v := randomCotangent(rng, K*NOutputs)
			for k := 0; k < K; k += 7 {
				copy(v[k*NOutputs:(k+1)*NOutputs], make([]float64, NOutputs))
			}
			wantG, g := make([]float64, NParams), make([]float64, NParams)
			if st := m.(abi.VJP).VJP(theta, x, v, make([]float64, K*NOutputs), wantG); st != abi.OK {
				t.Fatal(st)
			}
			if st := p.Pull(v, g); st != abi.OK {
				t.Fatal(st)
			}
			for i := range g {
				if math.Float64bits(g[i]) != math.Float64bits(wantG[i]) {
					t.Fatalf("trial %d rep %d: g[%d] (%s): Pull %.17g, VJP %.17g", trial, rep, i, Spec.Params[i].Name, g[i], wantG[i])
				}
			}
		}
		other.Release()
		p.Release()
		p.Release() // a second Release is harmless
	}
}

// The tape holds what the package doc says: 21 values per body of the
// skeleton, the 19 nonzero moment arms and 3 partials per muscle.
func TestTapeLen(t *testing.T) {
	if n := NewEvaluator(DefaultDamping).TapeLen(); n != 148 { // 21·5 + 19 + 3·8
		t.Errorf("TapeLen %d, want 148", n)
	}
	if len(terms) != 19 {
		t.Errorf("%d path terms, want 19", len(terms))
	}
}

// EvalPullback's statuses are Eval's (no pullback then); Pull checks its
// cotangent and g as VJP does and leaves g zero on a non-OK status.
func TestPullbackStatus(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	m := NewModel(DefaultDamping)
	x := make([]float64, 2*NConditions)
	randomRow(rng, x[:NConditions])
	randomRow(rng, x[NConditions:])
	y := make([]float64, 2*NOutputs)
	bad := GroundTruth()
	bad[0] = -1
	huge := append([]float64(nil), x...)
	huge[NDoF] = 1e300
	for _, c := range []struct {
		what    string
		theta   []float64
		x, y    []float64
		want    abi.Status
		wantNil bool
	}{
		{"invalid θ", bad, x, y, abi.Invalid, true},
		{"short θ", GroundTruth()[:53], x, y, abi.Invalid, true},
		{"short row", GroundTruth(), x[:17], y, abi.Invalid, true},
		{"short y", GroundTruth(), x, y[:9], abi.Invalid, true},
		{"non-finite row", GroundTruth(), huge, y, abi.Failed, true},
	} {
		p, st := m.EvalPullback(c.theta, c.x, c.y)
		if st != c.want || (p == nil) != c.wantNil {
			t.Errorf("%s: status %v, pullback %v; want %v", c.what, st, p, c.want)
		}
	}
	p, st := m.EvalPullback(GroundTruth(), x, y)
	if st != abi.OK {
		t.Fatal(st)
	}
	defer p.Release()
	v := randomCotangent(rng, 2*NOutputs)
	nanV := append([]float64(nil), v...)
	nanV[3] = math.Inf(1)
	g := make([]float64, NParams)
	for _, c := range []struct {
		what string
		v, g []float64
	}{{"short v", v[:9], g}, {"non-finite v", nanV, g}} {
		for i := range g {
			g[i] = 1
		}
		if st := p.Pull(c.v, c.g); st != abi.Invalid {
			t.Errorf("%s: %v", c.what, st)
		}
		for i := range g {
			if g[i] != 0 {
				t.Fatalf("%s: g[%d] = %g", c.what, i, g[i])
			}
		}
	}
	if st := p.Pull(v, make([]float64, 3)); st != abi.Invalid {
		t.Errorf("short g: %v", st)
	}
}

// Row independence as abi.RowsIndependent states it: Eval on blocks of the
// rows writes exactly what Eval on all of them writes, a failing row
// fails its block and the whole alike, and the VJP of the whole is the
// sum of the blocks' VJPs to rowSumTol (rounding of the sum's order).
func TestRowsIndependent(t *testing.T) {
	const rowSumTol = 1e-12 // relative to Σ_blocks |g_block|
	rng := rand.New(rand.NewPCG(45, 46))
	x := trainRows(t, 300, 33)
	K := len(x) / NConditions
	m := NewModel(DefaultDamping)
	if !m.RowsIndependent() {
		t.Fatal("arm does not declare its rows independent")
	}
	theta := randomTheta(rng)
	v := randomCotangent(rng, K*NOutputs)
	want, wantG := make([]float64, K*NOutputs), make([]float64, NParams)
	if st := m.VJP(theta, x, v, want, wantG); st != abi.OK {
		t.Fatal(st)
	}
	sum, abs := make([]float64, NParams), make([]float64, NParams)
	y := make([]float64, K*NOutputs)
	for _, b := range [][2]int{{0, 1}, {1, 97}, {97, 256}, {256, 300}} {
		xb, yb, vb := x[b[0]*NConditions:b[1]*NConditions], y[b[0]*NOutputs:b[1]*NOutputs], v[b[0]*NOutputs:b[1]*NOutputs]
		if st := m.Eval(theta, xb, yb); st != abi.OK {
			t.Fatal(st)
		}
		g := make([]float64, NParams)
		if st := m.VJP(theta, xb, vb, make([]float64, len(yb)), g); st != abi.OK {
			t.Fatal(st)
		}
		for i := range g {
			sum[i] += g[i]
			abs[i] += math.Abs(g[i])
		}
	}
	for i := range y {
		if math.Float64bits(y[i]) != math.Float64bits(want[i]) {
			t.Fatalf("y[%d]: by blocks %.17g, whole %.17g", i, y[i], want[i])
		}
	}
	for i := range sum {
		if math.Abs(sum[i]-wantG[i]) > rowSumTol*abs[i] {
			t.Errorf("g[%d] (%s): Σ blocks %.17g, whole %.17g", i, Spec.Params[i].Name, sum[i], wantG[i])
		}
	}
	bad := append([]float64(nil), x...)
	bad[200*NConditions+NDoF] = 1e300 // row 200 fails
	if st := m.Eval(theta, bad, y); st != abi.Failed {
		t.Errorf("whole with a failing row: %v", st)
	}
	if st := m.Eval(theta, bad[200*NConditions:256*NConditions], y[:56*NOutputs]); st != abi.Failed {
		t.Errorf("block with the failing row: %v", st)
	}
}

// One EvalPullback and one Pull over the 10 000 rows of BenchmarkEval10k:
// the model's part of an Adam iteration on the fused path (compare with
// Eval10k + VJP10k, the unfused path).
func BenchmarkPullback10k(b *testing.B) {
	x := benchRows()
	K := len(x) / NConditions
	v := randomCotangent(rand.New(rand.NewPCG(13, 14)), K*NOutputs)
	y, g := make([]float64, K*NOutputs), make([]float64, NParams)
	m := NewModel(DefaultDamping)
	th := GroundTruth()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, st := m.EvalPullback(th, x, y)
		if st != abi.OK {
			b.Fatal(st)
		}
		if st := p.Pull(v, g); st != abi.OK {
			b.Fatal(st)
		}
		p.Release()
	}
}

// The stateless form (abi.TapePullbacker, served by the Go plugin as
// capability pullback): EvalTape's y is Eval's and PullTape's g is VJP's,
// bit for bit, on 300 training rows at random θ, with an evaluator used
// for another θ in between (so PullTape depends on θ, x and the tape
// only); a tape of the wrong length or a NaN cotangent is Invalid with g
// zero.
func TestTapeEqualsEvalAndVJP(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	x := trainRows(t, 300, 33)
	K := len(x) / NConditions
	m := NewModel(DefaultDamping)
	var tp abi.TapePullbacker = m
	var tape []float64
	for trial := 0; trial < 3; trial++ {
		theta := randomTheta(rng)
		want := make([]float64, K*NOutputs)
		if st := m.Eval(theta, x, want); st != abi.OK {
			t.Fatal(st)
		}
		y := make([]float64, K*NOutputs)
		var st abi.Status
		tape, st = tp.EvalTape(theta, x, y, tape)
		if st != abi.OK || len(tape) != K*148 {
			t.Fatalf("EvalTape: %v, %d values", st, len(tape))
		}
		if sameBitsAt(y, want) >= 0 {
			i := sameBitsAt(y, want)
			t.Fatalf("y[%d]: EvalTape %.17g, Eval %.17g", i, y[i], want[i])
		}
		m.Eval(randomTheta(rng), x, make([]float64, K*NOutputs)) // another θ on the pool's evaluators
		v := randomCotangent(rng, K*NOutputs)
		for k := 0; k < K; k += 5 {
			copy(v[k*NOutputs:(k+1)*NOutputs], make([]float64, NOutputs))
		}
		wantG, g := make([]float64, NParams), make([]float64, NParams)
		if st := m.VJP(theta, x, v, make([]float64, K*NOutputs), wantG); st != abi.OK {
			t.Fatal(st)
		}
		if st := tp.PullTape(theta, x, tape, v, g); st != abi.OK {
			t.Fatal(st)
		}
		if i := sameBitsAt(g, wantG); i >= 0 {
			t.Fatalf("trial %d: g[%d] (%s): PullTape %.17g, VJP %.17g", trial, i, Spec.Params[i].Name, g[i], wantG[i])
		}
		if st := tp.PullTape(theta, x, tape[:len(tape)-1], v, g); st != abi.Invalid || g[0] != 0 {
			t.Fatalf("short tape: %v, g[0] %v", st, g[0])
		}
		v[3] = math.NaN()
		if st := tp.PullTape(theta, x, tape, v, g); st != abi.Invalid {
			t.Fatalf("NaN cotangent: %v", st)
		}
	}
}

// sameBitsAt is the first index where a and b differ bit for bit, or −1.
func sameBitsAt(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}
