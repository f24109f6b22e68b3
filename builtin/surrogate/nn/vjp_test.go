package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// VJP on a batch that spans several chunks equals, row by row, vᵀ·J with J
// from Jacobian (itself checked against finite differences in
// TestJacobianFD), and its y equals Predict's.
func TestVJPIsVTransposeJacobian(t *testing.T) {
	const tol = 1e-12 // the same products summed in another order
	e := &Ensemble{Nets: []*Net{randNet([]int{4, 8, 6, 3}, 11), randNet([]int{4, 8, 6, 3}, 12)}, Weights: []float64{0.3, 0.7}}
	if err := e.check(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	n, d, m := chunk+37, 4, 3
	x, v := make([]float64, n*d), make([]float64, n*m)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	for i := range v {
		v[i] = r.NormFloat64()
	}
	y, gx := e.VJP(nil, x, n, v, nil, nil)
	yp := e.Predict(nil, x, n, nil)
	for i := range y {
		if math.Abs(y[i]-yp[i]) > tol*(1+math.Abs(yp[i])) {
			t.Fatalf("VJP y[%d] = %v, Predict %v", i, y[i], yp[i])
		}
	}
	for k := 0; k < n; k += 29 {
		_, J := e.Jacobian(x[k*d:(k+1)*d], nil)
		for j := 0; j < d; j++ {
			want := 0.0
			for o := 0; o < m; o++ {
				want += v[k*m+o] * J[o*d+j]
			}
			if math.Abs(gx[k*d+j]-want) > tol*(1+math.Abs(want)) {
				t.Errorf("row %d: g[%d] = %v, vᵀJ %v", k, j, gx[k*d+j], want)
			}
		}
	}
}
