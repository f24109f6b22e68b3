package testfunc

import "math"

// Hartmann6 is the Hartmann 6-D test function on [0,1]^6 (Dixon & Szegö
// 1978, "The global optimisation problem: an introduction", in Towards
// Global Optimisation 2, pp. 1–15; constants as in Surjanovic & Bingham's
// Virtual Library of Simulation Experiments). Global minimum −3.32237 at
// (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573).
func Hartmann6(x []float64) float64 {
	alpha := [4]float64{1.0, 1.2, 3.0, 3.2}
	a := [4][6]float64{
		{10, 3, 17, 3.5, 1.7, 8},
		{0.05, 10, 17, 0.1, 8, 14},
		{3, 3.5, 1.7, 10, 17, 8},
		{17, 8, 0.05, 10, 0.1, 14},
	}
	p := [4][6]float64{
		{1312, 1696, 5569, 124, 8283, 5886},
		{2329, 4135, 8307, 3736, 1004, 9991},
		{2348, 1451, 3522, 2883, 3047, 6650},
		{4047, 8828, 8732, 5743, 1091, 381},
	}
	var s float64
	for i := range 4 {
		var e float64
		for j := range 6 {
			t := x[j] - p[i][j]*1e-4
			e += a[i][j] * t * t
		}
		s += alpha[i] * math.Exp(-e)
	}
	return -s
}
