// Command studentt is a Student-t likelihood served as a kinfer WebAssembly
// plugin through the Go SDK: a heavy-tailed alternative to the Gaussian
// likelihood for data with outliers.
//
// For every observed value (NaN observations are skipped, so a dataset may
// have holes) with model output y, observation o and scale σ (the sigma
// buffer: the dataset's σ columns or the study's per-output constant),
// z = (o − y)/σ and
//
//	log p = lgamma((ν+1)/2) − lgamma(ν/2) − ½·log(νπ) − log σ − (ν+1)/2 · log(1 + z²/ν)
//
// the log density of the location-scale Student-t distribution with ν
// degrees of freedom (e.g. Gelman et al., Bayesian Data Analysis, 3rd ed.,
// Appendix A, "Student-t"). The log-likelihood is the sum over values.
// Setting: nu (ν > 0, default 4). Capability grad_y:
// ∂log p/∂y = (ν+1)·z / ((ν + z²)·σ).
//
// Build (repository root): go run ./cmd/kinfer build plugins/go/studentt
package main

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/likelihood"
)

// Spec is the plugin's self-description.
var Spec = abi.Spec{
	Kind:    abi.KindLikelihood,
	Name:    "studentt",
	Version: "1.0.0",
	Doc:     "Student-t log-likelihood with nu degrees of freedom and scale sigma; NaN observations are skipped",
	Settings: []abi.Setting{
		{Name: "nu", Default: 4, Doc: "degrees of freedom nu > 0 (1 is Cauchy; large nu tends to the Gaussian)"},
	},
	Capabilities: []abi.Capability{abi.CapGradY, abi.CapBatch},
}

// StudentT is the likelihood with ν fixed.
type StudentT struct {
	Nu float64
	c0 float64 // lgamma((ν+1)/2) − lgamma(ν/2) − ½·log(νπ)
}

// New builds the likelihood from its settings (nu).
func New(settings []float64) (abi.Likelihood, error) {
	if len(settings) != 1 {
		return nil, fmt.Errorf("studentt: want 1 setting (nu), got %d", len(settings))
	}
	nu := settings[0]
	if !(nu > 0) || math.IsInf(nu, 1) {
		return nil, fmt.Errorf("studentt: nu must be finite and > 0, got %g", nu)
	}
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	return &StudentT{Nu: nu, c0: a - b - 0.5*math.Log(nu*math.Pi)}, nil
}

// Spec implements abi.Likelihood.
func (*StudentT) Spec() abi.Spec { return Spec }

// LogLikelihood implements abi.Likelihood. The values are independent, so
// m (outputs per row) only checks the shape.
func (t *StudentT) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	return t.LogLikelihoodGrad(m, y, obs, sigma, nil)
}

// LogLikelihoodGrad implements abi.GradY; gy may be nil (value only).
// Skipped observations get a zero gradient.
func (t *StudentT) LogLikelihoodGrad(m int, y, obs, sigma, gy []float64) (float64, abi.Status) {
	if m < 1 || len(y)%m != 0 || len(obs) != len(y) || len(sigma) != len(y) || (gy != nil && len(gy) != len(y)) {
		return math.Inf(-1), abi.Invalid
	}
	nu := t.Nu
	var sum float64
	for i, o := range obs {
		if math.IsNaN(o) {
			if gy != nil {
				gy[i] = 0
			}
			continue
		}
		s := sigma[i]
		if !(s > 0) || math.IsInf(s, 1) {
			return math.Inf(-1), abi.Invalid
		}
		z := (o - y[i]) / s
		sum += t.c0 - math.Log(s) - 0.5*(nu+1)*math.Log1p(z*z/nu)
		if gy != nil {
			gy[i] = (nu + 1) * z / ((nu + z*z) * s)
		}
	}
	return sum, abi.OK
}

func init() { likelihood.ServeNew(Spec, New) }

func main() {}
