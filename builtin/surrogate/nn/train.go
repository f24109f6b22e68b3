package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Config sets the architecture and the training of one network; Ensemble
// trains Members networks with it.
type Config struct {
	// Hidden layer widths (softplus). Inputs and outputs come from the data.
	Hidden []int
	// HuberDelta δ of the loss, Eq. 6, on normalised outputs (0.02).
	HuberDelta float64
	// LearningRate is Adam's initial step (1e-3).
	LearningRate float64
	// Adam moment decay rates and ε (Keras defaults 0.9, 0.999, 1e-7).
	Beta1, Beta2, Epsilon float64
	// BatchSize of the mini-batches (32).
	BatchSize int
	// L2 adds L2·Σw² over the kernels (not the biases) to the loss, as
	// Keras' kernel_regularizer=l2(L2).
	L2 float64
	// Dropout probability p on every hidden layer's output during training
	// (inverted dropout: survivors are scaled by 1/(1−p); none at
	// prediction). 0 disables it.
	Dropout float64
	// Epochs is the maximum number of passes over the training data.
	Epochs int
	// Reduce-on-plateau of the training loss (Keras ReduceLROnPlateau
	// monitoring "loss"): when the epoch's mean training loss has not fallen
	// below best·(1 − PlateauMinDelta) for Patience epochs, the rate is
	// multiplied by DecayFactor. Training stops when the rate would fall
	// below MinLearningRate.
	Patience        int
	DecayFactor     float64
	PlateauMinDelta float64
	MinLearningRate float64
	// Members is the number of networks in the ensemble (6).
	Members int
	// Member, when not 0, trains only network Member (1 … Members) of the
	// ensemble, from the same PCG stream as in a full training: members
	// trained in separate processes or machines and joined by Combine give
	// the ensemble of a single training, bit for bit.
	Member int `json:",omitempty"`
	// Weights is the precision the trained weight matrices are kept in:
	// "float32" (DefaultConfig) rounds every entry of every W to the
	// nearest float32 once, when the member's last epoch ends, before its
	// validation loss; "float64" or "" (files written before the setting
	// existed) keeps them as trained. Biases, sums and activations stay
	// float64 either way. A float32-valued network predicts from half the
	// bytes with the bits of its float64 forward pass (Freeze), and its
	// gradient is that of the same network.
	Weights string `json:",omitempty"`
	// Seed: all randomness (initial weights, shuffles, dropout masks) is
	// drawn from PCG streams derived from it.
	Seed uint64
	// Progress, when set, is called after every epoch of every member
	// (member from 0, epoch from 1) with the epoch's mean training loss and
	// the learning rate for the next epoch. It is called from the member's
	// goroutine and must be safe for concurrent use; it does not change the
	// training.
	Progress func(member, epoch int, loss, rate float64) `json:"-"`
	// Deadline, when not zero, ends every member's training after the
	// first epoch that finishes past it (TrainInfo.Stopped = "deadline").
	// The weights then depend on the machine's speed; a member's Epochs in
	// the report, given as Epochs without a deadline, reproduce its weights
	// exactly.
	Deadline time.Time `json:"-"`
}

// BartsoenHidden is the hidden architecture of Bartsoen et al. (2023),
// Sec. 2.3: [51:256:512:1024:512:256:128:64:13].
var BartsoenHidden = []int{256, 512, 1024, 512, 256, 128, 64}

// DefaultConfig is Bartsoen et al.'s (2023, Sec. 2.3) network and training:
// seven softplus hidden layers, Huber loss δ = 0.02, Adam from 1e-3 with
// decay on a training-loss plateau, batch 32, L2 and dropout, an ensemble
// of six. The paper does not state the L2 factor, the dropout rate, the
// decay factor or the patience; the values here (1e-6, 0.05, 0.5, 5) are
// our choices.
func DefaultConfig() Config {
	return Config{
		Hidden:          append([]int(nil), BartsoenHidden...),
		HuberDelta:      0.02,
		LearningRate:    1e-3,
		Beta1:           0.9,
		Beta2:           0.999,
		Epsilon:         1e-7,
		BatchSize:       32,
		L2:              1e-6,
		Dropout:         0.05,
		Epochs:          200,
		Patience:        5,
		DecayFactor:     0.5,
		PlateauMinDelta: 1e-3,
		MinLearningRate: 1e-6,
		Members:         6,
		Weights:         "float32",
	}
}

// Validate refuses settings out of range, naming the field.
func (c *Config) Validate() error {
	if len(c.Hidden) > MaxLayers {
		return fmt.Errorf("nn: %d hidden layers, at most %d", len(c.Hidden), MaxLayers)
	}
	for i, h := range c.Hidden {
		if h < 1 || h > MaxWidth {
			return fmt.Errorf("nn: hidden layer %d has width %d, must be in [1, %d]", i+1, h, MaxWidth)
		}
	}
	// Every real setting must be finite: a NaN passes the range tests
	// below and would fail only when the trained file is written.
	for _, f := range []struct {
		name string
		v    float64
	}{{"HuberDelta", c.HuberDelta}, {"LearningRate", c.LearningRate}, {"Beta1", c.Beta1}, {"Beta2", c.Beta2}, {"Epsilon", c.Epsilon},
		{"L2", c.L2}, {"Dropout", c.Dropout}, {"DecayFactor", c.DecayFactor}, {"PlateauMinDelta", c.PlateauMinDelta}, {"MinLearningRate", c.MinLearningRate}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("nn: %s %v must be finite", f.name, f.v)
		}
	}
	switch {
	case !(c.HuberDelta > 0):
		return fmt.Errorf("nn: HuberDelta %v must be positive", c.HuberDelta)
	case !(c.LearningRate > 0):
		return fmt.Errorf("nn: LearningRate %v must be positive", c.LearningRate)
	case c.BatchSize < 1:
		return fmt.Errorf("nn: BatchSize %d must be ≥ 1", c.BatchSize)
	case c.L2 < 0:
		return fmt.Errorf("nn: L2 %v must be ≥ 0", c.L2)
	case c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("nn: Dropout %v must be in [0, 1)", c.Dropout)
	case c.Epochs < 1:
		return fmt.Errorf("nn: Epochs %d must be ≥ 1", c.Epochs)
	case c.Members < 1:
		return fmt.Errorf("nn: Members %d must be ≥ 1", c.Members)
	case c.Member < 0 || c.Member > c.Members:
		return fmt.Errorf("nn: Member %d must be in 1 … Members = %d (0: every member)", c.Member, c.Members)
	case c.Patience < 0:
		return fmt.Errorf("nn: Patience %d must be ≥ 0", c.Patience)
	case c.MinLearningRate < 0:
		return fmt.Errorf("nn: MinLearningRate %v must be ≥ 0", c.MinLearningRate)
	case c.PlateauMinDelta < 0 || c.PlateauMinDelta >= 1:
		return fmt.Errorf("nn: PlateauMinDelta %v must be in [0, 1)", c.PlateauMinDelta)
	case !(c.Beta1 >= 0 && c.Beta1 < 1 && c.Beta2 >= 0 && c.Beta2 < 1 && c.Epsilon > 0):
		return fmt.Errorf("nn: Adam parameters β1=%v β2=%v ε=%v out of range", c.Beta1, c.Beta2, c.Epsilon)
	case c.Weights != "" && c.Weights != "float32" && c.Weights != "float64":
		return fmt.Errorf("nn: Weights %q must be float32 or float64", c.Weights)
	case c.DecayFactor <= 0 || c.DecayFactor >= 1:
		if c.Patience > 0 {
			return fmt.Errorf("nn: DecayFactor %v must be in (0, 1)", c.DecayFactor)
		}
	}
	return nil
}

// Huber is the loss of Eq. 6 for one residual r: ½r² for |r| ≤ δ, else
// ½δ² + δ(|r| − δ).
func Huber(r, delta float64) float64 {
	a := math.Abs(r)
	if a <= delta {
		return 0.5 * r * r
	}
	return 0.5*delta*delta + delta*(a-delta)
}

// huberGrad is dHuber/dr.
func huberGrad(r, delta float64) float64 {
	if r > delta {
		return delta
	}
	if r < -delta {
		return -delta
	}
	return r
}

// meanSD returns each column's mean and standard deviation (population, as
// sklearn's StandardScaler); a constant column gets sd 1.
func meanSD(x []float64, rows, cols int) (mean, sd []float64) {
	mean = make([]float64, cols)
	sd = make([]float64, cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			mean[j] += x[i*cols+j]
		}
	}
	for j := range mean {
		mean[j] /= float64(rows)
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			d := x[i*cols+j] - mean[j]
			sd[j] += d * d
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / float64(rows))
		// Constant is decided on the values (as Kriging does): the mean
		// of equal values can differ from them in the last bit, and the
		// sd of 2.8e-17 that leaves made every other value of that
		// input 1e15 standard deviations away (audit 15: a surrogate
		// trained on one point predicted 1e17 N inside its bounds).
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := 0; i < rows; i++ {
			lo, hi = min(lo, x[i*cols+j]), max(hi, x[i*cols+j])
		}
		if !(sd[j] > 1e-300) || hi-lo <= 1e-12*max(math.Abs(lo), math.Abs(hi)) {
			sd[j] = 1
			if rows > 0 {
				mean[j] = x[j]
			}
		}
	}
	return mean, sd
}

// Data is a training or validation set: N rows of inputs X (N × In) and
// outputs Y (N × Out), row-major.
type Data struct {
	X, Y    []float64
	N       int
	In, Out int
}

func (d *Data) check(name string) error {
	if d.N < 1 || d.In < 1 || d.Out < 1 {
		return fmt.Errorf("nn: %s data has %d rows, %d inputs, %d outputs", name, d.N, d.In, d.Out)
	}
	if len(d.X) != d.N*d.In || len(d.Y) != d.N*d.Out {
		return fmt.Errorf("nn: %s data has %d input and %d output values, want %d and %d",
			name, len(d.X), len(d.Y), d.N*d.In, d.N*d.Out)
	}
	for i, v := range d.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("nn: %s data row %d input %d is %v", name, i/d.In+1, i%d.In+1, v)
		}
	}
	for i, v := range d.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("nn: %s data row %d output %d is %v", name, i/d.Out+1, i%d.Out+1, v)
		}
	}
	return nil
}

// newNet allocates a net with Glorot-uniform kernels (Keras' default,
// Glorot & Bengio 2010) and zero biases, drawn from r.
func newNet(sizes []int, r *rand.Rand) *Net {
	L := len(sizes) - 1
	n := &Net{Sizes: append([]int(nil), sizes...), W: make([][]float64, L), B: make([][]float64, L)}
	for l := 0; l < L; l++ {
		k, m := sizes[l], sizes[l+1]
		lim := math.Sqrt(6 / float64(k+m))
		w := make([]float64, k*m)
		for i := range w {
			w[i] = (2*r.Float64() - 1) * lim
		}
		n.W[l] = w
		n.B[l] = make([]float64, m)
	}
	return n
}

// TrainInfo reports one network's training.
type TrainInfo struct {
	// Member is the network's number in its ensemble (1 … Members): its
	// PCG stream is (Seed, Member). 0 in files written before it existed.
	Member int         `json:",omitempty"`
	Epochs int         // epochs run
	Loss   LossHistory // mean training loss (Huber + L2) per epoch
	// LossEvery, when > 1, says Loss holds every LossEvery-th epoch's
	// loss (and the last epoch's): a file keeps at most MaxLossValues.
	LossEvery      int     `json:",omitempty"`
	FinalRate      float64 // learning rate at the end
	ValidationLoss float64 // mean Huber loss on the normalised validation data (no dropout)
	// Stopped says why training ended before Epochs: "min-rate" or "deadline".
	Stopped string `json:",omitempty"`
}

// Loss returns the training objective of a batch without dropout: the mean
// Huber loss of the normalised residuals over rows and outputs plus
// L2·Σw², and its gradient with respect to every weight and bias when gw,
// gb are not nil. Exposed for the finite-difference test.
func (n *Net) Loss(x, y []float64, rows int, delta, l2 float64, gw, gb [][]float64) float64 {
	if gw == nil && rows > chunk {
		return n.lossChunked(x, y, rows, delta, l2)
	}
	ws := newWorkspace(n.Sizes, rows, false)
	n.normIn(ws, x, rows)
	return n.lossGrad(ws, y, rows, delta, l2, nil, gw, gb, true)
}

// lossChunked is Loss without a gradient, propagated chunk rows at a time:
// a workspace for all rows held rows × the layers' widths twice (audit
// 10: a validation set of 16 000 rows took 670 MB a member for 1024-wide
// layers, and a 512 MiB budget was passed 2.5 times). The per-row terms
// are summed in the same order, so the loss has the same bits.
func (n *Net) lossChunked(x, y []float64, rows int, delta, l2 float64) float64 {
	m, in := n.Out(), n.In()
	ws := newWorkspace(n.Sizes, chunk, false)
	loss := 0.0
	for s := 0; s < rows; s += chunk {
		r := min(chunk, rows-s)
		n.normIn(ws, x[s*in:(s+r)*in], r)
		n.forward(ws, r, nil)
		out := ws.a[n.NumLayers()-1]
		for i := 0; i < r; i++ {
			for j := 0; j < m; j++ {
				loss += Huber(out[i*m+j]-(y[(s+i)*m+j]-n.YMean[j])/n.YSD[j], delta)
			}
		}
	}
	loss *= 1 / float64(rows*m)
	reg := 0.0
	for _, w := range n.W {
		reg += sumSquares(w)
	}
	return loss + l2*reg
}

// sumSquares is Σ w_i² in eight interleaved partial sums (lane i mod 8),
// added in a fixed order at the end: a fixed order, so the same bits
// everywhere, and eight independent chains of additions instead of one.
func sumSquares(w []float64) float64 {
	var s [8]float64
	i := 0
	for ; i+8 <= len(w); i += 8 {
		for q := range 8 {
			s[q] += float64(w[i+q] * w[i+q])
		}
	}
	for q := 0; i < len(w); i, q = i+1, q+1 {
		s[q] += float64(w[i] * w[i])
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// lossGrad runs forward, the loss and (if gw != nil) backward on the rows
// in ws.x0, with y in original units. The gradient includes the L2 term
// 2·L2·w when l2Grad (training leaves it to adam).
func (n *Net) lossGrad(ws *workspace, y []float64, rows int, delta, l2 float64, masks [][]float64, gw, gb [][]float64, l2Grad bool) float64 {
	n.forward(ws, rows, masks)
	m := n.Out()
	out := ws.a[n.NumLayers()-1]
	scale := 1 / float64(rows*m)
	loss := 0.0
	for i := 0; i < rows; i++ {
		for j := 0; j < m; j++ {
			r := out[i*m+j] - (y[i*m+j]-n.YMean[j])/n.YSD[j]
			loss += Huber(r, delta)
			ws.g[i*m+j] = huberGrad(r, delta) * scale
		}
	}
	loss *= scale
	reg := 0.0
	for _, w := range n.W {
		reg += sumSquares(w)
	}
	loss += l2 * reg
	if gw != nil {
		n.backward(ws, rows, masks, gw, gb, nil)
		if l2 != 0 && l2Grad {
			for l, w := range n.W {
				g := gw[l]
				for i, v := range w {
					g[i] += 2 * l2 * v
				}
			}
		}
	}
	return loss
}

// trainOne trains one network from the stream (seed, stream) on train
// (normalisation given in norm) and returns it with its report.
func trainOne(cfg Config, sizes []int, norm *Net, train *Data, seed, stream uint64) (*Net, TrainInfo) {
	r := rand.New(rand.NewPCG(seed, stream))
	n := newNet(sizes, r)
	n.XMean, n.XSD, n.YMean, n.YSD = norm.XMean, norm.XSD, norm.YMean, norm.YSD
	L := n.NumLayers()
	bs := cfg.BatchSize
	if bs > train.N {
		bs = train.N
	}
	dropout := cfg.Dropout > 0
	ws := newWorkspace(sizes, bs, dropout)
	var masks [][]float64
	if dropout {
		masks = ws.mask
	}
	gw := make([][]float64, L)
	gb := make([][]float64, L)
	mw := make([][]float64, L)
	vw := make([][]float64, L)
	mb := make([][]float64, L)
	vb := make([][]float64, L)
	for l := 0; l < L; l++ {
		gw[l] = make([]float64, len(n.W[l]))
		mw[l] = make([]float64, len(n.W[l]))
		vw[l] = make([]float64, len(n.W[l]))
		gb[l] = make([]float64, len(n.B[l]))
		mb[l] = make([]float64, len(n.B[l]))
		vb[l] = make([]float64, len(n.B[l]))
	}
	perm := make([]int, train.N)
	for i := range perm {
		perm[i] = i
	}
	d, m := train.In, train.Out
	yb := make([]float64, bs*m)
	xb := make([]float64, bs*d)
	lr := cfg.LearningRate
	best := math.Inf(1)
	wait := 0
	step := 0
	info := TrainInfo{}
	keep := 1 / (1 - cfg.Dropout)
	for epoch := 0; epoch < cfg.Epochs; epoch++ {
		// Fisher–Yates shuffle of the sample order.
		for i := len(perm) - 1; i > 0; i-- {
			j := r.IntN(i + 1)
			perm[i], perm[j] = perm[j], perm[i]
		}
		sum, batches := 0.0, 0
		for start := 0; start < train.N; start += bs {
			rows := min(bs, train.N-start)
			for i := 0; i < rows; i++ {
				p := perm[start+i]
				copy(xb[i*d:(i+1)*d], train.X[p*d:(p+1)*d])
				copy(yb[i*m:(i+1)*m], train.Y[p*m:(p+1)*m])
			}
			n.normIn(ws, xb, rows)
			if dropout {
				for l := range masks {
					mk := masks[l][:rows*sizes[l+1]]
					for i := range mk {
						if r.Float64() < cfg.Dropout {
							mk[i] = 0
						} else {
							mk[i] = keep
						}
					}
				}
			}
			sum += n.lossGrad(ws, yb, rows, cfg.HuberDelta, cfg.L2, masks, gw, gb, false)
			batches++
			// Adam (Kingma & Ba 2015, Algorithm 1).
			step++
			c1 := 1 - math.Pow(cfg.Beta1, float64(step))
			c2 := 1 - math.Pow(cfg.Beta2, float64(step))
			a := lr * math.Sqrt(c2) / c1
			eps := cfg.Epsilon * math.Sqrt(c2)
			for l := 0; l < L; l++ {
				adam(n.W[l], gw[l], mw[l], vw[l], cfg.Beta1, cfg.Beta2, a, eps, 2*cfg.L2)
				adam(n.B[l], gb[l], mb[l], vb[l], cfg.Beta1, cfg.Beta2, a, eps, 0)
			}
		}
		loss := sum / float64(batches)
		info.Loss = append(info.Loss, loss)
		info.Epochs = epoch + 1
		if cfg.Patience > 0 {
			if loss < best*(1-cfg.PlateauMinDelta) {
				best = loss
				wait = 0
			} else if wait++; wait >= cfg.Patience {
				lr *= cfg.DecayFactor
				wait = 0
				if lr < cfg.MinLearningRate {
					info.Stopped = "min-rate"
					break
				}
			}
		}
		if cfg.Progress != nil {
			cfg.Progress(int(stream)-1, epoch+1, loss, lr)
		}
		if !cfg.Deadline.IsZero() && epoch+1 < cfg.Epochs && time.Now().After(cfg.Deadline) {
			info.Stopped = "deadline"
			break
		}
	}
	info.FinalRate = lr
	if cfg.Weights == "float32" {
		n.roundWeights32()
	}
	return n, info
}

// adam updates p with gradient g (plus the L2 term l2x2·p when l2x2 ≠ 0)
// and moments m, v; a is the bias-corrected step and eps the
// correspondingly scaled ε (Kingma & Ba's efficient form, as Keras). Each
// element is updated alone, with every product rounded by itself (no
// fused multiply-add, whatever GOAMD64), so splitting the elements over
// goroutines does not change a bit; the AVX-512 kernel (adam_amd64.s) does
// the same operations eight elements at a time.
func adam(p, g, m, v []float64, b1, b2, a, eps, l2x2 float64) {
	c := [8]float64{b1, b2, 1 - b1, 1 - b2, a, eps, l2x2}
	parallelFor(len(g), func(lo, hi int) {
		done := adamVector(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], &c)
		adamGo(p[lo+done:hi], g[lo+done:hi], m[lo+done:hi], v[lo+done:hi], &c)
	})
}

// adamGo is the portable update, c = {b1, b2, 1 − b1, 1 − b2, a, eps, l2x2}.
func adamGo(p, g, m, v []float64, c *[8]float64) {
	b1, b2, c1, c2, a, eps, l2x2 := c[0], c[1], c[2], c[3], c[4], c[5], c[6]
	for i, gi := range g {
		if l2x2 != 0 {
			gi += float64(l2x2 * p[i])
		}
		m[i] = float64(b1*m[i]) + float64(c1*gi)
		v[i] = float64(b2*v[i]) + float64(float64(c2*gi)*gi)
		p[i] -= float64(a*m[i]) / (math.Sqrt(v[i]) + eps)
	}
}
