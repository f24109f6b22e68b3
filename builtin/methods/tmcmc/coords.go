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
	mapBox             // both bounds finite: identity in the middle, exponential margins (boxMap)
	mapLower           // lower bound only: θ = a + eᵘ
	mapUpper           // upper bound only: θ = b − eᵘ
)

// boxMargin is the width of each exponential margin of the box map, as a
// fraction of the bounds' width: the middle half of the range is mapped by
// the identity.
const boxMargin = 0.25

// tMax bounds the scaled distance t = (u − edge)/m into a margin, where a
// point on (or rounded onto) a bound has t = −∞: e^−36 = 2.3e-16, below the
// resolution of θ/m. It also bounds a one-sided map's |u|.
const tMax = 36

// coord is the map between one parameter θ and its proposal coordinate u.
type coord struct {
	kind   int
	lo, hi float64
	margin float64 // m = (hi − lo)/4 for mapBox
	midLo  float64 // lo + m, hi − m: the box map's identity part
	midHi  float64
}

// fullKind is the map of a parameter with bounds [lo, hi] in transform
// mode: by which bounds are finite.
func fullKind(lo, hi float64) int {
	switch fl, fh := !math.IsInf(lo, 0), !math.IsInf(hi, 0); {
	case fl && fh:
		return mapBox
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
	if kind == mapBox {
		c.margin = (hi - lo) * boxMargin
		c.midLo, c.midHi = lo+c.margin, hi-c.margin
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

// farSpreads: in transform mode, a parameter with one finite bound whose
// whole population lies more than farSpreads population standard
// deviations inside it is proposed in θ itself for the stage (identity
// map). A proposal step is β·sd with β ≲ 2, so leaving the bound from there
// takes a > 5σ step (probability < 10⁻⁶); such a proposal is rejected,
// which is exact. This spares the one-sided map's exponential where the
// bound is not near (docs/PERFORMANCE.md, "TMCMC overhead"). A box-bounded
// parameter keeps its box map, which costs nothing in its middle half.
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
		if full == mapBox {
			kinds[i] = full
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

// clampT keeps t within ±tMax (and finite).
func clampT(t float64) float64 {
	if t > tMax {
		return tMax
	}
	if t < -tMax {
		return -tMax
	}
	return t
}

// The box map (mapBox) of [a, b], m = (b − a)/4: θ = u on [a + m, b − m],
// and exponential margins that never reach the bounds,
//
//	θ = a + m·e^{t},  t = (u − (a + m))/m < 0,
//	θ = b − m·e^{−t}, t = (u − (b − m))/m > 0,
//
// so dθ/du = 1 in the middle and e^{±t} in the margins: C¹, monotone,
// onto (a, b), log|dθ/du| = −|t| there (no logarithm to take), and a
// uniform θ has exponential tails in u (a random walk mixes there, unlike
// in a heavy-tailed map). Only a coordinate in a margin costs an
// exponential; the logit map costs one per coordinate and proposal.

// toU is u = T(θ): the box map's inverse, log(θ − a) or log(b − θ).
func (c coord) toU(theta float64) float64 {
	switch c.kind {
	case mapBox:
		m := c.margin
		switch {
		case theta < c.lo+m:
			return c.lo + m + m*clampT(math.Log((theta-c.lo)/m))
		case theta > c.hi-m:
			return c.hi - m - m*clampT(math.Log((c.hi-theta)/m))
		}
		return theta
	case mapLower:
		return clampT(math.Log(theta - c.lo))
	case mapUpper:
		return clampT(math.Log(c.hi - theta))
	}
	return theta
}

// fromU is θ = T⁻¹(u) and log|dθ/du| (the log-Jacobian the target density
// in u picks up: π_u(u) = π(T⁻¹(u))·|dθ/du|); θ is clamped into [a, b]
// against rounding.
func (c coord) fromU(u float64) (theta, logJ float64) {
	switch c.kind {
	case mapBox:
		m := c.margin
		switch {
		case u < c.lo+m:
			t := (u - (c.lo + m)) / m
			theta = c.lo + m*math.Exp(t)
			if theta < c.lo {
				theta = c.lo
			}
			return theta, t
		case u > c.hi-m:
			t := (u - (c.hi - m)) / m
			theta = c.hi - m*math.Exp(-t)
			if theta > c.hi {
				theta = c.hi
			}
			return theta, -t
		}
		return u, 0
	case mapLower:
		return c.lo + math.Exp(u), u
	case mapUpper:
		return c.hi - math.Exp(u), u
	}
	return u, 0
}

// mapPoint writes θ = T⁻¹(u) for a whole point and returns log|dθ/du|,
// the sum over parameters.
func mapPoint(cs []coord, u, theta []float64) float64 {
	logJ := 0.0
	for i := range cs {
		c := &cs[i]
		v := u[i]
		// The identity part, tested inline: most coordinates are there.
		if c.kind == mapIdentity || (c.kind == mapBox && v >= c.midLo && v <= c.midHi) {
			theta[i] = v
			continue
		}
		t, lj := c.fromU(v)
		theta[i] = t
		logJ += lj
	}
	return logJ
}
