package prior

import (
	"fmt"
	"math"
	"strings"
)

// Dist is a univariate prior distribution.
type Dist interface {
	// LogPdf is the normalised log density; −Inf outside the support.
	LogPdf(x float64) float64
	// DLogPdf is d(log pdf)/dx inside the support. Outside it the log
	// density is the constant −∞ and DLogPdf returns 0.
	DLogPdf(x float64) float64
	// Quantile is the inverse CDF: the host draws by Quantile(u) with one
	// uniform u ∈ (0, 1) per draw. At u = 0 and u = 1 it returns the ends of
	// the support; outside [0, 1] (or NaN) it returns NaN.
	Quantile(u float64) float64
	// Support is the closed hull [lo, hi] of the support (±Inf when
	// unbounded).
	Support() (lo, hi float64)
	// String renders the distribution as a study writes it, e.g.
	// "uniform(2000, 9000)".
	String() string
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// badU reports whether u is outside [0, 1] or NaN.
func badU(u float64) bool { return !(u >= 0 && u <= 1) }

// Uniform is the continuous uniform distribution on [lo, hi]
// (Johnson, Kotz & Balakrishnan 1995, Vol. 2, ch. 26): pdf 1/(hi − lo).
type Uniform struct {
	lo, hi float64
	logPdf float64 // −log(hi − lo), computed once
	wide   bool    // hi − lo overflows float64
}

// NewUniform returns uniform(lo, hi); lo and hi must be finite, lo < hi.
func NewUniform(lo, hi float64) (Uniform, error) {
	if !finite(lo) || !finite(hi) || !(lo < hi) {
		return Uniform{}, fmt.Errorf("prior: uniform wants finite lo < hi, got [%g, %g]", lo, hi)
	}
	w := hi - lo
	if math.IsInf(w, 0) {
		// Wider than float64 holds (−1e308 to 1e308): the width's log
		// in halves (each draw and density was NaN; audit 4).
		return Uniform{lo: lo, hi: hi, logPdf: -(math.Log(hi/2-lo/2) + math.Ln2), wide: true}, nil
	}
	return Uniform{lo: lo, hi: hi, logPdf: -math.Log(w)}, nil
}

// LogPdf implements Dist: −log(hi − lo) on [lo, hi].
func (d Uniform) LogPdf(x float64) float64 {
	if !(x >= d.lo && x <= d.hi) {
		return math.Inf(-1)
	}
	return d.logPdf
}

// DLogPdf implements Dist: 0.
func (d Uniform) DLogPdf(float64) float64 { return 0 }

// Quantile implements Dist: lo + u(hi − lo), clamped to hi against rounding.
func (d Uniform) Quantile(u float64) float64 {
	if badU(u) {
		return math.NaN()
	}
	if d.wide {
		return math.Min((1-u)*d.lo+u*d.hi, d.hi)
	}
	return math.Min(d.lo+u*(d.hi-d.lo), d.hi)
}

// Support implements Dist.
func (d Uniform) Support() (lo, hi float64) { return d.lo, d.hi }

func (d Uniform) String() string { return fmt.Sprintf("uniform(%g, %g)", d.lo, d.hi) }

// Normal is the normal distribution N(mu, sd²) (Johnson, Kotz &
// Balakrishnan 1994, ch. 13): log pdf −log sd − ½ln 2π − (x − mu)²/(2sd²).
type Normal struct {
	mu, sd float64
	logSd  float64 // log sd, computed once
}

// NewNormal returns normal(mu, sd); mu finite, sd finite and > 0.
func NewNormal(mu, sd float64) (Normal, error) {
	if !finite(mu) || !finite(sd) || !(sd > 0) {
		return Normal{}, fmt.Errorf("prior: normal wants finite mu and sd > 0, got mu = %g, sd = %g", mu, sd)
	}
	return Normal{mu: mu, sd: sd, logSd: math.Log(sd)}, nil
}

// LogPdf implements Dist.
func (d Normal) LogPdf(x float64) float64 {
	return StdNormalLogPdf((x-d.mu)/d.sd) - d.logSd
}

// DLogPdf implements Dist: −(x − mu)/sd².
func (d Normal) DLogPdf(x float64) float64 { return -(x - d.mu) / (d.sd * d.sd) }

// Quantile implements Dist: mu + sd·Φ⁻¹(u).
func (d Normal) Quantile(u float64) float64 { return d.mu + d.sd*StdNormalQuantile(u) }

// Support implements Dist.
func (d Normal) Support() (lo, hi float64) { return math.Inf(-1), math.Inf(1) }

func (d Normal) String() string { return fmt.Sprintf("normal(%g, %g)", d.mu, d.sd) }

// LogNormal is the distribution of x = exp(y), y ~ N(mu, sigma²) (Johnson,
// Kotz & Balakrishnan 1994, ch. 14): mu and sigma are the mean and standard
// deviation of log x, and the log pdf is
// −log x − log sigma − ½ln 2π − (log x − mu)²/(2sigma²) for x > 0.
type LogNormal struct {
	mu, sigma float64
	logSigma  float64 // log sigma, computed once
}

// NewLogNormal returns lognormal(mu, sigma); mu finite, sigma finite > 0.
func NewLogNormal(mu, sigma float64) (LogNormal, error) {
	if !finite(mu) || !finite(sigma) || !(sigma > 0) {
		return LogNormal{}, fmt.Errorf("prior: lognormal wants finite mu and sigma > 0 (of log x), got mu = %g, sigma = %g", mu, sigma)
	}
	return LogNormal{mu: mu, sigma: sigma, logSigma: math.Log(sigma)}, nil
}

// LogPdf implements Dist.
func (d LogNormal) LogPdf(x float64) float64 {
	if !(x > 0) {
		return math.Inf(-1)
	}
	lx := math.Log(x)
	return StdNormalLogPdf((lx-d.mu)/d.sigma) - d.logSigma - lx
}

// DLogPdf implements Dist: −(1 + (log x − mu)/sigma²)/x for x > 0.
func (d LogNormal) DLogPdf(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return -(1 + (math.Log(x)-d.mu)/(d.sigma*d.sigma)) / x
}

// Quantile implements Dist: exp(mu + sigma·Φ⁻¹(u)).
func (d LogNormal) Quantile(u float64) float64 {
	return math.Exp(d.mu + d.sigma*StdNormalQuantile(u))
}

// Support implements Dist.
func (d LogNormal) Support() (lo, hi float64) { return 0, math.Inf(1) }

func (d LogNormal) String() string { return fmt.Sprintf("lognormal(%g, %g)", d.mu, d.sigma) }

// TruncNormal is N(mu, sd²) restricted to [lo, hi] (Johnson, Kotz &
// Balakrishnan 1994, ch. 13, truncated normal distributions). With α = (lo − mu)/sd and
// β = (hi − mu)/sd its log pdf on [lo, hi] is
//
//	log φ((x − mu)/sd) − log sd − log(Φ(β) − Φ(α)).
//
// lo may be −Inf and hi +Inf (one-sided truncation).
type TruncNormal struct {
	mu, sd, lo, hi float64
	alpha, beta    float64 // standardised bounds
	mid, half      float64 // standardised midpoint and half-width
	logZ           float64 // log(Φ(β) − Φ(α))
	logSdZ         float64 // log sd + logZ, computed once
}

// NewTruncNormal returns truncnormal(mu, sd, lo, hi); mu finite, sd finite
// and > 0, lo < hi (either may be infinite), and an interval that holds
// probability: the log normalising constant must be finite.
func NewTruncNormal(mu, sd, lo, hi float64) (TruncNormal, error) {
	if !finite(mu) || !finite(sd) || !(sd > 0) {
		return TruncNormal{}, fmt.Errorf("prior: truncnormal wants finite mu and sd > 0, got mu = %g, sd = %g", mu, sd)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || !(lo < hi) {
		return TruncNormal{}, fmt.Errorf("prior: truncnormal wants lo < hi, got [%g, %g]", lo, hi)
	}
	d := TruncNormal{mu: mu, sd: sd, lo: lo, hi: hi, alpha: (lo - mu) / sd, beta: (hi - mu) / sd}
	// The half-width from hi − lo directly keeps a narrow interval's width
	// (and so its mass) exact to rounding, which β − α would not.
	d.mid, d.half = (0.5*(lo+hi)-mu)/sd, 0.5*(hi-lo)/sd
	if narrow(d.mid, d.half) {
		d.logZ = StdNormalLogPdf(d.mid) + math.Log(intPhiRel(d.mid, d.half, d.mid))
	} else {
		d.logZ = logDiffCDF(d.alpha, d.beta)
	}
	if !finite(d.logZ) {
		return TruncNormal{}, fmt.Errorf("prior: truncnormal(%g, %g, %g, %g): the interval holds no computable probability (log mass %g)", mu, sd, lo, hi, d.logZ)
	}
	d.logSdZ = math.Log(sd) + d.logZ
	return d, nil
}

// centred reports whether the untruncated normal's mean lies in [lo, hi].
// Compared directly: with an infinite bound the standardised midpoint and
// half-width are both infinite, and |mid| ≤ half held for any mean (audit
// 9: a lognormal on a model's [−1e6, 1e6], cut to [0, 1e6], so to
// [−∞, log 1e6] in log x, passed as centred with 0 % of its mass inside).
func (d TruncNormal) centred() bool { return d.lo <= d.mu && d.mu <= d.hi }

// LogPdf implements Dist.
func (d TruncNormal) LogPdf(x float64) float64 {
	if !(x >= d.lo && x <= d.hi) {
		return math.Inf(-1)
	}
	return StdNormalLogPdf((x-d.mu)/d.sd) - d.logSdZ
}

// DLogPdf implements Dist: −(x − mu)/sd² inside [lo, hi].
func (d TruncNormal) DLogPdf(x float64) float64 {
	if !(x >= d.lo && x <= d.hi) {
		return 0
	}
	return -(x - d.mu) / (d.sd * d.sd)
}

// Quantile implements Dist: mu + sd·Φ⁻¹(Φ(α) + u(Φ(β) − Φ(α))), evaluated
// robustly in the tails (see truncStdQuantile) and for narrow intervals
// (narrowQuantile), and clamped to [lo, hi].
func (d TruncNormal) Quantile(u float64) float64 {
	switch {
	case badU(u):
		return math.NaN()
	case u == 0:
		return d.lo
	case u == 1:
		return d.hi
	}
	var x float64
	if narrow(d.mid, d.half) {
		x = d.lo + d.sd*narrowQuantile(d.mid, d.half, u)
	} else {
		x = d.mu + d.sd*truncStdQuantile(d.alpha, d.beta, u)
	}
	return math.Max(d.lo, math.Min(d.hi, x))
}

// Support implements Dist.
func (d TruncNormal) Support() (lo, hi float64) { return d.lo, d.hi }

func (d TruncNormal) String() string {
	return fmt.Sprintf("truncnormal(%g, %g, %g, %g)", d.mu, d.sd, d.lo, d.hi)
}

// Kinds are the prior kinds a study may use, in documentation order, with
// the numbers each wants.
var Kinds = []struct{ Name, Args string }{
	{"uniform", "[lo, hi]"},
	{"normal", "[mu, sd]"},
	{"lognormal", "[mu, sigma] (mean and sd of log x)"},
	{"truncnormal", "[mu, sd, lo, hi]"},
}

// FromTOML builds the prior a study writes as `name = { kind = [args...] }`,
// e.g. kind "truncnormal" with args [mu, sd, lo, hi]. Errors say what the
// kind wants and what it got; the caller adds the parameter name and file
// position.
func FromTOML(kind string, args []float64) (Dist, error) {
	nargs := map[string]int{"uniform": 2, "normal": 2, "lognormal": 2, "truncnormal": 4}
	n, ok := nargs[kind]
	if !ok {
		names := make([]string, len(Kinds))
		for i, k := range Kinds {
			names[i] = k.Name
		}
		return nil, fmt.Errorf("unknown prior kind %q (known: %s)", kind, strings.Join(names, ", "))
	}
	if len(args) != n {
		for _, k := range Kinds {
			if k.Name == kind {
				return nil, fmt.Errorf("%s wants %d numbers %s, got %d", kind, n, k.Args, len(args))
			}
		}
	}
	var (
		d   Dist
		err error
	)
	switch kind {
	case "uniform":
		d, err = NewUniform(args[0], args[1])
	case "normal":
		d, err = NewNormal(args[0], args[1])
	case "lognormal":
		d, err = NewLogNormal(args[0], args[1])
	case "truncnormal":
		d, err = NewTruncNormal(args[0], args[1], args[2], args[3])
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// MinMass is the least probability a prior may hold inside the model's
// bounds: below it the bounds, not the prior, decide where the draws fall,
// which is almost always a prior in other units (a lognormal given the
// mean and sd of x rather than of log x).
const MinMass = 1e-9

// Truncate returns the quantile function of d restricted to [lo, hi] (the
// model's bounds truncating a prior) and the probability d holds there,
// so that a prior with little mass inside the bounds is still drawn from
// exactly, by inversion, where rejection would need about 1/mass tries. A
// normal restricted to [lo, hi] is the truncated normal of the same mu
// and sd, and a lognormal is the exponential of the truncated normal of
// log x on [log lo, log hi] (Johnson, Kotz & Balakrishnan 1994, ch. 13–14),
// whose tail masses TruncNormal computes without cancellation. It fails
// when the interval holds less than MinMass of a non-uniform d's
// probability and not the normal's mean (of log x for a lognormal): a
// vague normal centred in the bounds is, cut to them, a uniform (a
// uniform fails only when it misses the interval).
func Truncate(d Dist, lo, hi float64) (func(u float64) float64, float64, error) {
	slo, shi := d.Support()
	lo, hi = math.Max(lo, slo), math.Min(hi, shi)
	none := func(hint string) (func(float64) float64, float64, error) {
		return nil, 0, fmt.Errorf("prior %s has less than %g of its probability in [%g, %g]%s", d, MinMass, lo, hi, hint)
	}
	if !(lo < hi) {
		return none("")
	}
	var q func(float64) float64
	var logMass float64
	centred := false // the normal's mean (of log x for a lognormal) lies in [lo, hi]
	switch d := d.(type) {
	case Uniform:
		u, err := NewUniform(lo, hi)
		if err != nil {
			return none("")
		}
		q, logMass = u.Quantile, d.logPdf-u.logPdf // log((hi − lo)/(d.hi − d.lo))
	case Normal:
		t, err := NewTruncNormal(d.mu, d.sd, lo, hi)
		if err != nil {
			return none("")
		}
		q, logMass, centred = t.Quantile, t.logZ, t.centred()
	case LogNormal:
		t, err := NewTruncNormal(d.mu, d.sigma, math.Log(lo), math.Log(hi))
		if err != nil {
			return none(" (lognormal's arguments are the mean and sd of log x)")
		}
		q = func(u float64) float64 { return math.Max(lo, math.Min(hi, math.Exp(t.Quantile(u)))) }
		logMass, centred = t.logZ, t.centred()
	case TruncNormal:
		t, err := NewTruncNormal(d.mu, d.sd, lo, hi)
		if err != nil {
			return none("")
		}
		q, logMass, centred = t.Quantile, t.logZ-d.logZ, t.centred()
	default:
		return nil, 0, fmt.Errorf("prior %s: no truncation for this distribution", d)
	}
	// A uniform wider than the bounds is a flat prior the bounds cut, as a
	// study may mean it, and so is a vague normal centred inside them (its
	// density varies there by a factor below exp(MinMass²)); a normal or
	// lognormal with next to no mass inside, centred outside, is a prior in
	// the wrong units.
	if _, uniform := d.(Uniform); !uniform && !centred && !(logMass >= math.Log(MinMass)) {
		hint := ""
		if _, ok := d.(LogNormal); ok {
			hint = " (lognormal's arguments are the mean and sd of log x)"
		}
		return none(hint)
	}
	return q, math.Exp(math.Min(logMass, 0)), nil
}
