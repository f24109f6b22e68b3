package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Huber loss of Eq. 6 by hand with δ = 0.02: quadratic inside, linear
// outside, continuous at |r| = δ.
func TestHuberByHand(t *testing.T) {
	const tol = 1e-15
	cases := []struct{ r, want float64 }{
		{0, 0},
		{0.01, 0.5 * 0.0001},           // 5e-5
		{-0.02, 0.5 * 0.0004},          // 2e-4, boundary
		{0.05, 0.5*0.0004 + 0.02*0.03}, // 2e-4 + 6e-4 = 8e-4
		{-1, 0.5*0.0004 + 0.02*0.98},   // 0.0198
	}
	for _, c := range cases {
		if got := Huber(c.r, 0.02); math.Abs(got-c.want) > tol {
			t.Errorf("Huber(%v) = %v, want %v", c.r, got, c.want)
		}
	}
}

func randNet(sizes []int, seed uint64) *Net {
	r := rand.New(rand.NewPCG(seed, 7))
	n := newNet(sizes, r)
	for l := range n.B {
		for i := range n.B[l] {
			n.B[l][i] = 0.3 * r.NormFloat64()
		}
	}
	d, m := sizes[0], sizes[len(sizes)-1]
	n.XMean, n.XSD = make([]float64, d), make([]float64, d)
	n.YMean, n.YSD = make([]float64, m), make([]float64, m)
	for j := range n.XMean {
		n.XMean[j], n.XSD[j] = r.NormFloat64(), 0.5+r.Float64()
	}
	for j := range n.YMean {
		n.YMean[j], n.YSD[j] = r.NormFloat64(), 0.5+r.Float64()
	}
	return n
}

// The analytic loss gradient (back-propagation with Huber, L2) against
// central finite differences on a tiny net, for every weight and bias.
func TestLossGradientFD(t *testing.T) {
	const tol = 1e-6 // relative to max(1, |g|)·scale
	sizes := []int{3, 5, 4, 2}
	n := randNet(sizes, 1)
	r := rand.New(rand.NewPCG(2, 3))
	rows := 6
	x := make([]float64, rows*3)
	y := make([]float64, rows*2)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	for i := range y {
		y[i] = r.NormFloat64() * 2 // large residuals: both Huber branches
	}
	delta, l2 := 0.5, 1e-3
	L := n.NumLayers()
	gw, gb := make([][]float64, L), make([][]float64, L)
	for l := 0; l < L; l++ {
		gw[l] = make([]float64, len(n.W[l]))
		gb[l] = make([]float64, len(n.B[l]))
	}
	n.Loss(x, y, rows, delta, l2, gw, gb)
	h := 1e-6
	check := func(p []float64, g []float64, name string) {
		for i := range p {
			v := p[i]
			p[i] = v + h
			fp := n.Loss(x, y, rows, delta, l2, nil, nil)
			p[i] = v - h
			fm := n.Loss(x, y, rows, delta, l2, nil, nil)
			p[i] = v
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-g[i]) > tol*math.Max(1e-2, math.Abs(g[i])) {
				t.Errorf("%s[%d]: analytic %v, FD %v", name, i, g[i], fd)
			}
		}
	}
	for l := 0; l < L; l++ {
		check(n.W[l], gw[l], "W")
		check(n.B[l], gb[l], "b")
	}
}

// The exact input Jacobian of an ensemble against central finite
// differences of Predict.
func TestJacobianFD(t *testing.T) {
	const tol = 1e-7
	e := &Ensemble{Nets: []*Net{randNet([]int{4, 8, 6, 3}, 11), randNet([]int{4, 8, 6, 3}, 12)}, Weights: []float64{0.3, 0.7}}
	if err := e.check(); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, -1.2, 0.8, 2.0}
	y, J := e.Jacobian(x, nil)
	y0 := e.Predict(nil, x, 1, nil)
	for i := range y {
		if math.Abs(y[i]-y0[i]) > 1e-14 {
			t.Errorf("Jacobian's y[%d] = %v, Predict %v", i, y[i], y0[i])
		}
	}
	h := 1e-5
	for j := range x {
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[j] += h
		xm[j] -= h
		fp := e.Predict(nil, xp, 1, nil)
		fm := e.Predict(nil, xm, 1, nil)
		for i := range y {
			fd := (fp[i] - fm[i]) / (2 * h)
			if math.Abs(fd-J[i*len(x)+j]) > tol*math.Max(1, math.Abs(fd)) {
				t.Errorf("dy%d/dx%d: analytic %v, FD %v", i, j, J[i*len(x)+j], fd)
			}
		}
	}
}

// Batched prediction equals row-by-row prediction (chunking, bias
// broadcast).
func TestPredictBatchMatchesSingle(t *testing.T) {
	e := &Ensemble{Nets: []*Net{randNet([]int{2, 7, 3}, 5)}, Weights: []float64{1}}
	r := rand.New(rand.NewPCG(9, 9))
	n := 600 // > chunk
	x := make([]float64, 2*n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	all := e.Predict(nil, x, n, nil)
	ws := &Workspace{}
	for i := 0; i < n; i += 97 {
		one := e.Predict(nil, x[2*i:2*i+2], 1, ws)
		for j := 0; j < 3; j++ {
			if math.Abs(one[j]-all[3*i+j]) > 1e-13 {
				t.Fatalf("row %d output %d: batch %v single %v", i, j, all[3*i+j], one[j])
			}
		}
	}
}

// f is the known smooth 2-D test function the network learns.
func f2(x, y float64) float64 { return math.Sin(2*x)*math.Cos(y) + 0.5*x*y }

func gridData(n int, seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 1))
	d := &Data{N: n, In: 2, Out: 1, X: make([]float64, 2*n), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		a, b := 2*r.Float64()-1, 2*r.Float64()-1
		d.X[2*i], d.X[2*i+1] = a, b
		d.Y[i] = f2(a, b)
	}
	return d
}

func smallConfig() Config {
	c := DefaultConfig()
	c.Hidden = []int{32, 32}
	c.LearningRate = 1e-2 // a small data set: 1e-3 needs many more epochs
	c.Patience = 10
	c.Epochs = 100
	c.Members = 2
	c.Dropout = 0
	c.Seed = 42
	return c
}

// A small ensemble learns f(x, y) = sin 2x·cos y + xy/2 on [−1, 1]² (range
// ≈ 2.3) from 1 000 random points, with the paper's Huber loss (δ = 0.02),
// to an RMSE below 0.02 on 500 fresh points (measured 0.010), and its exact
// input gradient matches the analytic gradient of f with an RMS error below
// 0.1 over 50 points (measured 0.066, worst 0.32) — the network
// approximates f, so its gradient is only as good as the fit; exactness of
// the back-propagation itself is TestJacobianFD's job.
func TestLearnsSmooth2D(t *testing.T) {
	const rmseTol, gradTol = 0.02, 0.1
	train, val := gridData(1000, 1), gridData(500, 2)
	e, err := Train(smallConfig(), train, val)
	if err != nil {
		t.Fatal(err)
	}
	p := e.Predict(nil, val.X, val.N, nil)
	s := 0.0
	for i := range p {
		s += (p[i] - val.Y[i]) * (p[i] - val.Y[i])
	}
	rmse := math.Sqrt(s / float64(val.N))
	t.Logf("RMSE %.4g, epochs %d, final rate %.3g, weights %v", rmse, e.Info[0].Epochs, e.Info[0].FinalRate, e.Weights)
	if rmse > rmseTol {
		t.Errorf("validation RMSE %v > %v", rmse, rmseTol)
	}
	met, err := e.Validate(val)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("validation: nMAE %.3g %%, MAE %.3g, 90%% AE %.3g", met[0].NMAE, met[0].MAE, met[0].AE90)
	if met[0].MAE > rmse || met[0].AE90 < met[0].MAE {
		t.Errorf("metrics inconsistent with the RMSE %v: %+v", rmse, met[0])
	}
	worst, ss := 0.0, 0.0
	for i := 0; i < 50; i++ {
		a, b := val.X[2*i], val.X[2*i+1]
		_, J := e.Jacobian([]float64{a, b}, nil)
		gx := 2*math.Cos(2*a)*math.Cos(b) + 0.5*b
		gy := -math.Sin(2*a)*math.Sin(b) + 0.5*a
		worst = math.Max(worst, math.Max(math.Abs(J[0]-gx), math.Abs(J[1]-gy)))
		ss += (J[0]-gx)*(J[0]-gx) + (J[1]-gy)*(J[1]-gy)
	}
	grms := math.Sqrt(ss / 100)
	t.Logf("gradient error: RMS %.3g, worst %.3g", grms, worst)
	if grms > gradTol {
		t.Errorf("RMS gradient error %v > %v", grms, gradTol)
	}
	if s := e.Weights[0] + e.Weights[1]; math.Abs(s-1) > 1e-15 {
		t.Errorf("weights sum to %v", s)
	}
}

// Same seed → bit-identical weights and predictions, with GOMAXPROCS 1 and
// 2 and with dropout on; another seed → different weights. The widths (256)
// are large enough for dgemm to take its parallel path (≥ 2^16
// multiply-adds) and for the prediction's softplus to be split over the
// cores (256 rows × 256 ≥ parallelMin).
func TestDeterministic(t *testing.T) {
	cfg := smallConfig()
	cfg.Hidden = []int{256, 256}
	cfg.Epochs = 2
	cfg.Dropout = 0.1
	cfg.Members = 3
	train := gridData(200, 3)
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	a, err := Train(cfg, train, train)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(2)
	b, _ := Train(cfg, train, train)
	for k := range a.Nets {
		for l := range a.Nets[k].W {
			for i, v := range a.Nets[k].W[l] {
				if math.Float64bits(v) != math.Float64bits(b.Nets[k].W[l][i]) {
					t.Fatalf("member %d layer %d weight %d differs: %v vs %v", k, l, i, v, b.Nets[k].W[l][i])
				}
			}
		}
	}
	for k := range a.Weights {
		if a.Weights[k] != b.Weights[k] {
			t.Fatalf("ensemble weights differ")
		}
	}
	x := gridData(600, 8).X
	runtime.GOMAXPROCS(1)
	pa := a.Predict(nil, x, 600, nil)
	runtime.GOMAXPROCS(2)
	pb := a.Predict(nil, x, 600, nil)
	for i := range pa {
		if math.Float64bits(pa[i]) != math.Float64bits(pb[i]) {
			t.Fatalf("prediction %d differs between GOMAXPROCS 1 and 2", i)
		}
	}
	cfg.Seed++
	c, _ := Train(cfg, train, train)
	if c.Nets[0].W[0][0] == a.Nets[0].W[0][0] {
		t.Errorf("a different seed gave the same first weight")
	}
}

// Bad input gives a clear error, not a panic.
func TestTrainErrors(t *testing.T) {
	cfg := smallConfig()
	good := gridData(10, 1)
	bad := *good
	bad.Y = append([]float64(nil), good.Y...)
	bad.Y[3] = math.NaN()
	if _, err := Train(cfg, &bad, nil); err == nil {
		t.Error("NaN output accepted")
	}
	c2 := cfg
	c2.Dropout = 1
	if _, err := Train(c2, good, nil); err == nil {
		t.Error("dropout 1 accepted")
	}
	c3 := cfg
	c3.Hidden = []int{0}
	if _, err := Train(c3, good, nil); err == nil {
		t.Error("zero width accepted")
	}
}

// Progress sees every epoch of every member, with the loss the member's
// report records, and does not change the training.
func TestProgress(t *testing.T) {
	cfg := smallConfig()
	cfg.Epochs = 3
	cfg.Members = 2
	train := gridData(50, 2)
	a, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[[2]int]float64{}
	cfg.Progress = func(member, epoch int, loss, rate float64) {
		mu.Lock()
		defer mu.Unlock()
		seen[[2]int{member, epoch}] = loss
	}
	b, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != cfg.Members*cfg.Epochs {
		t.Fatalf("progress called for %d (member, epoch) pairs, want %d", len(seen), cfg.Members*cfg.Epochs)
	}
	for k := range a.Nets {
		for e, l := range a.Info[k].Loss {
			if seen[[2]int{k, e + 1}] != l {
				t.Errorf("member %d epoch %d: progress loss %v, report %v", k, e+1, seen[[2]int{k, e + 1}], l)
			}
		}
		if math.Float64bits(a.Nets[k].W[0][0]) != math.Float64bits(b.Nets[k].W[0][0]) {
			t.Errorf("member %d: progress changed the weights", k)
		}
	}
	// A deadline already past: one epoch per member, then "deadline".
	d := smallConfig()
	d.Epochs, d.Members = 5, 2
	d.Deadline = time.Now().Add(-time.Second)
	e, err := Train(d, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, in := range e.Info {
		if in.Epochs != 1 || in.Stopped != "deadline" {
			t.Errorf("member %d past its deadline: %d epochs, stopped %q; want 1, \"deadline\"", k, in.Epochs, in.Stopped)
		}
	}
	c := smallConfig()
	c.PlateauMinDelta = 1
	if _, err := Train(c, train, nil); err == nil {
		t.Error("PlateauMinDelta 1 accepted")
	}
}
