package conformance

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/prior"
)

// Case is an analytic problem: a target with its exact posterior mean and
// variance (per parameter; the posteriors here are Gaussian with diagonal
// covariance) and its exact log evidence log Z = log ∫ prior·likelihood.
type Case struct {
	Name     string
	Doc      string
	Target   Target
	PostMean []float64
	PostVar  []float64
	LogZ     float64
}

const logSqrt2Pi = 0.91893853320467274178032973640561764 // ½·ln(2π)

// logNormal is log N(x; m, s²).
func logNormal(x, m, s float64) float64 {
	z := (x - m) / s
	return -0.5*z*z - math.Log(s) - logSqrt2Pi
}

func mustDist(d prior.Dist, err error) prior.Dist {
	if err != nil {
		panic(err)
	}
	return d
}

func params(d int, lo, hi float64) []abi.Param {
	ps := make([]abi.Param, d)
	for i := range ps {
		ps[i] = abi.Param{Name: fmt.Sprintf("theta%d", i), Lower: lo, Upper: hi}
	}
	return ps
}

func repeat(d int, v float64) []float64 {
	out := make([]float64, d)
	for i := range out {
		out[i] = v
	}
	return out
}

// StdNormal1D is the moment check of docs/REFERENCES.md ("Moment check
// for any MCMC sampler"): the target N(0, 1), written as a uniform(−10, 10)
// prior times a normalised N(0; θ, 1) likelihood so that starting points
// are spread far wider than the posterior. log Z = log(1/20) +
// log(Φ(10) − Φ(−10)) = −ln 20 to 1e-23.
func StdNormal1D() Case {
	return Case{
		Name: "stdnormal-1d",
		Doc:  "N(0,1) target under a uniform(-10,10) prior (REFERENCES.md moment check)",
		Target: Target{
			Params:     params(1, -10, 10),
			Prior:      []prior.Dist{mustDist(prior.NewUniform(-10, 10))},
			LogLik:     func(th []float64) (float64, abi.Status) { return logNormal(th[0], 0, 1), abi.OK },
			GradLogLik: func(th, g []float64) { g[0] = -th[0] },
			Residuals:  func(th []float64) []float64 { return []float64{th[0]} },
			Jacobian:   func([]float64) []float64 { return []float64{1} },
		},
		PostMean: []float64{0},
		PostVar:  []float64{1},
		LogZ:     -math.Log(20),
	}
}

// Conflict1D is REFERENCES.md's 1-D prior–data conflict: θ ~ N(0, 1),
// L(θ) = N(5; θ, 0.2²). Conjugate normal (BDA3 Sec. 2.5): posterior
// precision 1 + 1/0.04 = 26, mean (5/0.04)/26 = 4.80769, sd 0.19612;
// evidence N(5; 0, 1 + 0.04), log Z = −12.95778. Bounds [−10, 10] cut
// nothing of consequence.
func Conflict1D() Case {
	const y, s = 5.0, 0.2
	return Case{
		Name: "conflict-1d",
		Doc:  "prior N(0,1), likelihood N(5; theta, 0.2^2): posterior far in the prior's tail",
		Target: Target{
			Params:     params(1, -10, 10),
			Prior:      []prior.Dist{mustDist(prior.NewNormal(0, 1))},
			LogLik:     func(th []float64) (float64, abi.Status) { return logNormal(y, th[0], s), abi.OK },
			GradLogLik: func(th, g []float64) { g[0] = (y - th[0]) / (s * s) },
			Residuals:  func(th []float64) []float64 { return []float64{(th[0] - y) / s} },
			Jacobian:   func([]float64) []float64 { return []float64{1 / s} },
		},
		PostMean: []float64{(y / (s * s)) / (1 + 1/(s*s))},
		PostVar:  []float64{1 / (1 + 1/(s*s))},
		LogZ:     logNormal(y, 0, math.Sqrt(1+s*s)),
	}
}

// Conjugate2D is REFERENCES.md's 2-D conjugate problem: θ ~ N(0, 9·I₂),
// y ~ N(θ, I), y = (1, −0.5). Posterior mean 9/10·y = (0.9, −0.45),
// variance 9/10 = 0.9 each; log Z = Σᵢ log N(yᵢ; 0, 10) = −4.20296.
func Conjugate2D() Case {
	y := []float64{1, -0.5}
	const tau2 = 9.0
	c := Case{
		Name: "conjugate-2d",
		Doc:  "prior N(0, 9 I), one observation y = (1, -0.5) with unit noise",
		Target: Target{
			Params: params(2, -30, 30),
			Prior:  []prior.Dist{mustDist(prior.NewNormal(0, 3)), mustDist(prior.NewNormal(0, 3))},
			LogLik: func(th []float64) (float64, abi.Status) {
				return logNormal(y[0], th[0], 1) + logNormal(y[1], th[1], 1), abi.OK
			},
			GradLogLik: func(th, g []float64) { g[0], g[1] = y[0]-th[0], y[1]-th[1] },
			Residuals:  func(th []float64) []float64 { return []float64{th[0] - y[0], th[1] - y[1]} },
			Jacobian:   func([]float64) []float64 { return []float64{1, 0, 0, 1} },
		},
	}
	for _, yi := range y {
		c.PostMean = append(c.PostMean, tau2/(tau2+1)*yi)
		c.PostVar = append(c.PostVar, tau2/(tau2+1))
		c.LogZ += logNormal(yi, 0, math.Sqrt(tau2+1))
	}
	return c
}

// Gauss10D is REFERENCES.md's d-dimensional Gaussian with d = 10: prior
// N(0, I_d), unnormalised likelihood exp(−‖θ − μ‖²/(2s²)), s = 0.5,
// μ = 0.5·1. Posterior precision 1 + 1/s² = 5: mean (μ/s²)/5 = 0.4,
// variance 0.2; log Z = (d/2)·ln(s²/(1+s²)) − ‖μ‖²/(2(1+s²)) = −9.04719.
func Gauss10D() Case {
	const d, s, mu = 10, 0.5, 0.5
	c := Case{
		Name: "gauss-10d",
		Doc:  "prior N(0, I_10), unnormalised likelihood exp(-|theta - 0.5|^2 / (2*0.25))",
		Target: Target{
			Params: params(d, -10, 10),
			LogLik: func(th []float64) (float64, abi.Status) {
				ss := 0.0
				for _, v := range th {
					ss += (v - mu) * (v - mu)
				}
				return -ss / (2 * s * s), abi.OK
			},
			GradLogLik: func(th, g []float64) {
				for i, v := range th {
					g[i] = -(v - mu) / (s * s)
				}
			},
			Residuals: func(th []float64) []float64 {
				r := make([]float64, d)
				for i, v := range th {
					r[i] = (v - mu) / s
				}
				return r
			},
			Jacobian: func([]float64) []float64 {
				j := make([]float64, d*d)
				for i := range d {
					j[i*d+i] = 1 / s
				}
				return j
			},
		},
		PostMean: repeat(d, (mu/(s*s))/(1+1/(s*s))),
		PostVar:  repeat(d, 1/(1+1/(s*s))),
		LogZ:     d/2.0*math.Log(s*s/(1+s*s)) - d*mu*mu/(2*(1+s*s)),
	}
	for range d {
		c.Target.Prior = append(c.Target.Prior, mustDist(prior.NewNormal(0, 1)))
	}
	return c
}

// Cases is the problem table every method's conformance test runs over.
func Cases() []Case {
	return []Case{StdNormal1D(), Conflict1D(), Conjugate2D(), Gauss10D()}
}

// FailingTarget is a target for the failure paths of a method: N(0, 1) per
// coordinate (unnormalised exp(−θ²/2)) under a uniform(−10, 10)² prior,
// whose model fails for θ₀ < −3 or θ₁ < −3 (about 42 % of the prior), with
// θ₀'s upper bound at 8: prior draws fail, so start-up needs re-draws, and
// proposals fail or leave the bounds.
func FailingTarget() Target {
	u := mustDist(prior.NewUniform(-10, 10))
	return Target{
		Params: []abi.Param{{Name: "a", Lower: -10, Upper: 8}, {Name: "b", Lower: -10, Upper: 10}},
		Prior:  []prior.Dist{u, u},
		LogLik: func(th []float64) (float64, abi.Status) {
			if th[0] < -3 || th[1] < -3 {
				return 0, abi.Failed
			}
			return -0.5 * (th[0]*th[0] + th[1]*th[1]), abi.OK
		},
	}
}
