package wearsim

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/interp"
)

// Curve is one periodic input curve of a knee wear simulator over a cycle
// of Period seconds, given by knots (percent of cycle, value) and
// interpolated by an Akima spline (gonum interp.AkimaSpline) fitted to the
// knots repeated over three periods, so that the curve and its slope are
// continuous across the cycle boundary.
type Curve struct {
	Name   string
	Unit   string
	Period float64 // s
	Pct    []float64
	Val    []float64
	spl    interp.AkimaSpline
}

// NewCurve checks the knots (strictly increasing percentages in [0, 100),
// at least 5) and builds the spline.
func NewCurve(name, unit string, period float64, pct, val []float64) (*Curve, error) {
	if len(pct) != len(val) || len(pct) < 5 {
		return nil, fmt.Errorf("wearsim: curve %s needs ≥ 5 knots and as many values, got %d, %d", name, len(pct), len(val))
	}
	if !(period > 0) {
		return nil, fmt.Errorf("wearsim: curve %s: period %g s, need > 0", name, period)
	}
	for i, p := range pct {
		if p < 0 || p >= 100 || (i > 0 && !(p > pct[i-1])) || math.IsNaN(val[i]) || math.IsInf(val[i], 0) {
			return nil, fmt.Errorf("wearsim: curve %s: knot %d (%g %%, %g): percentages must increase within [0, 100) and values be finite", name, i, p, val[i])
		}
	}
	c := &Curve{Name: name, Unit: unit, Period: period, Pct: append([]float64(nil), pct...), Val: append([]float64(nil), val...)}
	var xs, ys []float64
	for k := -1; k <= 1; k++ {
		for i, p := range pct {
			xs = append(xs, (p+100*float64(k))/100*period)
			ys = append(ys, val[i])
		}
	}
	if err := c.spl.Fit(xs, ys); err != nil {
		return nil, fmt.Errorf("wearsim: curve %s: %w", name, err)
	}
	return c, nil
}

// wrap maps t into [0, Period).
func (c *Curve) wrap(t float64) float64 {
	t = math.Mod(t, c.Period)
	if t < 0 {
		t += c.Period
	}
	return t
}

// At is the curve's value at time t (s).
func (c *Curve) At(t float64) float64 { return c.spl.Predict(c.wrap(t)) }

// Slope is the curve's time derivative at t (unit/s).
func (c *Curve) Slope(t float64) float64 { return c.spl.PredictDerivative(c.wrap(t)) }

// Range returns the smallest and largest value on a fine grid (1 000
// points per cycle).
func (c *Curve) Range() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := 0; i < 1000; i++ {
		v := c.At(float64(i) / 1000 * c.Period)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// Knots of the ISO 14243-1 force-controlled knee wear test (1 Hz gait
// cycle) as digitised for this package: the standard's tables are not
// public, so these reproduce the published shapes and extremes of its
// four input curves — flexion 0 … 58°, axial force 168 … 2 600 N with two
// stance peaks, anterior–posterior force about −265 … +110 N and
// internal–external torque about −1 … +6 N·m — as shown in the figures of
// the standard and of the papers that use it (Lin et al. 2010 cite it as
// ref. 45), not the exact tabulated values. Percent of cycle from heel
// strike. The knots are the package's documented data (doc.go).
var (
	ISOFlexionPct = []float64{0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 92, 96}
	ISOFlexionDeg = []float64{0, 5, 12, 17, 19, 18, 15, 11, 8, 6, 5, 6, 9, 15, 24, 35, 46, 54, 58, 57, 51, 40, 27, 14, 4}

	ISOAxialPct = []float64{0, 4, 8, 12, 14, 18, 24, 30, 36, 42, 46, 50, 54, 58, 62, 70, 80, 90}
	ISOAxialN   = []float64{168, 600, 1700, 2550, 2600, 2200, 1500, 1200, 1500, 2300, 2600, 2200, 1200, 400, 168, 168, 168, 168}

	ISOAPPct = []float64{0, 4, 8, 12, 16, 20, 26, 32, 40, 46, 52, 58, 64, 72, 80, 90}
	ISOAPN   = []float64{-30, -120, -200, -265, -200, -80, 0, 40, 90, 110, 60, -20, -60, -40, -20, -20}

	ISOIEPct = []float64{0, 6, 10, 14, 20, 30, 40, 46, 52, 58, 64, 76, 88}
	ISOIENm  = []float64{0, -0.5, -1, 0, 1.5, 3.5, 5.5, 6, 4, 1, 0, 0, 0}
)

// Input indices: the four ISO 14243-1 curves in Inputs order.
const (
	InFlexion = iota // femoral flexion γ, degrees (motion controlled)
	InAxial          // axial force on the femoral component, N, downwards
	InAP             // anterior–posterior force on the tibial insert, N
	InIE             // internal–external torque on the tibial insert, N·m
	NInputs
)

// InputNames name the inputs in order.
var InputNames = [NInputs]string{"flexion", "axial", "ap", "ie"}

// Inputs are the four input curves of one simulation.
type Inputs [NInputs]*Curve

// ISO returns the nominal ISO 14243-1 inputs (the digitised knots above)
// with a cycle of period seconds (1 s in the standard).
func ISO(period float64) (Inputs, error) {
	var in Inputs
	var err error
	if in[InFlexion], err = NewCurve("flexion", "deg", period, ISOFlexionPct, ISOFlexionDeg); err != nil {
		return in, err
	}
	if in[InAxial], err = NewCurve("axial", "N", period, ISOAxialPct, ISOAxialN); err != nil {
		return in, err
	}
	if in[InAP], err = NewCurve("ap", "N", period, ISOAPPct, ISOAPN); err != nil {
		return in, err
	}
	in[InIE], err = NewCurve("ie", "N·m", period, ISOIEPct, ISOIENm)
	return in, err
}
