package tmcmc

import "math"

// Proposal modes, in the order of the proposal setting's Choices.
const (
	// Transform proposes in unconstrained coordinates u = T(θ) and puts
	// log|dθ/du| into the Metropolis ratio, so every proposal is inside
	// the prior's support.
	Transform = 0
	// Reject proposes in θ itself and rejects what leaves the bounds (the
	// paper's algorithm).
	Reject = 1
)

// ProposalNames are the proposal setting's choices.
var ProposalNames = []string{"transform", "reject"}

// Kinds of coordinate map, per parameter.
const (
	mapIdentity = iota // no finite bound: u = θ
	mapLogit           // both bounds finite: θ = a + (b − a)·σ(u)
	mapLower           // lower bound only: θ = a + eᵘ
	mapUpper           // upper bound only: θ = b − eᵘ
)

// uMax bounds |u| for a point on (or rounded onto) a bound, where T(θ)
// is ±∞: σ(±36) differs from 0 or 1 by 2.3e-16, below the resolution of
// θ/(b − a), and e^±36 keeps a one-sided map finite.
const uMax = 36

// coord is the map between one parameter θ and its proposal coordinate u.
type coord struct {
	kind     int
	lo, hi   float64
	logWidth float64 // log(hi − lo) for mapLogit
}

// fullKind is the map of a parameter with bounds [lo, hi] in transform
// mode: by which bounds are finite.
func fullKind(lo, hi float64) int {
	switch fl, fh := !math.IsInf(lo, 0), !math.IsInf(hi, 0); {
	case fl && fh:
		return mapLogit
	case fl:
		return mapLower
	case fh:
		return mapUpper
	}
	return mapIdentity
}

// newCoord is the map of the given kind for bounds [lo, hi].
func newCoord(lo, hi float64, kind int) coord {
	c := coord{kind: kind, lo: lo, hi: hi}
	if kind == mapLogit {
		c.logWidth = math.Log(hi - lo)
	}
	return c
}

// coords returns the maps of a problem with the given bounds: identity
// for every parameter in Reject mode, otherwise fullKind.
func coords(lower, upper []float64, mode int) []coord {
	cs := make([]coord, len(lower))
	for i := range cs {
		k := mapIdentity
		if mode == Transform {
			k = fullKind(lower[i], upper[i])
		}
		cs[i] = newCoord(lower[i], upper[i], k)
	}
	return cs
}

// farSpreads: in transform mode, a parameter whose whole population lies
// more than farSpreads population standard deviations inside each finite
// bound is proposed in θ itself for the stage (identity map). A proposal
// step is β·sd with β ≲ 2, so leaving the bounds from there takes a > 5σ
// step (probability < 10⁻⁶); such a proposal is rejected, which is exact.
// This spares the exponential of the logit map where no bound is near
// (docs/PERFORMANCE.md, "TMCMC overhead").
const farSpreads = 10

// stageKinds chooses each parameter's map for a stage from the population
// x (N×d): fullKind, or the identity for a parameter far from its bounds
// (farSpreads) or in Reject mode.
func stageKinds(x []float64, n, d int, lower, upper []float64, mode int, kinds []int) {
	for i := range d {
		kinds[i] = mapIdentity
		full := fullKind(lower[i], upper[i])
		if mode == Reject || full == mapIdentity {
			continue
		}
		lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
		for k := range n {
			v := x[k*d+i]
			lo, hi, mean = math.Min(lo, v), math.Max(hi, v), mean+v
		}
		mean /= float64(n)
		ss := 0.0
		for k := range n {
			v := x[k*d+i] - mean
			ss += v * v
		}
		margin := farSpreads * math.Sqrt(ss/float64(n))
		if !(margin > 0) || !(lo-lower[i] > margin) || !(upper[i]-hi > margin) {
			kinds[i] = full // near a bound (or no spread to judge by)
		}
	}
}

// clampU keeps u finite and within ±uMax.
func clampU(u float64) float64 {
	if u > uMax {
		return uMax
	}
	if u < -uMax {
		return -uMax
	}
	return u
}

// toU is u = T(θ): logit((θ − a)/(b − a)), log(θ − a) or log(b − θ).
func (c coord) toU(theta float64) float64 {
	switch c.kind {
	case mapLogit:
		return clampU(math.Log(theta-c.lo) - math.Log(c.hi-theta))
	case mapLower:
		return clampU(math.Log(theta - c.lo))
	case mapUpper:
		return clampU(math.Log(c.hi - theta))
	}
	return theta
}

// fromU is θ = T⁻¹(u) and log|dθ/du| (the log-Jacobian the target density
// in u picks up: π_u(u) = π(T⁻¹(u))·|dθ/du|). For the logit map
// dθ/du = (b − a)·σ(u)·(1 − σ(u)) = (b − a)·e/(1 + e)², e = e^−|u|, so
// log|dθ/du| = log(b − a) − |u| − 2·log(1 + e); θ is clamped into [a, b]
// against rounding.
func (c coord) fromU(u float64) (theta, logJ float64) {
	theta, logJ, f := c.fromUFactor(u)
	return theta, logJ - 2*math.Log(f)
}

// fromUFactor is fromU with the logit map's −2·log(1 + e) term left out
// and returned as the factor f = 1 + e ∈ (1, 2] (1 for the other maps):
// mapPoint multiplies the factors of all parameters and takes one log.
func (c coord) fromUFactor(u float64) (theta, logJ, f float64) {
	switch c.kind {
	case mapLogit:
		au := math.Abs(u)
		e := math.Exp(-au)
		s := 1 / (1 + e) // σ(|u|); σ(u) = 1 − σ(−u) evaluated without cancellation
		if u < 0 {
			s = e * s
		}
		theta = c.lo + (c.hi-c.lo)*s
		if theta < c.lo { // rounding; plain comparisons, cheaper than math.Min/Max
			theta = c.lo
		} else if theta > c.hi {
			theta = c.hi
		}
		return theta, c.logWidth - au, 1 + e
	case mapLower:
		return c.lo + math.Exp(u), u, 1
	case mapUpper:
		return c.hi - math.Exp(u), u, 1
	}
	return u, 0, 1
}

// mapPoint writes θ = T⁻¹(u) for a whole point and returns log|dθ/du|,
// the sum over parameters, with one logarithm for all the logit factors
// (their product is at most 2^d, finite for d < 1024; for more it is
// taken in blocks).
func mapPoint(cs []coord, u, theta []float64) float64 {
	logJ, prod := 0.0, 1.0
	for i, c := range cs {
		if c.kind == mapIdentity {
			theta[i] = u[i]
			continue
		}
		t, lj, f := c.fromUFactor(u[i])
		theta[i] = t
		logJ += lj
		prod *= f
		if prod > 1e300 {
			logJ -= 2 * math.Log(prod)
			prod = 1
		}
	}
	return logJ - 2*math.Log(prod)
}
