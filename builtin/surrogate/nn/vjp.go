package nn

import "fmt"

// VJP writes the ensemble prediction for the n rows of x (n × In) into y
// (n × Out) and, for the cotangent v (n × Out), the vector–Jacobian
// product of every row into gx (n × In): gx[i][j] = Σ_o v[i][o]·∂y_o/∂x_j
// at row i. It is exact (back-propagation, as Jacobian) and costs one
// forward and one backward pass of the batch per member — the cost of
// about two predictions, whatever Out — where Jacobian needs Out seeds
// per row. y and gx are allocated when short; ws may be nil.
func (e *Ensemble) VJP(y, x []float64, n int, v, gx []float64, ws *Workspace) ([]float64, []float64) {
	d, m := e.In(), e.Out()
	if len(x) < n*d || len(v) < n*m {
		panic(fmt.Sprintf("nn: VJP: %d inputs and %d cotangent values for %d rows of %d → %d", len(x), len(v), n, d, m))
	}
	if len(y) < n*m {
		y = make([]float64, n*m)
	}
	if len(gx) < n*d {
		gx = make([]float64, n*d)
	}
	y, gx = y[:n*m], gx[:n*d]
	clear(y)
	clear(gx)
	if ws == nil {
		ws = &Workspace{}
	}
	dx := make([]float64, min(n, chunk)*d)
	for k, net := range e.Nets {
		w := ws.get(net.Sizes, min(n, chunk))
		c := e.Weights[k]
		for s := 0; s < n; s += chunk {
			rows := min(chunk, n-s)
			net.normIn(w, x[s*d:(s+rows)*d], rows)
			net.forward(w, rows, nil)
			out := w.a[net.NumLayers()-1]
			g := w.g[:rows*m]
			for i := 0; i < rows; i++ {
				for j := 0; j < m; j++ {
					y[(s+i)*m+j] += c * (net.YMean[j] + net.YSD[j]*out[i*m+j])
					// ∂y/∂(normalised output) = YSD: the seed of the backward pass.
					g[i*m+j] = v[(s+i)*m+j] * net.YSD[j]
				}
			}
			net.backward(w, rows, nil, nil, nil, dx)
			for i := 0; i < rows; i++ {
				for j := 0; j < d; j++ {
					// x̃ = (x − mean)/sd: ∂x̃/∂x = 1/sd.
					gx[(s+i)*d+j] += c * dx[i*d+j] / net.XSD[j]
				}
			}
		}
	}
	return y, gx
}
