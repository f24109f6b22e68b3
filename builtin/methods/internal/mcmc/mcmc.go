package mcmc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kinfer/kinfer/abi"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// SplitMix64 is output k of the SplitMix64 generator started at seed
// (Steele, Lea & Flood 2014; the mix is Stafford's variant 13).
func SplitMix64(seed, k uint64) uint64 {
	z := seed + k*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Stream is random stream k ≥ 0 of a run with the given seed: the PCG whose
// two seed words are SplitMix64 outputs 2k+1 and 2k+2. Distinct k give
// independent-looking streams, so a method can give each chain its own.
func Stream(seed uint64, k int) *rand.PCG {
	return rand.NewPCG(SplitMix64(seed, uint64(2*k+1)), SplitMix64(seed, uint64(2*k+2)))
}

// WholeSetting checks that the setting name of a method holds a whole
// number in [lo, hi] and returns it; the error is prefixed by method. A
// value of magnitude 2⁶² or more is refused whatever hi is (float64(hi)
// rounds up near math.MaxInt, and int(v) of a larger v is not v).
func WholeSetting(method, name string, v float64, lo, hi int) (int, error) {
	if v != math.Trunc(v) || !(v >= float64(lo) && v <= float64(hi)) || math.Abs(v) >= 1<<62 {
		return 0, fmt.Errorf("%s: setting %s must be a whole number in [%d, %d], got %g", method, name, lo, hi, v)
	}
	return int(v), nil
}

// Finite reports whether x is neither NaN nor ±∞.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Usable reports whether an evaluation may become a chain state: status
// OK and finite log prior and log likelihood. (Whether the point is inside
// the bounds is Bounds.Contains.)
func Usable(r abi.Result) bool {
	return r.Status == abi.OK && Finite(r.LogPrior) && Finite(r.LogLik)
}

// Bounds is the box [Lower, Upper] of a problem's parameters.
type Bounds struct {
	Lower, Upper []float64
}

// NewBounds reads the bounds of p's parameters. It refuses a problem
// without parameters and a parameter whose bounds are NaN or not
// lower < upper (infinite bounds are allowed); errors are prefixed by
// method.
func NewBounds(method string, p abi.Problem) (Bounds, error) {
	d := len(p.Params)
	if d == 0 {
		return Bounds{}, fmt.Errorf("%s: the problem has no parameters", method)
	}
	b := Bounds{Lower: make([]float64, d), Upper: make([]float64, d)}
	for i, q := range p.Params {
		if math.IsNaN(q.Lower) || math.IsNaN(q.Upper) || !(q.Lower < q.Upper) {
			return Bounds{}, fmt.Errorf("%s: parameter %q has bounds [%g, %g]; want lower < upper", method, q.Name, q.Lower, q.Upper)
		}
		b.Lower[i], b.Upper[i] = q.Lower, q.Upper
	}
	return b, nil
}

// Contains reports whether every xᵢ is in [Lowerᵢ, Upperᵢ] (false for NaN).
func (b Bounds) Contains(x []float64) bool {
	for i, v := range x {
		if !(v >= b.Lower[i] && v <= b.Upper[i]) {
			return false
		}
	}
	return true
}

// Cholesky returns the lower-triangular L (row-major d×d) with L·Lᵀ = a, or
// false when a is not numerically positive definite (or L not finite).
// Only the lower triangle of a is read. The factorisation is LAPACK's
// unblocked dpotf2 through gonum's lapack64.Potrf on a copy of a's lower
// triangle: no allocation beyond L and no condition estimate, which
// mat.Cholesky.Factorize adds (3–50× the time for d = 2…30;
// RATIONALE.md, "Why lapack64.Potrf and not mat.Cholesky?").
func Cholesky(a []float64, d int) ([]float64, bool) {
	l := make([]float64, d*d)
	for i := range d {
		copy(l[i*d:i*d+i+1], a[i*d:i*d+i+1])
	}
	if d == 0 {
		return l, true
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: d, Stride: d, Data: l}); !ok {
		return nil, false
	}
	for i := range d {
		if v := l[i*d+i]; !(v > 0) || math.IsInf(v, 1) {
			return nil, false
		}
	}
	return l, true
}

// Header is the head of a method's checkpoint: what the checkpoint is for.
// Embedded (untagged) in a method's JSON state, its fields are written at
// the top level as format, config, d and seed.
type Header[C comparable] struct {
	Format int    `json:"format"`
	Config C      `json:"config"`
	D      int    `json:"d"`
	Seed   uint64 `json:"seed"`
}

// Check refuses a checkpoint whose header h differs from the running
// method's, run: another layout version, other settings, another
// dimension or seed. Errors are prefixed by method and say what differs.
func (h Header[C]) Check(method string, run Header[C]) error {
	if h.Format != run.Format {
		return fmt.Errorf("%s: checkpoint format %d, this version reads %d", method, h.Format, run.Format)
	}
	if h.Config != run.Config {
		return fmt.Errorf("%s: checkpoint settings %+v differ from this run's %+v", method, h.Config, run.Config)
	}
	if h.D != run.D || h.Seed != run.Seed {
		return fmt.Errorf("%s: checkpoint is for d = %d, seed = %d; this run has d = %d, seed = %d", method, h.D, h.Seed, run.D, run.Seed)
	}
	return nil
}

// JSONNum is x, or nil when x is not finite (JSON has no NaN or ±∞).
func JSONNum(x float64) any {
	if Finite(x) {
		return x
	}
	return nil
}

// JSONList is JSONNum of every element.
func JSONList(xs []float64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = JSONNum(x)
	}
	return out
}

// SampleHeader is the memory of one abi.Sample besides its Theta values: a
// slice header and two float64s (on a 64-bit platform).
const SampleHeader = 40

// GCFactor is the ratio of a Go process's heap to its live data: the
// collector lets the heap grow to (1 + GOGC/100) times what was live after
// the last collection, twice with the default GOGC = 100 (runtime/debug,
// SetGCPercent).
const GCFactor = 2

// CheckMemory refuses settings whose planned live memory, live bytes,
// needs more than the problem's budget (abi.Problem.MemoryBudget) once the
// collector's headroom (GCFactor) is counted. what names the settings and
// their values, e.g. "chains × samples = 4 × 5000 kept draws of 2
// parameters"; the error is prefixed by method.
func CheckMemory(method string, p abi.Problem, live float64, what string) error {
	if need, budget := GCFactor*live, p.Budget(); need > float64(budget) {
		return fmt.Errorf("%s: %s need about %s of memory, more than the memory budget of %s; lower the settings or raise the budget (kinfer run --memory-budget)",
			method, what, FormatBytes(need), FormatBytes(float64(budget)))
	}
	return nil
}

// MaxReportBytes is the most JSON a method's report may have: ABI.md §6's
// bound on a plugin's report, which the host also applies to a built-in
// method's (host/run leaves a larger one out of summary.json).
const MaxReportBytes = 16 << 20

// CheckReport refuses settings whose report would be about bytes of JSON,
// more than MaxReportBytes; what names the settings, hint how to lower
// them. The error is prefixed by method.
func CheckReport(method string, bytes float64, what, hint string) error {
	if bytes > MaxReportBytes {
		return fmt.Errorf("%s: %s make a report of about %s, more than the %s a method's report may have in summary.json; %s",
			method, what, FormatBytes(bytes), FormatBytes(MaxReportBytes), hint)
	}
	return nil
}

// FormatBytes writes n bytes in the largest binary unit that keeps the
// number ≥ 1 (1.5 GiB, 300 MiB).
func FormatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	u := 0
	for n >= 1024 && u < len(units)-1 {
		n /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.3g %s", n, units[u])
}
