package design

// CenteredL2 is the squared centred L2 discrepancy of points in [0,1]^d
// (Hickernell 1998, Eq. 5.1c):
//
//	CD² = (13/12)^d − (2/n) Σ_i Π_k (1 + ½|x_ik−½| − ½|x_ik−½|²)
//	      + (1/n²) Σ_i Σ_j Π_k (1 + ½|x_ik−½| + ½|x_jk−½| − ½|x_ik−x_jk|).
//
// It is what scipy.stats.qmc.discrepancy(x, method="CD") returns. Lower is
// more uniform. Cost O(n²d).
func CenteredL2(pts [][]float64) float64 {
	n := len(pts)
	if n == 0 {
		return 0
	}
	d := len(pts[0])
	first := 1.0
	for range d {
		first *= 13.0 / 12.0
	}
	var s1 float64
	for _, x := range pts {
		p := 1.0
		for _, v := range x {
			a := abs(v - 0.5)
			p *= 1 + 0.5*a - 0.5*a*a
		}
		s1 += p
	}
	var s2 float64
	for i, x := range pts {
		for j := i; j < n; j++ {
			y := pts[j]
			p := 1.0
			for k := range x {
				p *= 1 + 0.5*abs(x[k]-0.5) + 0.5*abs(y[k]-0.5) - 0.5*abs(x[k]-y[k])
			}
			if j == i {
				s2 += p
			} else {
				s2 += 2 * p
			}
		}
	}
	fn := float64(n)
	return first - 2/fn*s1 + s2/(fn*fn)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
