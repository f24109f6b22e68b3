package efsurr

import (
	"fmt"
	"math"
	"sync"

	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
)

const deg = math.Pi / 180

// Box bounds the sample-point inputs (x mm, F_y N, z mm, T_α N·m, β °,
// γ °).
type Box struct{ Lo, Hi [6]float64 }

// GaitBox is a knee simulator's gait-cycle range: AP ±5 mm, net axial
// load 200–3000 N (the ISO 14243 peak is about 2600 N), ML ±1 mm,
// varus–valgus torque ±10 N·m, internal–external ±8°, flexion 0–60°.
var GaitBox = Box{Lo: [6]float64{-5, 200, -1, -10, -8, 0}, Hi: [6]float64{5, 3000, 1, 10, 8, 60}}

// MinSide is the default reasonable-design-space bound: the smallest F_y
// (N) a side may carry (both condyles stay loaded on a knee simulator).
const MinSide = 50.0

// Sample is one analysed sample point.
type Sample struct {
	OK    bool // static analysis converged and within the design space
	Pose  efound.Pose
	Loads [2]efound.Loads
}

// Analyse maps the unit-cube points u (n × 6) into box and runs a static
// analysis of each with the given number of workers; a point whose
// analysis fails, or where a side carries less than minSide, has OK false.
func Analyse(k efound.Knee, u [][]float64, box Box, minSide float64, workers int) []Sample {
	out := make([]Sample, len(u))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var v [6]float64
				for j := range v {
					v[j] = box.Lo[j] + u[i][j]*(box.Hi[j]-box.Lo[j])
				}
				p, l, err := k.Static(efound.Pose{X: v[0], Z: v[2], Beta: v[4] * deg, Gamma: v[5] * deg}, v[1], v[3])
				ok := err == nil && l[0].F[1] >= minSide && l[1].F[1] >= minSide
				out[i] = Sample{OK: ok, Pose: p, Loads: l}
			}
		}()
	}
	for i := range u {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// PoseInputs are the pose-space inputs (x, y, z, α°, β°, γ°).
func PoseInputs(p efound.Pose) []float64 {
	return []float64{p.X, p.Y, p.Z, p.Alpha / deg, p.Beta / deg, p.Gamma / deg}
}

// HybridInputs are the inputs (x, F_y, z, T_α, β°, γ°) of the insensitive
// loads and the CoP, with one side's F_y and T_α.
func HybridInputs(p efound.Pose, fy, ta float64) []float64 {
	return []float64{p.X, fy, p.Z, ta, p.Beta / deg, p.Gamma / deg}
}

// Names are the nine outputs of a side in Eq. 2 order, then the CoP.
var Names = [9]string{"Fy_N", "Talpha_Nm", "Fx_N", "Fz_N", "Tbeta_Nm", "Tgamma_Nm", "copx_mm", "copy_mm", "copz_mm"}

// Outputs returns a side's loads in Names order.
func Outputs(l efound.Loads) [9]float64 {
	return [9]float64{l.F[1], l.T[0], l.F[0], l.F[2], l.T[1], l.T[2], l.CoP[0], l.CoP[1], l.CoP[2]}
}

// Side is one side's nine Kriging models, in Names order.
type Side [9]*kriging.Model

// Surrogate is the medial and lateral surrogates.
type Surrogate struct {
	Sides [2]Side
	Kept  int // sample points fitted
}

// Fit fits both sides' models to the OK samples with the given Kriging
// options (Lin 2010 used DACE; order 1 and the Gaussian correlation are a
// good default here, see examples/tkr-contact/README.md). progress, if
// not nil, is called after each fit.
func Fit(samples []Sample, opt kriging.Options, progress func(side, output int, m *kriging.Model)) (*Surrogate, error) {
	var s Surrogate
	for _, smp := range samples {
		if smp.OK {
			s.Kept++
		}
	}
	if s.Kept < 10 {
		return nil, fmt.Errorf("efsurr: %d usable sample points, need at least 10", s.Kept)
	}
	for side := 0; side < 2; side++ {
		for j := range Names {
			x := make([][]float64, 0, s.Kept)
			y := make([]float64, 0, s.Kept)
			for _, smp := range samples {
				if !smp.OK {
					continue
				}
				o := Outputs(smp.Loads[side])
				if j < 2 {
					x = append(x, PoseInputs(smp.Pose))
				} else {
					x = append(x, HybridInputs(smp.Pose, o[0], o[1]))
				}
				y = append(y, o[j])
			}
			m, err := kriging.Fit(x, y, opt)
			if err != nil {
				return nil, fmt.Errorf("efsurr: %s %s: %w", efound.SideNames[side], Names[j], err)
			}
			s.Sides[side][j] = m
			if progress != nil {
				progress(side, j, m)
			}
		}
	}
	return &s, nil
}

// Predict writes one side's nine outputs (Names order) at pose p: F_y and
// T_α from the pose, then the rest from (x, F_y, z, T_α, β, γ) with the
// predicted F_y, T_α (Lin 2010, Sec. 2.2.5).
func (s Side) Predict(p efound.Pose, out *[9]float64) error {
	in := PoseInputs(p)
	var err error
	if out[0], err = s[0].Mean(in); err != nil {
		return err
	}
	if out[1], err = s[1].Mean(in); err != nil {
		return err
	}
	h := HybridInputs(p, out[0], out[1])
	for j := 2; j < 9; j++ {
		if out[j], err = s[j].Mean(h); err != nil {
			return err
		}
	}
	return nil
}

// Accuracy is one output's error on held-out samples.
type Accuracy struct {
	Side, Output string
	RMSE, MaxAbs float64
	Min, Max     float64 // range of the EF values
	N            int
}

// Assess compares the surrogate with the EF loads of the OK held-out
// samples, output by output.
func (s *Surrogate) Assess(held []Sample) ([]Accuracy, error) {
	var acc []Accuracy
	for side := 0; side < 2; side++ {
		a := make([]Accuracy, 9)
		for j := range a {
			a[j] = Accuracy{Side: efound.SideNames[side], Output: Names[j], Min: math.Inf(1), Max: math.Inf(-1)}
		}
		var pred [9]float64
		for _, h := range held {
			if !h.OK {
				continue
			}
			if err := s.Sides[side].Predict(h.Pose, &pred); err != nil {
				return nil, err
			}
			o := Outputs(h.Loads[side])
			for j := range o {
				e := math.Abs(pred[j] - o[j])
				a[j].RMSE += e * e
				a[j].MaxAbs = math.Max(a[j].MaxAbs, e)
				a[j].Min = math.Min(a[j].Min, o[j])
				a[j].Max = math.Max(a[j].Max, o[j])
				a[j].N++
			}
		}
		for j := range a {
			if a[j].N > 0 {
				a[j].RMSE = math.Sqrt(a[j].RMSE / float64(a[j].N))
			}
		}
		acc = append(acc, a...)
	}
	return acc, nil
}
