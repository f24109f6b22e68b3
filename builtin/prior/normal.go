package prior

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// logSqrt2Pi is ½·ln(2π), the log normalising constant of the standard
// normal density.
const logSqrt2Pi = 0.91893853320467274178032973640561764

// asymptoticBelow is the z below which StdNormalLogCDF switches from erfc to
// the asymptotic series: erfc(−z/√2) is still a normal float64 here (it
// underflows near z = −37.5), and at |z| ≥ 37 ten terms of the series are
// exact to rounding.
const asymptoticBelow = -37.0

// StdNormalLogPdf is log φ(z) = −z²/2 − ½ln(2π).
func StdNormalLogPdf(z float64) float64 { return -0.5*z*z - logSqrt2Pi }

// StdNormalCDF is Φ(z) = ½·erfc(−z/√2) (Abramowitz & Stegun 1964,
// Sec. 26.2; gonum's distuv.UnitNormal.CDF), accurate in relative terms in
// the lower tail.
func StdNormalCDF(z float64) float64 { return distuv.UnitNormal.CDF(z) }

// StdNormalLogCDF is log Φ(z), accurate in relative terms for every z:
// log1p(−½erfc(z/√2)) for z ≥ 0, log(½erfc(−z/√2)) down to z = −37, and
// below that the asymptotic series (Abramowitz & Stegun 1964, Eq. 26.2.12)
//
//	Φ(z) = φ(z)/(−z) · Σₖ (−1)ᵏ (2k−1)!!/z²ᵏ,
//
// taken in log form so that it does not underflow.
func StdNormalLogCDF(z float64) float64 {
	switch {
	case math.IsNaN(z):
		return math.NaN()
	case z >= 0:
		return math.Log1p(-0.5 * math.Erfc(z/math.Sqrt2))
	case z >= asymptoticBelow:
		return math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
	case math.IsInf(z, -1):
		return math.Inf(-1)
	}
	// A&S 26.2.12; the terms fall by (2k+1)/z² ≤ 0.016 each at |z| ≥ 37.
	z2 := z * z
	s, term := 1.0, 1.0
	for k := 1; k <= 10; k++ {
		term *= -float64(2*k-1) / z2
		s += term
	}
	return -0.5*z2 - logSqrt2Pi - math.Log(-z) + math.Log(s)
}

// AS 241 (Wichura 1988) PPND16 coefficients: central region |p − ½| ≤ 0.425
// (a, b), intermediate tail r = √(−log q) ≤ 5 (c, d), far tail r > 5 (e, f),
// highest power first.
var (
	as241A = [8]float64{2509.0809287301226727, 33430.575583588128105, 67265.770927008700853, 45921.953931549871457, 13731.693765509461125, 1971.5909503065514427, 133.14166789178437745, 3.387132872796366608}
	as241B = [8]float64{5226.495278852854561, 28729.085735721942674, 39307.89580009271061, 21213.794301586595867, 5394.1960214247511077, 687.1870074920579083, 42.313330701600911252, 1.0}
	as241C = [8]float64{7.7454501427834140764e-4, 0.0227238449892691845833, 0.24178072517745061177, 1.27045825245236838258, 3.64784832476320460504, 5.7694972214606914055, 4.6303378461565452959, 1.42343711074968357734}
	as241D = [8]float64{1.05075007164441684324e-9, 5.475938084995344946e-4, 0.0151986665636164571966, 0.14810397642748007459, 0.68976733498510000455, 1.6763848301838038494, 2.05319162663775882187, 1.0}
	as241E = [8]float64{2.01033439929228813265e-7, 2.71155556874348757815e-5, 0.0012426609473880784386, 0.026532189526576123093, 0.29656057182850489123, 1.7848265399172913358, 5.4637849111641143699, 6.6579046435011037772}
	as241F = [8]float64{2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5, 7.868691311456132591e-4, 0.0148753612908506148525, 0.13692988092273580531, 0.59983220655588793769, 1.0}
)

func horner(c *[8]float64, x float64) float64 {
	s := c[0]
	for _, v := range c[1:] {
		s = s*x + v
	}
	return s
}

// as241Central is Φ⁻¹(½ + q) for |q| ≤ 0.425 (AS 241, region 1). Taking
// q = p − ½ rather than p keeps full relative accuracy near the median.
func as241Central(q float64) float64 {
	r := 0.180625 - q*q
	return q * horner(&as241A, r) / horner(&as241B, r)
}

// as241Tail is −Φ⁻¹(p) for a lower-tail p < 0.075, given r = √(−log p)
// (AS 241, regions 2 and 3). AS 241 is designed for r ≤ 27.
func as241Tail(r float64) float64 {
	if r <= 5 {
		r -= 1.6
		return horner(&as241C, r) / horner(&as241D, r)
	}
	r -= 5
	return horner(&as241E, r) / horner(&as241F, r)
}

// StdNormalQuantile is Φ⁻¹(p), the standard normal quantile: gonum's
// distuv.UnitNormal.Quantile, which is AS 241 (Wichura 1988, PPND16;
// mathext.NormalQuantile), about 16 significant digits down to the
// smallest subnormal p. It returns −Inf at 0, +Inf at 1 and NaN outside
// [0, 1] (where gonum panics). StdNormalQuantileLog keeps its own AS 241
// for a probability given by its logarithm, which gonum does not take.
func StdNormalQuantile(p float64) float64 {
	if !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	return distuv.UnitNormal.Quantile(p)
}

// StdNormalQuantileLog is Φ⁻¹(exp(lp)) for a log probability lp ≤ 0; it
// reaches probabilities far below the float64 range (lp = −10⁶ gives
// z ≈ −1414.2). For r = √(−lp) ≤ 26 it is AS 241; beyond, AS 241's value
// refined by Newton's method on log Φ(z) = lp, whose derivative is
// φ(z)/Φ(z).
func StdNormalQuantileLog(lp float64) float64 {
	switch {
	case math.IsNaN(lp) || lp > 0:
		return math.NaN()
	case lp == 0:
		return math.Inf(1)
	case math.IsInf(lp, -1):
		return math.Inf(-1)
	}
	if lp > math.Log(0.075) { // central or upper half: AS 241 on p itself
		p := math.Exp(lp)
		if q := p - 0.5; math.Abs(q) <= 0.425 {
			return as241Central(q)
		}
		return StdNormalQuantile(p)
	}
	r := math.Sqrt(-lp)
	z := -as241Tail(r)
	if r <= 26 {
		return z
	}
	// Newton on f(z) = log Φ(z) − lp, f′(z) = exp(log φ(z) − log Φ(z)).
	// f is increasing and concave, so the iteration converges monotonically.
	for range 50 {
		lc := StdNormalLogCDF(z)
		step := (lc - lp) / math.Exp(StdNormalLogPdf(z)-lc)
		z -= step
		if math.Abs(step) <= 1e-15*math.Abs(z) {
			break
		}
	}
	return z
}

// narrow reports whether an interval of half-width h about m is short
// enough for intPhiRel's series: 2h(1 + |m|) < 1 bounds every term by
// 2^(−2k)/(2k+1)!. Outside it, differences of log Φ lose at most about
// ε·|log Φ|/(2h) ≈ 1e-13.
func narrow(m, h float64) bool { return 2*h*(1+math.Abs(m)) < 1 }

// intPhiRel is ∫φ(x)dx / φ(ref) over [m − h, m + h], for a narrow interval,
// by the Taylor series of φ about the midpoint m:
//
//	∫ₘ₋ₕ^{m+h} φ = 2h·φ(m)·Σₖ He₂ₖ(m)·h²ᵏ/(2k+1)!
//
// since φ⁽ⁿ⁾(m) = (−1)ⁿHeₙ(m)φ(m) with the probabilists' Hermite
// polynomials He₀ = 1, He₁ = m, Heₙ₊₁ = m·Heₙ − n·Heₙ₋₁ (Abramowitz &
// Stegun 1964, Sec. 26.2 and ch. 22). Scaling by φ(ref) keeps it finite
// far in the tails. Taking the half-width h directly, rather than b − a,
// avoids the cancellation of Φ(b) − Φ(a) (and of b − a) when b ≈ a.
func intPhiRel(m, h, ref float64) float64 {
	h2 := h * h
	heA, heB := 1.0, m // He_{n−1}, He_n with n = 1
	sum, pow, fact := 1.0, 1.0, 1.0
	for k := 1; k <= 30; k++ {
		n := float64(2*k - 1)
		heA, heB = heB, m*heB-n*heA     // (He_{2k−1}, He_{2k})
		heA, heB = heB, m*heB-(n+1)*heA // (He_{2k}, He_{2k+1})
		pow *= h2
		fact *= float64(2*k) * float64(2*k+1)
		term := heA * pow / fact
		sum += term
		if math.Abs(term) <= 1e-17*math.Abs(sum) {
			break
		}
	}
	return 2 * h * math.Exp(StdNormalLogPdf(m)-StdNormalLogPdf(ref)) * sum
}

// narrowQuantile is the offset t ∈ [0, 2h] from the lower end a = m − h of
// a narrow interval at which ∫ₐ^{a+t}φ = u·∫ₐ^{a+2h}φ: Newton's method from
// t = 2hu, the integrals by intPhiRel (the pdf is nearly constant there, so
// it converges in a few steps).
func narrowQuantile(m, h, u float64) float64 {
	a := m - h
	target := u * intPhiRel(m, h, m)
	t := 2 * h * u
	for range 20 {
		step := (intPhiRel(a+0.5*t, 0.5*t, m) - target) / math.Exp(StdNormalLogPdf(a+t)-StdNormalLogPdf(m))
		t = math.Max(0, math.Min(2*h, t-step))
		if math.Abs(step) <= 1e-16*h {
			break
		}
	}
	return t
}

// logDiffCDF is log(Φ(b) − Φ(a)) for a < b, accurate wherever the interval
// lies: a narrow interval by intPhiRel (TruncNormal passes those with a
// more exact width); otherwise Φ(b) − Φ(a) =
// Φ(−a) − Φ(−b) moves an upper-tail interval to the lower tail, where
// log Φ is accurate, and log(Φ(b) − Φ(a)) = log Φ(b) +
// log(1 − exp(log Φ(a) − log Φ(b))).
func logDiffCDF(a, b float64) float64 {
	if m, h := 0.5*(a+b), 0.5*(b-a); narrow(m, h) {
		return StdNormalLogPdf(m) + math.Log(intPhiRel(m, h, m))
	}
	if a >= 0 {
		a, b = -b, -a
	}
	if b <= 0 {
		la, lb := StdNormalLogCDF(a), StdNormalLogCDF(b)
		return lb + math.Log(-math.Expm1(la-lb))
	}
	// a < 0 < b: (½ − Φ(a)) + (Φ(b) − ½), both by erf, exact near 0.
	return math.Log(0.5*math.Erf(-a/math.Sqrt2) + 0.5*math.Erf(b/math.Sqrt2))
}

// truncStdQuantile is the u-quantile of the standard normal truncated to
// [a, b], Φ⁻¹(Φ(a) + u(Φ(b) − Φ(a))) (inverse transform; Johnson, Kotz &
// Balakrishnan 1994, ch. 13), evaluated so that it stays accurate
// whatever the interval:
// (TruncNormal handles narrow intervals by narrowQuantile first):
//   - a ≥ 0: by symmetry, −(the (1−u)-quantile of [−b, −a]);
//   - b ≤ 0 (lower tail): in log space, p = Φ(b)·(e^(−D) + u(1 − e^(−D)))
//     with D = log Φ(b) − log Φ(a), then Φ⁻¹ from log p;
//   - a < 0 < b: p − ½ = u(Φ(b) − Φ(a)) − (½ − Φ(a)) from erf, then AS 241's
//     central region on p − ½, or its tail on p or 1 − p.
func truncStdQuantile(a, b, u float64) float64 {
	if a >= 0 {
		return -truncStdQuantile(-b, -a, 1-u)
	}
	if b <= 0 {
		la, lb := StdNormalLogCDF(a), StdNormalLogCDF(b)
		lp := lb + math.Log(math.Exp(la-lb)+u*(-math.Expm1(la-lb)))
		return StdNormalQuantileLog(lp)
	}
	lower := 0.5 * math.Erf(-a/math.Sqrt2) // ½ − Φ(a)
	upper := 0.5 * math.Erf(b/math.Sqrt2)  // Φ(b) − ½
	mass := lower + upper
	q := u*mass - lower // p − ½
	switch {
	case math.Abs(q) <= 0.425:
		return as241Central(q)
	case q < 0:
		return StdNormalQuantile(StdNormalCDF(a) + u*mass)
	default: // 1 − p = Φ(−b) + (1 − u)(Φ(b) − Φ(a))
		return -StdNormalQuantile(StdNormalCDF(-b) + (1-u)*mass)
	}
}
