package train

import (
	"fmt"

	"github.com/kinfer/kinfer/builtin/models/surrogate"
)

// Outside counts the samples of a design that lie outside a surrogate's
// training box, where kinfer score measures extrapolation: used as a
// study's model (builtin/models/surrogate), a parameter outside the box
// (the file's param_lower … param_upper, the training design's box) is
// outside the model's bounds and never evaluated (out-of-support), and a
// condition outside the range seen in training makes the evaluation
// invalid (unless the study sets outside = "extrapolate").
type Outside struct {
	// Samples is the number outside in a parameter or a condition (each
	// sample counted once).
	Samples int `json:"samples"`
	// Params counts the samples with a parameter outside the box;
	// Conditions those with a condition outside the training range.
	Params     int `json:"params"`
	Conditions int `json:"conditions"`
}

// OutsideBox counts ds's samples outside f's training box. A file without
// a parameter box (not written by kinfer train) has only its input range.
func OutsideBox(f *surrogate.File, ds *Design) Outside {
	p, d := f.Provenance, &ds.Data
	var lo, hi []float64 // the inputs' range seen in training
	if f.Kriging != nil {
		lo, hi = f.Kriging[0].Box()
	} else if f.Ensemble != nil {
		lo, hi = f.Ensemble.InputLo, f.Ensemble.InputHi
	}
	np := d.In - p.Conditions // parameter inputs
	if p.Conditions < 0 || np < 0 {
		np = d.In
	}
	var o Outside
	for i := 0; i < d.N; i++ {
		x := d.X[i*d.In : (i+1)*d.In]
		par, cond := false, false
		for j, v := range x {
			switch {
			case j < np && len(p.ParamLower) == np && len(p.ParamUpper) == np:
				par = par || v < p.ParamLower[j] || v > p.ParamUpper[j]
			case j < np:
				par = par || len(lo) == d.In && (v < lo[j] || v > hi[j])
			default:
				cond = cond || len(lo) == d.In && (v < lo[j] || v > hi[j])
			}
		}
		if par {
			o.Params++
		}
		if cond {
			o.Conditions++
		}
		if par || cond {
			o.Samples++
		}
	}
	return o
}

// Text is the line kinfer score prints under its table ("" when every
// sample is inside).
func (o Outside) Text(n int) string {
	if o.Samples == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d samples lie outside the surrogate's training box (%d in a parameter: out-of-support as a study's model; %d in a condition: invalid unless outside = \"extrapolate\"): scored by extrapolation\n",
		o.Samples, n, o.Params, o.Conditions)
}

// ScoreReport is kinfer score --json: the surrogate file, the design runs,
// their samples, how many lie outside the training box, and the errors
// per output.
type ScoreReport struct {
	File    string         `json:"file"`
	Kind    string         `json:"kind"`
	Designs []string       `json:"designs"`
	Samples int            `json:"samples"`
	Outside Outside        `json:"outside_training_box"`
	Outputs []OutputReport `json:"outputs"`
}
