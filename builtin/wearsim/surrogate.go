package wearsim

import (
	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/contact/efsurr"
	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
)

// WearBox bounds the surrogate's sample points (x mm, net F_y N, z mm,
// net T_α N·m, β °, γ °) for this simulator: the ranges of the nominal
// elastic-foundation simulation with DefaultMachine (x −0.7 … 2.5 mm, z
// within ±0.05 mm, β −4.4 … 0.4°, γ 0 … 58°, net F_y 170 … 2 600 N,
// T_α ≈ −e·W) widened to cover the extreme inputs of DefaultFamilies, as
// Lin et al. (2010, Sec. 2.3.3) bound theirs by extreme-input EF
// simulations expanded by a percentage.
var WearBox = efsurr.Box{Lo: [6]float64{-2.5, 100, -0.3, -16, -7, -2}, Hi: [6]float64{4.5, 3300, 0.3, 0.5, 2, 66}}

// WearMinSide is the reasonable-design-space bound of the wear surrogate:
// each side carries at least this F_y (N) (Sec. 2.2.4 reduced to one bound).
const WearMinSide = 20.0

// BuildSurrogate runs the construction of Lin et al. (2010, Sec. 2.2)
// for this simulator: n Hammersley sample points in box, a static
// analysis of each with the given workers (efsurr.Analyse), and per side
// the nine Kriging models of Eq. 2 and the CoP (order 1, Gaussian). The
// samples are returned too, for caching.
func BuildSurrogate(k efound.Knee, n int, box efsurr.Box, minSide float64, workers int, samples []efsurr.Sample) (*Surrogate, []efsurr.Sample, error) {
	if samples == nil {
		u, err := design.Hammersley(n, 6)
		if err != nil {
			return nil, nil, err
		}
		samples = efsurr.Analyse(k, u, box, minSide, workers)
	}
	s, err := efsurr.Fit(samples, kriging.Options{Order: 1}, nil)
	if err != nil {
		return nil, samples, err
	}
	return &Surrogate{S: s, Y0: k.LiftOff()}, samples, nil
}
