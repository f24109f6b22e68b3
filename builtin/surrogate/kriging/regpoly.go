package kriging

// nBasis is the number p of regression functions of order 0, 1 or 2 in d
// dimensions (DACE regpoly0/1/2; Lophaven et al. 2002, Eqs. 2.21–2.23).
func nBasis(order, d int) int {
	switch order {
	case 0:
		return 1
	case 1:
		return 1 + d
	default:
		return 1 + d + d*(d+1)/2
	}
}

// basis writes f(x) into f: 1; then x_1 … x_d (order ≥ 1); then
// x_i·x_j for i ≤ j in DACE's order (x_1x_1, x_1x_2, …, x_1x_d,
// x_2x_2, …) (order 2).
func basis(order int, x, f []float64) {
	f[0] = 1
	if order == 0 {
		return
	}
	d := len(x)
	copy(f[1:], x)
	if order == 1 {
		return
	}
	k := 1 + d
	for i := range d {
		for j := i; j < d; j++ {
			f[k] = x[i] * x[j]
			k++
		}
	}
}

// basisGrad writes ∂f/∂x_m into g (length p) for one coordinate m.
func basisGrad(order int, x []float64, m int, g []float64) {
	clear(g)
	if order == 0 {
		return
	}
	d := len(x)
	g[1+m] = 1
	if order == 1 {
		return
	}
	k := 1 + d
	for i := range d {
		for j := i; j < d; j++ {
			switch {
			case i == m && j == m:
				g[k] = 2 * x[m]
			case i == m:
				g[k] = x[j]
			case j == m:
				g[k] = x[i]
			}
			k++
		}
	}
}
