package nn

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/kinfer/kinfer/builtin/internal/dgemm"
	"github.com/kinfer/kinfer/builtin/internal/softplus"
)

// Net is one dense multilayer perceptron: Sizes[0] inputs, hidden layers
// Sizes[1 … L−1] with the softplus activation a(z) = ln(1 + eᶻ) (Bartsoen
// et al. 2023, Eq. 5), and a linear output layer of Sizes[L] units. Inputs
// and outputs are normalised with the training data's mean and standard
// deviation: the network maps x̃ = (x − XMean)/XSD to ỹ, and y = YMean +
// YSD·ỹ.
//
// W[l] is the (Sizes[l] × Sizes[l+1]) weight matrix of layer l+1, row-major,
// so a batch of n rows is propagated as Z = A·W + 1bᵀ (one matrix–matrix
// product per layer).
type Net struct {
	Sizes      []int
	W          [][]float64
	B          [][]float64
	XMean, XSD []float64
	YMean, YSD []float64
}

// NumLayers is the number of weight layers (hidden layers + output).
func (n *Net) NumLayers() int { return len(n.Sizes) - 1 }

// NumParams is the number of weights and biases.
func (n *Net) NumParams() int { return int(ParamsOf(n.Sizes)) }

// ParamsOf is the number of weights and biases of a network of layer
// sizes (input, hidden…, output).
func ParamsOf(sizes []int) int64 {
	p := int64(0)
	for l := 1; l < len(sizes); l++ {
		p += int64(sizes[l-1])*int64(sizes[l]) + int64(sizes[l])
	}
	return p
}

// In and Out are the input and output dimensions.
func (n *Net) In() int  { return n.Sizes[0] }
func (n *Net) Out() int { return n.Sizes[len(n.Sizes)-1] }

func (n *Net) check() error {
	if len(n.Sizes) < 2 {
		return fmt.Errorf("nn: a network needs at least an input and an output size, got %v", n.Sizes)
	}
	for i, s := range n.Sizes {
		if s < 1 {
			return fmt.Errorf("nn: layer %d has size %d, must be ≥ 1", i, s)
		}
	}
	L := n.NumLayers()
	if len(n.W) != L || len(n.B) != L {
		return fmt.Errorf("nn: %d weight and %d bias layers for %d layers", len(n.W), len(n.B), L)
	}
	for l := 0; l < L; l++ {
		if len(n.W[l]) != n.Sizes[l]*n.Sizes[l+1] || len(n.B[l]) != n.Sizes[l+1] {
			return fmt.Errorf("nn: layer %d has %d weights and %d biases, want %d and %d",
				l+1, len(n.W[l]), len(n.B[l]), n.Sizes[l]*n.Sizes[l+1], n.Sizes[l+1])
		}
	}
	if len(n.XMean) != n.In() || len(n.XSD) != n.In() || len(n.YMean) != n.Out() || len(n.YSD) != n.Out() {
		return fmt.Errorf("nn: normalisation vectors have lengths %d,%d,%d,%d, want %d,%d,%d,%d",
			len(n.XMean), len(n.XSD), len(n.YMean), len(n.YSD), n.In(), n.In(), n.Out(), n.Out())
	}
	for _, v := range [][]float64{n.XSD, n.YSD} {
		for _, s := range v {
			if !(s > 0) || math.IsInf(s, 0) {
				return fmt.Errorf("nn: a normalisation standard deviation is %v, must be positive and finite", s)
			}
		}
	}
	return nil
}

// The softplus of Eq. 5, a(z) = ln(1 + eᶻ), and its derivative, the
// sigmoid 1/(1 + e⁻ᶻ), come from builtin/internal/softplus (AVX-512 kernel
// and its bit-identical Go twin, within 4 ulp of math.Log1p(math.Exp(z))).

// gemm: C = op(A)·op(B) (+ C when add), row-major with packed rows (the
// stride of a matrix is its width); dgemm sums every element in a fixed
// order with one FMA a term, so results are bit-identical on every machine
// and for any GOMAXPROCS.
func gemm(tA, tB bool, m, n, k int, a, b []float64, add bool, c []float64) {
	lda, ldb := k, n
	if tA {
		lda = m
	}
	if tB {
		ldb = k
	}
	dgemm.Gemm(tA, tB, m, n, k, a, max(lda, 1), b, max(ldb, 1), add, c, max(n, 1))
}

// workspace holds the per-layer pre-activations Z and activations A for a
// batch of up to cap rows, and the dropout masks when training.
type workspace struct {
	rows int
	z, a [][]float64 // z[l], a[l] for layer outputs l = 1 … L (index l−1); a0 is the input
	x0   []float64
	mask [][]float64
	g, h []float64 // backward buffers (largest layer)
	// pa[l]: layer l's input packed for dgemm.GemmPackedA (forwardTeam),
	// for paRows rows.
	pa     []*dgemm.PackedA
	paRows int
}

func newWorkspace(sizes []int, rows int, dropout bool) *workspace {
	L := len(sizes) - 1
	w := &workspace{rows: rows, z: make([][]float64, L), a: make([][]float64, L), x0: make([]float64, rows*sizes[0])}
	maxw := 0
	for l := 0; l < L; l++ {
		w.z[l] = make([]float64, rows*sizes[l+1])
		w.a[l] = make([]float64, rows*sizes[l+1])
		if sizes[l+1] > maxw {
			maxw = sizes[l+1]
		}
	}
	if sizes[0] > maxw {
		maxw = sizes[0]
	}
	if dropout {
		w.mask = make([][]float64, L-1)
		for l := 0; l < L-1; l++ {
			w.mask[l] = make([]float64, rows*sizes[l+1])
		}
	}
	w.g = make([]float64, rows*maxw)
	w.h = make([]float64, rows*maxw)
	return w
}

// forward propagates the n normalised input rows in ws.x0 through the net;
// the normalised outputs are in ws.a[L−1]. With masks (training), each
// hidden activation is multiplied by its mask entry (inverted dropout: 0 or
// 1/(1−p)).
func (n *Net) forward(ws *workspace, rows int, masks [][]float64) {
	n.forwardPacked(ws, rows, masks, nil, false)
}

// float32Exact reports whether every entry of every W is a float32 value.
func (n *Net) float32Exact() bool {
	for _, w := range n.W {
		for _, v := range w {
			if float64(float32(v)) != v {
				return false
			}
		}
	}
	return true
}

// roundWeights32 rounds every entry of every W to the nearest float32
// (Config.Weights "float32"); the biases keep float64.
func (n *Net) roundWeights32() {
	for _, w := range n.W {
		for i, v := range w {
			w[i] = float64(float32(v))
		}
	}
}

// packWeights packs every layer's W for dgemm.GemmPacked, rounded to
// float32 when f32.
func (n *Net) packWeights(f32 bool) []*dgemm.Packed {
	pw := make([]*dgemm.Packed, n.NumLayers())
	for l := range pw {
		k, m := n.Sizes[l], n.Sizes[l+1]
		pw[l] = dgemm.Pack(false, k, m, n.W[l], m, f32)
	}
	return pw
}

// forwardPacked is forward with the weights from packWeights (nil: the
// weights of n in place), on the calling goroutine only when serial. With
// float64 packing, and serial or not, the results are the same bits.
func (n *Net) forwardPacked(ws *workspace, rows int, masks [][]float64, pw []*dgemm.Packed, serial bool) {
	L := n.NumLayers()
	in := ws.x0
	for l := 0; l < L; l++ {
		k, m := n.Sizes[l], n.Sizes[l+1]
		z := ws.z[l][:rows*m]
		b := n.B[l]
		for i := 0; i < rows; i++ {
			copy(z[i*m:(i+1)*m], b)
		}
		if pw != nil && serial {
			dgemm.GemmPackedSerial(false, rows, in, k, pw[l], true, z, m)
		} else if pw != nil {
			dgemm.GemmPacked(false, rows, in, k, pw[l], true, z, m)
		} else {
			gemm(false, false, rows, m, k, in, n.W[l], true, z)
		}
		a := ws.a[l][:rows*m]
		if l < L-1 {
			if serial {
				softplus.Softplus(a, z)
			} else {
				parallelFor(len(z), func(lo, hi int) {
					softplus.Softplus(a[lo:hi], z[lo:hi])
				})
			}
			if masks != nil {
				mk := masks[l][:rows*m]
				for i := range a {
					a[i] *= mk[i]
				}
			}
		} else {
			copy(a, z)
		}
		in = a
	}
}

// backward takes dL/dZ of the output layer (rows × Out, in ws.g) after a
// forward pass and accumulates dL/dW and dL/db into gw, gb (overwritten).
// If dx is not nil, dL/dx̃ (rows × In, normalised inputs) is written there.
func (n *Net) backward(ws *workspace, rows int, masks [][]float64, gw, gb [][]float64, dx []float64) {
	L := n.NumLayers()
	g := ws.g
	h := ws.h
	for l := L - 1; l >= 0; l-- {
		k, m := n.Sizes[l], n.Sizes[l+1]
		var aPrev []float64
		if l == 0 {
			aPrev = ws.x0
		} else {
			aPrev = ws.a[l-1]
		}
		if gw != nil {
			gemm(true, false, k, m, rows, aPrev, g, false, gw[l])
			db := gb[l]
			for j := range db {
				db[j] = 0
			}
			for i := 0; i < rows; i++ {
				row := g[i*m : (i+1)*m]
				for j, v := range row {
					db[j] += v
				}
			}
		}
		if l == 0 && dx == nil {
			break
		}
		// dL/dA_{l} = G·Wᵀ  (rows × k)
		out := h
		if l == 0 {
			out = dx
		}
		gemm(false, true, rows, k, m, g, n.W[l], false, out)
		if l > 0 {
			z := ws.z[l-1][:rows*k]
			o := out[:rows*k]
			var sg [512]float64
			for lo := 0; lo < len(o); lo += len(sg) {
				hi := min(lo+len(sg), len(o))
				s := sg[:hi-lo]
				softplus.Sigmoid(s, z[lo:hi])
				if masks != nil {
					mk := masks[l-1][lo:hi]
					for i, v := range s {
						o[lo+i] *= mk[i] * v
					}
				} else {
					for i, v := range s {
						o[lo+i] *= v
					}
				}
			}
			g, h = h, g
		}
	}
}

// normIn writes the normalised rows of x (n × In) into ws.x0.
func (n *Net) normIn(ws *workspace, x []float64, rows int) {
	d := n.In()
	for i := 0; i < rows; i++ {
		for j := 0; j < d; j++ {
			ws.x0[i*d+j] = (x[i*d+j] - n.XMean[j]) / n.XSD[j]
		}
	}
}

// parallelMin is the element count above which element-wise loops (the
// softplus, ≈ 2–5 ns an element with the AVX-512 kernel) are split over
// GOMAXPROCS goroutines. Each
// element is computed alone, so the result does not depend on the split.
const parallelMin = 1 << 14

func parallelFor(n int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if n < parallelMin || p < 2 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + p - 1) / p
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
