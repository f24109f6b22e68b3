package kriging

import (
	"fmt"
	"math"
)

// Correlation is the one-dimensional correlation c(θ, d) whose product
// over the coordinates is the correlation of two sites (Lophaven et al.
// 2002, Eq. 2.15 and Table 2.1: R(θ, w, x) = Π_j c(θ_j, w_j − x_j)).
type Correlation int

const (
	// Gaussian: c = exp(−θ d²) (DACE corrgauss).
	Gaussian Correlation = iota
	// Exponential: c = exp(−θ |d|) (DACE correxp).
	Exponential
	// Matern32: c = (1 + √3 t) exp(−√3 t), t = θ|d| (Matérn ν = 3/2 with
	// length scale 1/θ; Rasmussen & Williams 2006, Eq. 4.17).
	Matern32
	// Matern52: c = (1 + √5 t + 5t²/3) exp(−√5 t), t = θ|d| (ν = 5/2).
	Matern52
)

var corrNames = []string{"gaussian", "exponential", "matern32", "matern52"}

func (c Correlation) String() string {
	if c >= 0 && int(c) < len(corrNames) {
		return corrNames[c]
	}
	return fmt.Sprintf("Correlation(%d)", int(c))
}

// ParseCorrelation maps "gaussian", "exponential", "matern32", "matern52".
func ParseCorrelation(s string) (Correlation, error) {
	for i, n := range corrNames {
		if s == n {
			return Correlation(i), nil
		}
	}
	return 0, fmt.Errorf("kriging: unknown correlation %q (want one of %v)", s, corrNames)
}

const (
	sqrt3 = 1.7320508075688772
	sqrt5 = 2.23606797749979
)

// logCorr is log R(θ, d) = Σ_j log c(θ_j, d_j).
func (c Correlation) logCorr(theta, d []float64) float64 {
	var s float64
	switch c {
	case Gaussian:
		for j, t := range theta {
			s -= t * d[j] * d[j]
		}
	case Exponential:
		for j, t := range theta {
			s -= t * math.Abs(d[j])
		}
	case Matern32:
		for j, th := range theta {
			t := th * math.Abs(d[j])
			s += math.Log1p(sqrt3*t) - sqrt3*t
		}
	case Matern52:
		for j, th := range theta {
			t := th * math.Abs(d[j])
			s += math.Log1p(sqrt5*t+5*t*t/3) - sqrt5*t
		}
	}
	return s
}

// dLogTheta is θ_j ∂log c(θ_j, d_j)/∂θ_j, the derivative of log R with
// respect to log θ_j.
func (c Correlation) dLogTheta(theta, d float64) float64 {
	switch c {
	case Gaussian:
		return -theta * d * d
	case Exponential:
		return -theta * math.Abs(d)
	case Matern32:
		t := theta * math.Abs(d)
		return -3 * t * t / (1 + sqrt3*t)
	default: // Matern52
		t := theta * math.Abs(d)
		return -(5.0 / 3) * t * t * (1 + sqrt5*t) / (1 + sqrt5*t + 5*t*t/3)
	}
}

// dLogD is ∂log c(θ, d)/∂d (the exponential's is −θ·sign(d), undefined at
// d = 0 where 0 is returned).
func (c Correlation) dLogD(theta, d float64) float64 {
	switch c {
	case Gaussian:
		return -2 * theta * d
	case Exponential:
		switch {
		case d > 0:
			return -theta
		case d < 0:
			return theta
		}
		return 0
	case Matern32:
		t := theta * math.Abs(d)
		return -3 * theta * theta * d / (1 + sqrt3*t)
	default: // Matern52
		t := theta * math.Abs(d)
		return -(5.0 / 3) * theta * theta * d * (1 + sqrt5*t) / (1 + sqrt5*t + 5*t*t/3)
	}
}
