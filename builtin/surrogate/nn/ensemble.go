package nn

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/kinfer/kinfer/builtin/internal/dgemm"
)

// Limits on a network, checked on training and on load (a file is input).
const (
	MaxLayers  = 64      // hidden layers
	MaxWidth   = 1 << 16 // units in any layer, inputs and outputs included
	MaxParams  = 1 << 25 // weights and biases over the whole ensemble (~33.5 M, 256 MiB; the paper's six networks have 8.2 M)
	MaxMembers = 64      // networks in an ensemble
)

// Ensemble is a weighted average of networks: ŷ(x) = Σ_k w_k ŷ_k(x) with
// Σ_k w_k = 1. Bartsoen et al. (2023, Sec. 2.3) use "a weighted ensemble
// averaging of six networks" without stating the weights; here w_k ∝ 1/V_k
// with V_k the member's mean Huber loss (δ of the config) on the
// normalised validation outputs — members that validate better count more.
// Without validation data the weights are equal.
type Ensemble struct {
	Nets    []*Net
	Weights []float64
	Info    []TrainInfo
	// Config the members were trained with (nil when built by hand).
	Config *Config
	// InputLo, InputHi: the training data's box, per input, to flag
	// extrapolation (nil when unknown).
	InputLo, InputHi []float64
}

// In and Out are the input and output dimensions.
func (e *Ensemble) In() int  { return e.Nets[0].In() }
func (e *Ensemble) Out() int { return e.Nets[0].Out() }

func (e *Ensemble) check() error {
	if len(e.Nets) < 1 || len(e.Nets) > MaxMembers {
		return fmt.Errorf("nn: ensemble has %d networks, must be in [1, %d]", len(e.Nets), MaxMembers)
	}
	if len(e.Weights) != len(e.Nets) {
		return fmt.Errorf("nn: ensemble has %d weights for %d networks", len(e.Weights), len(e.Nets))
	}
	p := 0
	for k, n := range e.Nets {
		if err := checkSizes(n.Sizes); err != nil {
			return fmt.Errorf("network %d: %w", k+1, err)
		}
		p += n.NumParams()
		if p > MaxParams {
			return fmt.Errorf("nn: ensemble has more than %d parameters", MaxParams)
		}
		if err := n.check(); err != nil {
			return fmt.Errorf("network %d: %w", k+1, err)
		}
		if n.In() != e.Nets[0].In() || n.Out() != e.Nets[0].Out() {
			return fmt.Errorf("nn: network %d maps %d→%d, network 1 %d→%d", k+1, n.In(), n.Out(), e.In(), e.Out())
		}
		if !(e.Weights[k] >= 0) {
			return fmt.Errorf("nn: ensemble weight %d is %v", k+1, e.Weights[k])
		}
	}
	return nil
}

func checkSizes(sizes []int) error {
	if len(sizes) < 2 || len(sizes) > MaxLayers+2 {
		return fmt.Errorf("nn: %d layer sizes, must be in [2, %d]", len(sizes), MaxLayers+2)
	}
	p := 0
	for i, s := range sizes {
		if s < 1 || s > MaxWidth {
			return fmt.Errorf("nn: layer %d has width %d, must be in [1, %d]", i, s, MaxWidth)
		}
		if i > 0 {
			p += sizes[i-1]*s + s
			if p > MaxParams {
				return fmt.Errorf("nn: network has more than %d parameters", MaxParams)
			}
		}
	}
	return nil
}

// Train fits cfg.Members networks to train and weights them by their loss
// on val (nil: equal weights). Member k draws from the PCG stream (Seed,
// k+1); members train concurrently on up to GOMAXPROCS goroutines, and the
// weights are identical for any GOMAXPROCS.
func Train(cfg Config, train, val *Data) (*Ensemble, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := train.check("training"); err != nil {
		return nil, err
	}
	if val != nil {
		if err := val.check("validation"); err != nil {
			return nil, err
		}
		if val.In != train.In || val.Out != train.Out {
			return nil, fmt.Errorf("nn: validation data is %d→%d, training data %d→%d", val.In, val.Out, train.In, train.Out)
		}
	}
	sizes := append([]int{train.In}, cfg.Hidden...)
	sizes = append(sizes, train.Out)
	if err := checkSizes(sizes); err != nil {
		return nil, err
	}
	if cfg.Members > MaxMembers {
		return nil, fmt.Errorf("nn: %d members, at most %d", cfg.Members, MaxMembers)
	}
	// The whole ensemble must be one a file can hold (Read's bound), also
	// when only one member is trained here (combine joins them): 64
	// networks of 4096×4096 would need ≈ 34 GB with Adam's moments.
	per := ParamsOf(sizes)
	if per*int64(cfg.Members) > MaxParams {
		return nil, fmt.Errorf("nn: %d members of %d parameters each exceed the %d parameters an ensemble may have", cfg.Members, per, MaxParams)
	}
	norm := &Net{}
	norm.XMean, norm.XSD = meanSD(train.X, train.N, train.In)
	norm.YMean, norm.YSD = meanSD(train.Y, train.N, train.Out)
	for _, v := range []struct {
		what     string
		mean, sd []float64
	}{{"input", norm.XMean, norm.XSD}, {"output", norm.YMean, norm.YSD}} {
		for j := range v.mean {
			if math.IsInf(v.mean[j], 0) || math.IsNaN(v.mean[j]) || math.IsInf(v.sd[j], 0) || math.IsNaN(v.sd[j]) {
				return nil, fmt.Errorf("nn: training data %s %d: mean %g and standard deviation %g: values too large to normalise", v.what, j+1, v.mean[j], v.sd[j])
			}
		}
	}
	c := cfg
	c.Hidden = append([]int(nil), cfg.Hidden...)
	// The members to train: all, or only cfg.Member (its stream is the
	// same as in a full training).
	ks := make([]int, 0, cfg.Members)
	for k := 0; k < cfg.Members; k++ {
		if cfg.Member == 0 || cfg.Member == k+1 {
			ks = append(ks, k)
		}
	}
	e := &Ensemble{Nets: make([]*Net, len(ks)), Weights: make([]float64, len(ks)), Info: make([]TrainInfo, len(ks)), Config: &c}
	e.InputLo, e.InputHi = make([]float64, train.In), make([]float64, train.In)
	for j := 0; j < train.In; j++ {
		e.InputLo[j], e.InputHi[j] = math.Inf(1), math.Inf(-1)
		for i := 0; i < train.N; i++ {
			e.InputLo[j] = math.Min(e.InputLo[j], train.X[i*train.In+j])
			e.InputHi[j] = math.Max(e.InputHi[j], train.X[i*train.In+j])
		}
	}
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, k := range ks {
		wg.Add(1)
		sem <- struct{}{}
		go func(i, k int) {
			defer wg.Done()
			defer func() { <-sem }()
			n, info := trainOne(cfg, sizes, norm, train, cfg.Seed, uint64(k)+1)
			info.Member = k + 1
			if val != nil {
				info.ValidationLoss = n.Loss(val.X, val.Y, val.N, cfg.HuberDelta, 0, nil, nil)
			}
			e.Nets[i], e.Info[i] = n, info
		}(i, k)
	}
	wg.Wait()
	for i, n := range e.Nets {
		if !finiteNet(n) || math.IsNaN(e.Info[i].ValidationLoss) || math.IsInf(e.Info[i].ValidationLoss, 0) {
			return nil, fmt.Errorf("nn: member %d diverged (non-finite weights or validation loss %v); lower the learning rate", e.Info[i].Member, e.Info[i].ValidationLoss)
		}
	}
	e.weigh(val != nil)
	return e, nil
}

// finiteNet reports whether every weight and bias of n is finite.
func finiteNet(n *Net) bool {
	for l := range n.W {
		for _, v := range n.W[l] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		for _, v := range n.B[l] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

// weigh sets the weights from the members' validation losses (w_k ∝ 1/V_k,
// normalised to sum 1), or equal weights when validated is false.
func (e *Ensemble) weigh(validated bool) {
	sum := 0.0
	for k := range e.Weights {
		w := 1.0
		if validated {
			w = 1 / max(e.Info[k].ValidationLoss, 1e-300)
		}
		e.Weights[k] = w
		sum += w
	}
	for k := range e.Weights {
		e.Weights[k] /= sum
	}
}

// Workspace holds the buffers of Predict and Jacobian; reuse one per
// goroutine to avoid allocation. The zero value is ready.
type Workspace struct {
	ws   *workspace
	key  []int
	out  []float64
	more []*Workspace // one per extra goroutine of a large prediction
}

func (w *Workspace) get(sizes []int, rows int) *workspace {
	if w.ws == nil || w.ws.rows < rows || !equalInts(w.key, sizes) {
		w.ws = newWorkspace(sizes, rows, false)
		w.key = append(w.key[:0], sizes...)
	}
	return w.ws
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// chunk is the number of rows propagated at once in Predict: large enough
// for efficient matrix products, small enough to stay in cache.
const chunk = 256

// Predict writes the ensemble prediction for the n rows of x (n × In,
// row-major) into dst (n × Out) and returns it (allocated if dst is short).
// ws may be nil. An Ensemble is read-only: Predict is safe for concurrent
// use with distinct workspaces.
func (e *Ensemble) Predict(dst, x []float64, n int, ws *Workspace) []float64 {
	var pw [][]*dgemm.Packed
	if n > chunk {
		// Several chunks: pack each layer's weights once for all of them
		// (float64, so the same bits as multiplying in place).
		pw = make([][]*dgemm.Packed, len(e.Nets))
		for k, net := range e.Nets {
			pw[k] = net.packWeights(false)
		}
	}
	return e.predict(dst, x, n, ws, pw, nil)
}

// Frozen is an ensemble prepared for many predictions: every layer's
// weights packed once into the layout of the matrix kernels, in float64
// (the same bits as Ensemble.Predict) or rounded to float32, the precision
// PyTorch's default float32 networks use (sums and activations stay in
// float64). It is a snapshot: later changes to the ensemble's weights are
// not seen. A Frozen is read-only; Predict is safe for concurrent use with
// distinct workspaces.
type Frozen struct {
	e        *Ensemble
	pw       [][]*dgemm.Packed
	float32  bool                      // weights rounded to float32 (lossy)
	packed32 bool                      // weights packed in float32 (rounded, or exactly float32 already)
	tune     [teamMaxRows + 1]teamTune // per batch size: team or not (team.go)
}

// Freeze packs the ensemble's weights, rounded to float32 when f32.
// Without f32, weights that are all float32 values already (a network
// trained with Config.Weights "float32", the default) are packed in
// float32 too: nothing is rounded, the kernels widen each weight exactly
// and sum in the same order, so the predictions are the float64 network's
// bits and half the bytes are read.
//
// Rounding a weight beyond float32's range would make it ±Inf: Freeze
// then keeps float64 (FreezeChecked says why).
func (e *Ensemble) Freeze(f32 bool) *Frozen {
	if f32 && e.float32Overflow() != "" {
		f32 = false
	}
	f := &Frozen{e: e, pw: make([][]*dgemm.Packed, len(e.Nets)), float32: f32}
	pack32 := f32 || e.Float32Exact()
	for k, net := range e.Nets {
		f.pw[k] = net.packWeights(pack32)
	}
	f.packed32 = pack32
	return f
}

// Float32 reports whether the weights were rounded to float32 (lossy).
func (f *Frozen) Float32() bool { return f.float32 }

// Packed32 reports whether the weights are packed in float32: rounded
// (Float32) or, losslessly, because they were float32 values already.
func (f *Frozen) Packed32() bool { return f.packed32 }

// Float32Overflow names the first weight whose magnitude float32 cannot
// hold (rounded, it would be ±Inf), or "" when there is none.
func (e *Ensemble) Float32Overflow() string { return e.float32Overflow() }

func (e *Ensemble) float32Overflow() string {
	for k, n := range e.Nets {
		for l, w := range n.W {
			for i, v := range w {
				if math.Abs(v) > math.MaxFloat32 {
					return fmt.Sprintf("network %d, layer %d, weight %d is %g, beyond float32's range", k+1, l+1, i+1, v)
				}
			}
		}
	}
	return ""
}

// Float32Exact reports whether every weight matrix entry of every member
// is a float32 value (biases are not packed and stay float64).
func (e *Ensemble) Float32Exact() bool {
	for _, n := range e.Nets {
		if !n.float32Exact() {
			return false
		}
	}
	return true
}

// Predict is Ensemble.Predict with the packed weights.
func (f *Frozen) Predict(dst, x []float64, n int, ws *Workspace) []float64 {
	return f.e.predict(dst, x, n, ws, f.pw, &f.tune)
}

func (e *Ensemble) predict(dst, x []float64, n int, ws *Workspace, pw [][]*dgemm.Packed, tune *[teamMaxRows + 1]teamTune) []float64 {
	d, m := e.In(), e.Out()
	if len(x) < n*d {
		panic(fmt.Sprintf("nn: Predict: %d values for %d rows of %d inputs", len(x), n, d))
	}
	if len(dst) < n*m {
		dst = make([]float64, n*m)
	}
	dst = dst[:n*m]
	for i := range dst {
		dst[i] = 0
	}
	if ws == nil {
		ws = &Workspace{}
	}
	if pw != nil && n <= teamMaxRows && useTeam {
		// One small batch: each layer shared by a team of goroutines
		// (forwardTeam), the same bits.
		helpers := teamHelpers()
		var tn *teamTune
		var team bool
		var start time.Time
		if tune != nil && helpers > 0 {
			tn = &tune[n]
			if team = tn.choose(); !team {
				helpers = 0
			}
			start = time.Now()
		}
		for k, net := range e.Nets {
			w := ws.get(net.Sizes, n)
			net.normIn(w, x, n)
			net.forwardTeam(w, n, pw[k], helpers)
			out := w.a[net.NumLayers()-1]
			c := e.Weights[k]
			for i := 0; i < n*m; i++ {
				dst[i] += c * (net.YMean[i%m] + net.YSD[i%m]*out[i])
			}
		}
		if tn != nil {
			tn.record(team, time.Since(start))
		}
		return dst
	}
	nchunks := (n + chunk - 1) / chunk
	workers := 1
	if pw != nil {
		// Packed weights: the chunks go to one goroutine per core, each
		// through the whole network (no synchronisation per layer). Each
		// row is computed alone, and the members in order, so the result
		// does not depend on the split.
		workers = max(1, min(runtime.GOMAXPROCS(0), nchunks))
	}
	for len(ws.more) < workers-1 {
		ws.more = append(ws.more, &Workspace{})
	}
	for k, net := range e.Nets {
		var p []*dgemm.Packed
		if pw != nil {
			p = pw[k]
		}
		c := e.Weights[k]
		run := func(w *workspace, q int) {
			for ci := q; ci < nchunks; ci += workers {
				s := ci * chunk
				rows := min(chunk, n-s)
				net.normIn(w, x[s*d:(s+rows)*d], rows)
				net.forwardPacked(w, rows, nil, p, workers > 1)
				out := w.a[net.NumLayers()-1]
				for i := 0; i < rows; i++ {
					for j := 0; j < m; j++ {
						dst[(s+i)*m+j] += c * (net.YMean[j] + net.YSD[j]*out[i*m+j])
					}
				}
			}
		}
		if workers == 1 {
			run(ws.get(net.Sizes, min(n, chunk)), 0)
			continue
		}
		var wg sync.WaitGroup
		for q := 1; q < workers; q++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(ws.more[q-1].get(net.Sizes, chunk), q)
			}()
		}
		run(ws.get(net.Sizes, chunk), 0)
		wg.Wait()
	}
	return dst
}

// Outside reports whether x lies outside the training box (false when the
// box is unknown): the surrogate extrapolates there.
func (e *Ensemble) Outside(x []float64) bool {
	if e.InputLo == nil {
		return false
	}
	for j, v := range x {
		if v < e.InputLo[j] || v > e.InputHi[j] {
			return true
		}
	}
	return false
}

// Jacobian returns the prediction y(x) at one point and its exact Jacobian
// J[i][j] = ∂y_i/∂x_j (Out × In, row-major), by back-propagation to the
// inputs: the Out unit vectors are propagated backward together as one
// (Out × width) matrix per layer, so J costs one forward pass and one
// backward pass of matrix–matrix products per member.
func (e *Ensemble) Jacobian(x []float64, ws *Workspace) (y, jac []float64) {
	d, m := e.In(), e.Out()
	if len(x) != d {
		panic(fmt.Sprintf("nn: Jacobian: %d inputs, want %d", len(x), d))
	}
	y = make([]float64, m)
	jac = make([]float64, m*d)
	if ws == nil {
		ws = &Workspace{}
	}
	dx := make([]float64, m*d)
	for k, net := range e.Nets {
		w := ws.get(net.Sizes, m)
		net.normIn(w, x, 1)
		net.forward(w, 1, nil)
		out := w.a[net.NumLayers()-1]
		c := e.Weights[k]
		for j := 0; j < m; j++ {
			y[j] += c * (net.YMean[j] + net.YSD[j]*out[j])
		}
		// Replicate the single row's activations to m rows so the backward
		// pass handles the m seeds as a batch.
		L := net.NumLayers()
		for l := 0; l < L; l++ {
			wd := net.Sizes[l+1]
			z, a := w.z[l], w.a[l]
			for i := 1; i < m; i++ {
				copy(z[i*wd:(i+1)*wd], z[:wd])
				copy(a[i*wd:(i+1)*wd], a[:wd])
			}
		}
		for i := 1; i < m; i++ {
			copy(w.x0[i*d:(i+1)*d], w.x0[:d])
		}
		g := w.g[:m*m]
		for i := range g {
			g[i] = 0
		}
		for i := 0; i < m; i++ {
			g[i*m+i] = net.YSD[i]
		}
		net.backward(w, m, nil, nil, nil, dx)
		for i := 0; i < m; i++ {
			for j := 0; j < d; j++ {
				jac[i*d+j] += c * dx[i*d+j] / net.XSD[j]
			}
		}
	}
	return y, jac
}
