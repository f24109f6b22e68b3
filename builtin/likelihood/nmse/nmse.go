package nmse

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
)

// Normalisations, in the order of the normalise setting's Choices.
const (
	Pooled = 0
	PerDoF = 1
)

// NormaliseNames are the normalise setting's choices.
var NormaliseNames = []string{"pooled", "per_dof"}

// Spec is the self-description of the NMSE likelihood.
var Spec = abi.Spec{
	Kind:    abi.KindLikelihood,
	Name:    "nmse",
	Version: "1.0.0",
	Doc:     "log L = -L_FD, the normalised MSE of joint accelerations of Diff-MSM (Zhou et al. Eq. 4); sigma is ignored",
	Settings: []abi.Setting{
		{Name: "normalise", Default: Pooled, Choices: NormaliseNames, Doc: "pooled: one variance of all observed values (Eq. 4); per_dof: each column by its own variance"},
		{Name: "variance", Default: 0, Doc: "if > 0, the pooled variance to use instead of the observations' own"},
	},
	Capabilities: []abi.Capability{abi.CapGradY, abi.CapResiduals, abi.CapSigmaFree},
}

// Likelihood is the NMSE term. It holds only settings and is safe for
// concurrent use.
type Likelihood struct {
	Normalise int
	Variance  float64
}

// New builds the likelihood from its settings (normalise, variance).
func New(settings []float64) (abi.Likelihood, error) {
	if len(settings) != len(Spec.Settings) {
		return nil, fmt.Errorf("nmse: want %d settings (normalise, variance), got %d", len(Spec.Settings), len(settings))
	}
	n, v := settings[0], settings[1]
	if n != Pooled && n != PerDoF {
		return nil, fmt.Errorf("nmse: normalise must be 0 (pooled) or 1 (per_dof), got %g", n)
	}
	if !(v >= 0) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("nmse: variance must be finite and ≥ 0, got %g", v)
	}
	if v > 0 && v < 1e-290 {
		// The weights m/(N·variance) overflow (audit 16: 1e-320 made every
		// point non-finite).
		return nil, fmt.Errorf("nmse: variance %g is below 1e-290: the weights 1/variance of the squared errors overflow; rescale the data", v)
	}
	if v > 0 && n == PerDoF {
		return nil, fmt.Errorf("nmse: a given variance applies to normalise = pooled only")
	}
	return Likelihood{Normalise: int(n), Variance: v}, nil
}

// Spec implements abi.Likelihood.
func (Likelihood) Spec() abi.Spec { return Spec }

// Weights returns, for each of the m columns, the weight w_j of a squared
// error in L_FD = Σ w_j (y − obs)² over the observed values: pooled,
// w_j = m/(N·var) with N the number of observed values and var their
// variance (or the variance setting), which is Eq. 4's 1/(T·var) when
// nothing is missing (N = T·m); per_dof, w_j = 1/(N_j·var_j) over column
// j's N_j observed values. Variances divide by the count (population
// variance). NaN observations are missing and skipped; an infinite one,
// a column (or, pooled, the whole of obs) with no observed value, or a
// zero variance gives abi.Invalid.
func (l Likelihood) Weights(m int, obs []float64) ([]float64, abi.Status) {
	if m < 1 || len(obs) == 0 || len(obs)%m != 0 {
		return nil, abi.Invalid
	}
	n := make([]float64, m)
	sum := make([]float64, m)
	for i, o := range obs {
		if math.IsNaN(o) {
			continue
		}
		if math.IsInf(o, 0) {
			return nil, abi.Invalid
		}
		n[i%m]++
		sum[i%m] += o
	}
	w := make([]float64, m)
	if l.Normalise == PerDoF {
		ss := make([]float64, m)
		for i, o := range obs {
			if j := i % m; !math.IsNaN(o) {
				d := o - sum[j]/n[j]
				ss[j] += d * d
			}
		}
		for j := range w {
			if n[j] == 0 || !(ss[j] > 0) {
				return nil, abi.Invalid
			}
			w[j] = 1 / ss[j] // 1/(N_j·var_j), var_j = ss_j/N_j
		}
		return w, abi.OK
	}
	N, S := 0.0, 0.0
	for j := range n {
		N += n[j]
		S += sum[j]
	}
	if N == 0 {
		return nil, abi.Invalid
	}
	v := l.Variance
	if v == 0 {
		mean := S / N
		for _, o := range obs {
			if !math.IsNaN(o) {
				d := o - mean
				v += d * d
			}
		}
		v /= N
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return nil, abi.Invalid
	}
	for j := range w {
		w[j] = float64(m) / (N * v)
	}
	return w, abi.OK
}

// eval returns log L = −L_FD and, when given, writes gy and r.
func (l Likelihood) eval(m int, y, obs, gy, r []float64) (float64, abi.Status) {
	if len(y) != len(obs) || (gy != nil && len(gy) != len(y)) || (r != nil && len(r) != len(y)) {
		return math.Inf(-1), abi.Invalid
	}
	w, st := l.Weights(m, obs)
	if st != abi.OK {
		return math.Inf(-1), st
	}
	loss := 0.0
	for i := range y {
		if math.IsNaN(obs[i]) {
			if gy != nil {
				gy[i] = 0
			}
			if r != nil {
				r[i] = 0
			}
			continue
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return math.Inf(-1), abi.NonFinite
		}
		d := y[i] - obs[i]
		wj := w[i%m]
		loss += wj * d * d
		if gy != nil {
			gy[i] = -2 * wj * d
		}
		if r != nil {
			r[i] = d * math.Sqrt(2*wj)
		}
	}
	return -loss, abi.OK
}

// LogLikelihood implements abi.Likelihood: −L_FD (Eq. 4).
func (l Likelihood) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	return l.eval(m, y, obs, nil, nil)
}

// LogLikelihoodGrad implements abi.GradY: gy = −2·w_j·(y − obs), i.e.
// −2(y − obs)/(T·var) when nothing is missing.
func (l Likelihood) LogLikelihoodGrad(m int, y, obs, sigma, gy []float64) (float64, abi.Status) {
	if gy == nil {
		return math.Inf(-1), abi.Invalid
	}
	return l.eval(m, y, obs, gy, nil)
}

// Residuals implements abi.Residuals: r = (y − obs)·√(2w_j), i.e.
// (y − obs)·√(2/(T·var)) when nothing is missing, so that log L = −½‖r‖².
func (l Likelihood) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	if r == nil {
		return abi.Invalid
	}
	_, st := l.eval(m, y, obs, nil, r)
	return st
}
