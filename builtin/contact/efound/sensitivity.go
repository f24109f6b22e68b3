package efound

import (
	"fmt"
	"math"
)

// PoseNames name the six pose directions in Pose and sensitivity order.
var PoseNames = [6]string{"x", "y", "z", "alpha", "beta", "gamma"}

// get and set address a pose by direction index (PoseNames order).
func (p Pose) get(i int) float64 { return [6]float64{p.X, p.Y, p.Z, p.Alpha, p.Beta, p.Gamma}[i] }

func (p *Pose) set(i int, v float64) {
	switch i {
	case 0:
		p.X = v
	case 1:
		p.Y = v
	case 2:
		p.Z = v
	case 3:
		p.Alpha = v
	case 4:
		p.Beta = v
	case 5:
		p.Gamma = v
	}
}

// load returns the net load in direction i: F_x, F_y, F_z (N) or T_α,
// T_β, T_γ (N·m).
func load(l Loads, i int) float64 {
	if i < 3 {
		return l.F[i]
	}
	return l.T[i-3]
}

// Sensitivity is Lin 2010's sensitivity vector (Eq. 1),
// s = [∂F_x/∂x, ∂F_y/∂y, ∂F_z/∂z, ∂T_α/∂α, ∂T_β/∂β, ∂T_γ/∂γ], of the net
// (medial + lateral) loads at pose p, by central differences with steps
// ht (mm) for translations and hr (rad) for rotations. Units: N/mm for the
// translations, N·m/rad for the rotations. The loads are those on the
// femur, so a restoring direction has a negative entry.
func (k Knee) Sensitivity(p Pose, ht, hr float64) ([6]float64, error) {
	var s [6]float64
	for i := 0; i < 6; i++ {
		h := ht
		if i >= 3 {
			h = hr
		}
		pp, pm := p, p
		pp.set(i, p.get(i)+h)
		pm.set(i, p.get(i)-h)
		lp, err := k.Contact(pp)
		if err != nil {
			return s, err
		}
		lm, err := k.Contact(pm)
		if err != nil {
			return s, err
		}
		s[i] = (load(Net(lp), i) - load(Net(lm), i)) / (2 * h)
	}
	return s, nil
}

// Preload returns p with Y set so that the net F_y equals fy (> 0), by
// bisection on Y ∈ [p.Y − 5 mm, p.Y + 5 mm] to 1e-9 mm (F_y decreases
// with Y).
func (k Knee) Preload(p Pose, fy float64) (Pose, error) {
	if !(fy > 0) {
		return p, fmt.Errorf("efound: preload must be > 0, got %g", fy)
	}
	f := func(y float64) (float64, error) {
		q := p
		q.Y = y
		l, err := k.Contact(q)
		return Net(l).F[1] - fy, err
	}
	lo, hi := p.Y-5, p.Y+5
	flo, err := f(lo)
	if err != nil {
		return p, err
	}
	fhi, err := f(hi)
	if err != nil {
		return p, err
	}
	if !(flo > 0 && fhi < 0) {
		return p, fmt.Errorf("efound: preload %g N not bracketed (F_y−target %g at Y %g, %g at Y %g)", fy, flo, lo, fhi, hi)
	}
	for hi-lo > 1e-9 {
		mid := 0.5 * (lo + hi)
		fm, err := f(mid)
		if err != nil {
			return p, err
		}
		if fm > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	p.Y = 0.5 * (lo + hi)
	if math.IsNaN(p.Y) {
		return p, fmt.Errorf("efound: preload failed")
	}
	return p, nil
}
