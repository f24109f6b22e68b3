package wearsim

import "fmt"

// Family is a two-component variation family of one input curve, this
// package's stand-in for the principal components Lin et al. (2010,
// Sec. 2.3.5) took from eight implant designs' measured simulator curves
// (not public): component 1 scales the curve about a reference level,
// component 2 shifts it in time,
//
//	c_w(t) = Ref + (1 + A·(2w₁ − 1))·(c(t − Tau·(2w₂ − 1)) − Ref),
//
// with the paper's weights w₁, w₂ ∈ [0, 1] (0.5, 0.5 is the nominal
// curve; 0, 0 and 1, 1 are the "minimum" and "maximum" extremes).
type Family struct {
	A   float64 // relative amplitude change at w₁ = 0 or 1
	Tau float64 // time shift (s) at w₂ = 0 or 1
	Ref float64 // level the amplitude scales about (curve unit)
}

// DefaultFamilies are the documented variation families (doc.go):
// flexion ±10 % about 0° and ±20 ms; axial force ±10 % about its 168 N
// swing level and ±20 ms; AP force and IE torque ±25 % about zero and
// ±30 ms.
var DefaultFamilies = [NInputs]Family{
	InFlexion: {A: 0.10, Tau: 0.02, Ref: 0},
	InAxial:   {A: 0.10, Tau: 0.02, Ref: 168},
	InAP:      {A: 0.25, Tau: 0.03, Ref: 0},
	InIE:      {A: 0.25, Tau: 0.03, Ref: 0},
}

// Weights are the two component weights of each input, in [0, 1].
type Weights [NInputs][2]float64

// Nominal weights: every curve as given.
var Nominal = Weights{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}}

// Vary returns the inputs with each curve varied by its family at the
// given weights, sampled on knots every 1 % of the cycle.
func Vary(in Inputs, fam [NInputs]Family, w Weights) (Inputs, error) {
	var out Inputs
	for i, c := range in {
		if c == nil {
			return out, fmt.Errorf("wearsim: input %s missing", InputNames[i])
		}
		for j, v := range w[i] {
			if !(v >= 0 && v <= 1) {
				return out, fmt.Errorf("wearsim: weight %d of input %s is %g, need [0, 1]", j+1, InputNames[i], v)
			}
		}
		if w[i] == [2]float64{0.5, 0.5} {
			out[i] = c
			continue
		}
		f := fam[i]
		scale := 1 + f.A*(2*w[i][0]-1)
		shift := f.Tau * (2*w[i][1] - 1)
		pct := make([]float64, 100)
		val := make([]float64, 100)
		for k := range pct {
			pct[k] = float64(k)
			t := float64(k) / 100 * c.Period
			val[k] = f.Ref + scale*(c.At(t-shift)-f.Ref)
		}
		var err error
		if out[i], err = NewCurve(c.Name, c.Unit, c.Period, pct, val); err != nil {
			return out, err
		}
	}
	return out, nil
}
