package softplus

import "math"

// Constants of the exponential (Cody & Waite 1980 reduction, Taylor
// polynomial) and of log1p (fdlibm's e_log1p.c, Sun Microsystems 1993; as
// Go's math.Log1p).
const (
	invLn2 = 1.4426950408889634         // 1/ln 2
	ln2Hi  = 6.93147180369123816490e-01 // ln 2 = ln2Hi + ln2Lo
	ln2Lo  = 1.90821492927058770002e-10
	minX   = -746.0 // exp(x) rounds to 0 below: the argument is clamped here

	lp1 = 6.666666666666735130e-01
	lp2 = 3.999999999940941908e-01
	lp3 = 2.857142874366239149e-01
	lp4 = 2.222219843214978396e-01
	lp5 = 1.818357216161805012e-01
	lp6 = 1.531383769920937332e-01
	lp7 = 1.479819860511658591e-01
)

// expTaylor holds 1/n!, n = 13 … 0: exp(r) for |r| ≤ ln2/2 by Horner's
// rule; the truncation error r¹⁴/14! is below 5e-18 relative.
var expTaylor = [14]float64{
	1.0 / 6227020800, 1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880,
	1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1, 1,
}

// expNeg is eˣ for x ≤ 0 (x NaN gives NaN): x is clamped to minX, k =
// round(x/ln 2) (ties to even), r = x − k·ln 2 by two fused multiply-adds,
// p = e^r by the Taylor polynomial, and eˣ = p·2ᵏ rounded once (what
// AVX-512's VSCALEFPD does; below the normal range as (p·2^(k+60))·2⁻⁶⁰,
// the first product exact).
func expNeg(x float64) float64 {
	if x < minX {
		x = minX
	}
	k := math.RoundToEven(float64(x * invLn2))
	r := math.FMA(-k, ln2Hi, x)
	r = math.FMA(-k, ln2Lo, r)
	p := expTaylor[0]
	for _, c := range expTaylor[1:] {
		p = math.FMA(p, r, c)
	}
	if math.IsNaN(k) {
		return x
	}
	ki := int64(k)
	if ki >= -1022 {
		return float64(p * math.Float64frombits(uint64(ki+1023)<<52))
	}
	return float64(float64(p*math.Float64frombits(uint64(ki+60+1023)<<52)) * 0x1p-60)
}

// log1pUnit is ln(1 + t) for 0 ≤ t ≤ 1 (NaN gives NaN), fdlibm's log1p
// reduced to that range: u = 1 + t and its exact rounding error c = t −
// (u − 1); u = 2ᵏ·m with k ∈ {0, 1}, m ∈ [√2/2, √2); f = m − 1 (exact),
// s = f/(2 + f), ln m = f − f²/2 + s·(f²/2 + R(s²)); ln(1 + t) = k·ln 2 +
// ln m + c/u. Every product-and-sum is one fused multiply-add or is
// rounded alone, in the order of the AVX-512 kernel.
func log1pUnit(t float64) float64 {
	u := 1 + t
	c := t - (u - 1)
	m, kf := u, 0.0
	if u >= math.Sqrt2 {
		m, kf = float64(u*0.5), 1
	}
	f := m - 1
	hfsq := float64(float64(0.5*f) * f)
	s := f / (2 + f)
	z := float64(s * s)
	q := math.FMA(lp7, z, lp6)
	q = math.FMA(q, z, lp5)
	q = math.FMA(q, z, lp4)
	q = math.FMA(q, z, lp3)
	q = math.FMA(q, z, lp2)
	q = math.FMA(q, z, lp1)
	R := float64(z * q)
	cu := c / u
	x := math.FMA(kf, ln2Lo, cu)
	y := math.FMA(s, hfsq+R, x)
	v := (hfsq - y) - f
	return math.FMA(kf, ln2Hi, -v)
}

// softplusGo is a(z) = ln(1 + eᶻ) = max(z, 0) + ln(1 + e^−|z|).
func softplusGo(z float64) float64 {
	m := 0.0
	if z > 0 {
		m = z
	}
	return m + log1pUnit(expNeg(-math.Abs(z)))
}

// sigmoidGo is a′(z) = 1/(1 + e⁻ᶻ) = n/(1 + t), t = e^−|z|, n = 1 for z ≥ 0
// and t for z < 0.
func sigmoidGo(z float64) float64 {
	t := expNeg(-math.Abs(z))
	n := t
	if z >= 0 {
		n = 1
	}
	return n / (1 + t)
}

// Softplus sets dst[i] = ln(1 + e^z[i]), len(dst) ≥ len(z).
func Softplus(dst, z []float64) {
	dst = dst[:len(z)]
	n := vectorSoftplus(dst, z)
	for i := n; i < len(z); i++ {
		dst[i] = softplusGo(z[i])
	}
}

// Sigmoid sets dst[i] = 1/(1 + e^−z[i]), len(dst) ≥ len(z).
func Sigmoid(dst, z []float64) {
	dst = dst[:len(z)]
	n := vectorSigmoid(dst, z)
	for i := n; i < len(z); i++ {
		dst[i] = sigmoidGo(z[i])
	}
}
