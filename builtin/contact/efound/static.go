package efound

import (
	"fmt"
	"math"
)

// StaticTol is the acceptance of a static analysis (Lin 2010, Sec. 2.2.3:
// a sample point whose contact loads in the sensitive directions differ
// from the applied ones by more than 0.1 % is discarded): relative 1e-3 of
// the applied load, with floors StaticFloorF (N) and StaticFloorT (N·m)
// for applied loads near zero.
const (
	StaticTol    = 1e-3
	StaticFloorF = 0.1
	StaticFloorT = 1e-3
)

// Static is the static analysis of Lin 2010 Sec. 2.2.3 for this knee's
// sensitive directions (y and α, Sec. 2.3.1): given the pose p's x, z, β, γ
// (insensitive, held) and applied net loads F_y = fy (N, > 0) and T_α = ta
// (N·m), it finds y and α at which the net contact loads equilibrate them,
// by Newton's method on (y, α) with a central-difference Jacobian, started
// from the preloaded neutral α = 0 and damped by halving the step while
// the residual grows. It returns the equilibrium pose and its loads per
// side, or an error (the paper's discarded sample) when the residual does
// not fall within StaticTol in 30 iterations.
func (k Knee) Static(p Pose, fy, ta float64) (Pose, [2]Loads, error) {
	p.Alpha = 0
	q, err := k.Preload(p, fy)
	if err != nil {
		return p, [2]Loads{}, err
	}
	res := func(q Pose) (r [2]float64, l [2]Loads, err error) {
		l, err = k.Contact(q)
		if err != nil {
			return r, l, err
		}
		n := Net(l)
		return [2]float64{n.F[1] - fy, n.T[0] - ta}, l, nil
	}
	scale := [2]float64{math.Max(StaticTol*math.Abs(fy), StaticFloorF), math.Max(StaticTol*math.Abs(ta), StaticFloorT)}
	norm := func(r [2]float64) float64 { return math.Max(math.Abs(r[0])/scale[0], math.Abs(r[1])/scale[1]) }
	r, l, err := res(q)
	if err != nil {
		return q, l, err
	}
	const hy, ha = 1e-4, 1e-5 // mm, rad
	for it := 0; it < 30; it++ {
		if norm(r) <= 1 {
			return q, l, nil
		}
		// Jacobian ∂(F_y, T_α)/∂(y, α) by central differences.
		var J [2][2]float64
		for j, h := range [2]float64{hy, ha} {
			qp, qm := q, q
			if j == 0 {
				qp.Y += h
				qm.Y -= h
			} else {
				qp.Alpha += h
				qm.Alpha -= h
			}
			rp, _, err := res(qp)
			if err != nil {
				return q, l, err
			}
			rm, _, err := res(qm)
			if err != nil {
				return q, l, err
			}
			J[0][j] = (rp[0] - rm[0]) / (2 * h)
			J[1][j] = (rp[1] - rm[1]) / (2 * h)
		}
		det := J[0][0]*J[1][1] - J[0][1]*J[1][0]
		if det == 0 || math.IsNaN(det) {
			return q, l, fmt.Errorf("efound: static analysis: singular Jacobian at %+v", q)
		}
		dy := -(J[1][1]*r[0] - J[0][1]*r[1]) / det
		da := -(-J[1][0]*r[0] + J[0][0]*r[1]) / det
		step := 1.0
		for tries := 0; ; tries++ {
			qn := q
			qn.Y += step * dy
			qn.Alpha += step * da
			rn, ln, err := res(qn)
			if err == nil && norm(rn) < norm(r) {
				q, r, l = qn, rn, ln
				break
			}
			if tries == 20 {
				return q, l, fmt.Errorf("efound: static analysis: no descent at %+v (residual %v)", q, r)
			}
			step /= 2
		}
	}
	if norm(r) <= 1 {
		return q, l, nil
	}
	return q, l, fmt.Errorf("efound: static analysis: residual %v above %g after 30 iterations", r, StaticTol)
}
