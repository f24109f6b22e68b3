package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func bartsoenSizes() []int {
	s := append([]int{51}, BartsoenHidden...)
	return append(s, 13)
}

func randData(n, d, m int, seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 5))
	x := &Data{N: n, In: d, Out: m, X: make([]float64, n*d), Y: make([]float64, n*m)}
	for i := range x.X {
		x.X[i] = r.Float64()
	}
	for i := range x.Y {
		x.Y[i] = r.NormFloat64()
	}
	return x
}

// BenchmarkTrainEpochBartsoen: one training epoch of the paper's network
// (51:256:512:1024:512:256:128:64:13, batch 32, Adam, dropout, L2) on 1 024
// samples; the metric s/epoch50k extrapolates to the paper-sized epoch of
// 50 000 samples (the cost is linear in the samples).
func BenchmarkTrainEpochBartsoen(b *testing.B) {
	const n = 1024
	cfg := DefaultConfig()
	cfg.Epochs = 1
	cfg.Members = 1
	cfg.Patience = 0
	data := randData(n, 51, 13, 1)
	norm := &Net{}
	norm.XMean, norm.XSD = meanSD(data.X, n, 51)
	norm.YMean, norm.YSD = meanSD(data.Y, n, 13)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		trainOne(cfg, bartsoenSizes(), norm, data, 1, 1)
	}
	per := time.Since(start).Seconds() / float64(b.N) / n
	b.ReportMetric(per*1e6, "µs/sample")
	b.ReportMetric(per*50000, "s/epoch50k")
}

// BenchmarkPredictBartsoen: inference throughput of one paper-sized
// network at batch 1, 12 and 10 000 (samples/s), and of the ensemble of six
// at batch 10 000.
func BenchmarkPredictBartsoen(b *testing.B) {
	for _, members := range []int{1, 6} {
		for _, batch := range []int{1, 12, 10000} {
			if members == 6 && batch != 10000 {
				continue
			}
			b.Run(fmt.Sprintf("members=%d/batch=%d", members, batch), func(b *testing.B) {
				e := &Ensemble{}
				for k := 0; k < members; k++ {
					e.Nets = append(e.Nets, randNet(bartsoenSizes(), uint64(k)))
					e.Weights = append(e.Weights, 1/float64(members))
				}
				x := randData(batch, 51, 13, 2).X
				dst := make([]float64, batch*13)
				ws := &Workspace{}
				e.Predict(dst, x, batch, ws)
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					e.Predict(dst, x, batch, ws)
				}
				b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "samples/s")
			})
		}
	}
}

// BenchmarkPredictFrozenBartsoen: BenchmarkPredictBartsoen for one network
// frozen (weights packed once): float64 weights packed in float64
// (Freeze(false) of a network trained with Weights "float64"), the same
// weights rounded to float32 when frozen (Freeze(true), lossy), and
// "trained": weights that are float32 values, as kinfer train's default
// leaves them, frozen with Freeze(false) — what a study's surrogate model
// does by default with such a file (packed in float32, no rounding).
func BenchmarkPredictFrozenBartsoen(b *testing.B) {
	for _, name := range []string{"float64", "float32", "trained"} {
		for _, batch := range []int{1, 12, 10000} {
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				net := randNet(bartsoenSizes(), 0)
				if name == "trained" {
					net.roundWeights32()
				}
				e := &Ensemble{Nets: []*Net{net}, Weights: []float64{1}}
				f := e.Freeze(name == "float32")
				x := randData(batch, 51, 13, 2).X
				dst := make([]float64, batch*13)
				ws := &Workspace{}
				f.Predict(dst, x, batch, ws)
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					f.Predict(dst, x, batch, ws)
				}
				b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "samples/s")
			})
		}
	}
}

// BenchmarkJacobianBartsoen: the exact 13 × 51 input Jacobian of one
// paper-sized network at one point.
func BenchmarkJacobianBartsoen(b *testing.B) {
	e := &Ensemble{Nets: []*Net{randNet(bartsoenSizes(), 1)}, Weights: []float64{1}}
	x := randData(1, 51, 13, 3).X
	ws := &Workspace{}
	for i := 0; i < b.N; i++ {
		e.Jacobian(x, ws)
	}
}
