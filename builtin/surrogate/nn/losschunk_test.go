package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The loss without a gradient is computed chunk rows at a time, with the
// bits of the whole-set computation (audit 10: a workspace of all the
// validation rows took 670 MB a member).
func TestLossChunkedSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := newNet([]int{3, 40, 30, 2}, r)
	n.XMean, n.XSD, n.YMean, n.YSD = []float64{0, 1, 2}, []float64{1, 2, 3}, []float64{0.5, -1}, []float64{2, 3}
	rows := 3*chunk + 17
	x, y := make([]float64, rows*3), make([]float64, rows*2)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	for i := range y {
		y[i] = r.NormFloat64()
	}
	ws := newWorkspace(n.Sizes, rows, false)
	n.normIn(ws, x, rows)
	whole := n.lossGrad(ws, y, rows, 1, 1e-4, nil, nil, nil, true)
	if got := n.Loss(x, y, rows, 1, 1e-4, nil, nil); math.Float64bits(got) != math.Float64bits(whole) {
		t.Errorf("chunked loss %v, whole %v", got, whole)
	}
}
