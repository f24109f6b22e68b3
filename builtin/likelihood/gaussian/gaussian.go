package gaussian

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
)

// logSqrt2Pi is ½·ln(2π).
const logSqrt2Pi = 0.91893853320467274178032973640561764

// Spec is the self-description of the builtin Gaussian likelihood.
var Spec = abi.Spec{
	Kind:         abi.KindLikelihood,
	Name:         "gaussian",
	Version:      "1.0.0",
	Doc:          "independent Gaussian errors, Bartsoen 2023 Eq. 7; NaN observations are missing and skipped",
	Capabilities: []abi.Capability{abi.CapGradY, abi.CapResiduals},
}

// Likelihood is the Gaussian likelihood; it has no settings and no state,
// so it is safe for concurrent use.
type Likelihood struct{}

// New builds the likelihood; it takes no settings.
func New(settings []float64) (abi.Likelihood, error) {
	if len(settings) != 0 {
		return nil, fmt.Errorf("gaussian: takes no settings, got %d", len(settings))
	}
	return Likelihood{}, nil
}

// Spec implements abi.Likelihood.
func (Likelihood) Spec() abi.Spec { return Spec }

// check validates value i: whether it is used (obs not missing) and the
// status it gives.
func check(y, obs, sigma float64) (used bool, st abi.Status) {
	if math.IsNaN(obs) {
		return false, abi.OK
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return true, abi.Invalid
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return true, abi.NonFinite
	}
	return true, abi.OK
}

// eval is the shared loop: it returns log L (Eq. 7) and, when gy or r are
// given, writes ∂log L/∂y and the residuals. The values are independent, so
// m (the number of outputs per row) only checks the shape.
func eval(m int, y, obs, sigma, gy, r []float64) (float64, abi.Status) {
	if m < 1 || len(y)%m != 0 || len(obs) != len(y) || len(sigma) != len(y) || (gy != nil && len(gy) != len(y)) || (r != nil && len(r) != len(y)) {
		return math.Inf(-1), abi.Invalid
	}
	ll := 0.0
	var logSigma sumLog
	for i := range y {
		used, st := check(y[i], obs[i], sigma[i])
		if st != abi.OK {
			return math.Inf(-1), st
		}
		if !used {
			if gy != nil {
				gy[i] = 0
			}
			if r != nil {
				r[i] = 0
			}
			continue
		}
		ri := (y[i] - obs[i]) / sigma[i]
		// Bartsoen 2023 Eq. 7: −log(σ√(2π)) − (y − obs)²/(2σ²), the log σ
		// summed by sumLog.
		logSigma.add(sigma[i])
		ll += -logSqrt2Pi - 0.5*ri*ri
		if gy != nil {
			gy[i] = -ri / sigma[i] // ∂/∂y of Eq. 7: −(y − obs)/σ²
		}
		if r != nil {
			r[i] = ri
		}
	}
	return ll - logSigma.value(), abi.OK
}

// sumLog accumulates Σ log xᵢ of positive finite xᵢ as one logarithm of
// their product, kept as mantissa × 2^exponent (math.Frexp) so that it
// neither over- nor underflows: a multiplication and a Frexp per value
// instead of a logarithm, the σ of every observation on every call being
// most of a cheap model's likelihood time. The result differs from the
// sum of logarithms by rounding only (a relative 1e-15 per value; test).
type sumLog struct {
	mant float64 // in [2⁻¹⁰²², 1] after each add; 0 means 1 (no value yet)
	exp  int
}

func (s *sumLog) add(x float64) {
	m, e := math.Frexp(x) // x = m·2^e, m ∈ [½, 1)
	if s.mant == 0 {
		s.mant = 1
	}
	s.mant *= m
	s.exp += e
	if s.mant < 0x1p-900 { // renormalise long before the product could underflow
		m, e := math.Frexp(s.mant)
		s.mant, s.exp = m, s.exp+e
	}
}

func (s *sumLog) value() float64 {
	if s.mant == 0 {
		return 0
	}
	return math.Log(s.mant) + float64(s.exp)*math.Ln2
}

// LogLikelihood implements abi.Likelihood: Bartsoen 2023 Eq. 7 summed over
// all non-missing values.
func (Likelihood) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	return eval(m, y, obs, sigma, nil, nil)
}

// LogLikelihoodGrad implements abi.GradY: gy = −(y − obs)/σ² (0 where obs
// is missing).
func (Likelihood) LogLikelihoodGrad(m int, y, obs, sigma, gy []float64) (float64, abi.Status) {
	if gy == nil {
		return math.Inf(-1), abi.Invalid
	}
	return eval(m, y, obs, sigma, gy, nil)
}

// Residuals implements abi.Residuals: r = (y − obs)/σ (0 where obs is
// missing), so that log L = LogNormConst(obs, sigma) − ½‖r‖².
func (Likelihood) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	if r == nil {
		return abi.Invalid
	}
	_, st := eval(m, y, obs, sigma, nil, r)
	return st
}

// ResidualSlopes implements abi.ResidualSlopes: r as Residuals writes it
// and s_i = ∂r_i/∂y_i = 1/σ_i (0 where obs is missing), exactly, so that
// the host chains a model's Jacobian into ∂r/∂θ without differences.
func (Likelihood) ResidualSlopes(m int, y, obs, sigma, r, s []float64) abi.Status {
	if r == nil || len(s) != len(y) {
		return abi.Invalid
	}
	if _, st := eval(m, y, obs, sigma, nil, r); st != abi.OK {
		return st
	}
	for i := range s {
		s[i] = 0
		if !math.IsNaN(obs[i]) {
			s[i] = 1 / sigma[i]
		}
	}
	return abi.OK
}

// LogNormConst is C = −Σᵢ log(σᵢ√(2π)) over the non-missing values, the
// constant of log L = C − ½‖r‖². It is NaN if a used σ is not finite and > 0.
func LogNormConst(obs, sigma []float64) float64 {
	c := 0.0
	var logSigma sumLog
	for i := range obs {
		if math.IsNaN(obs[i]) {
			continue
		}
		if !(sigma[i] > 0) || math.IsInf(sigma[i], 1) {
			return math.NaN()
		}
		logSigma.add(sigma[i])
		c -= logSqrt2Pi
	}
	return c - logSigma.value()
}
