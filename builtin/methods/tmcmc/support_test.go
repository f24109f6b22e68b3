package tmcmc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
	"github.com/kinfer/kinfer/builtin/prior"
)

// The coordinate maps: T⁻¹(T(θ)) = θ, and the log-Jacobian log|dθ/du|
// agrees with a central difference of T⁻¹ (tolerance: the difference's
// truncation error with h = 1e-6 of the map's length scale, plus at most
// h/m where a difference straddles the box map's C¹ junction).
func TestCoordMaps(t *testing.T) {
	const (
		roundTol = 1e-12 // relative to the bound width
		jacTol   = 2e-6  // |log J − log J_fd|
		hRel     = 1e-6
	)
	inf := math.Inf(1)
	cases := []struct{ lo, hi float64 }{{-2, 5}, {0, 1e-3}, {3, inf}, {-inf, -1}, {-inf, inf}}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, b := range cases {
		c := coords([]float64{b.lo}, []float64{b.hi}, Transform)[0]
		for range 200 {
			var th float64
			switch {
			case c.kind == mapBox:
				th = b.lo + (b.hi-b.lo)*(0.001+0.998*rng.Float64())
			case c.kind == mapLower:
				th = b.lo + math.Exp(6*rng.Float64()-3)
			case c.kind == mapUpper:
				th = b.hi - math.Exp(6*rng.Float64()-3)
			default:
				th = 10 * rng.NormFloat64()
			}
			u := c.toU(th)
			back, lj := c.fromU(u)
			scale := 1.0
			h := hRel
			if c.kind == mapBox {
				scale = b.hi - b.lo
				h = hRel * c.margin
			}
			if math.Abs(back-th) > roundTol*math.Max(scale, math.Abs(th)) {
				t.Fatalf("[%g, %g]: θ %v → u %v → %v", b.lo, b.hi, th, u, back)
			}
			tp, _ := c.fromU(u + h)
			tm, _ := c.fromU(u - h)
			if fd := math.Log(math.Abs(tp-tm) / (2 * h)); math.Abs(lj-fd) > jacTol {
				t.Fatalf("[%g, %g] u %v: log J %v, central difference %v", b.lo, b.hi, u, lj, fd)
			}
		}
	}
	// The box map is continuous with slope 1 at its junctions a + m and
	// b − m, and onto (a, b): far into a margin θ approaches the bound.
	box := coords([]float64{-2}, []float64{6}, Transform)[0] // m = 2
	for _, edge := range []float64{0, 4} {
		lo, ljlo := box.fromU(edge - 1e-9)
		hi, ljhi := box.fromU(edge + 1e-9)
		if math.Abs(hi-lo-2e-9) > 1e-15 || math.Abs(ljlo) > 1e-9 || math.Abs(ljhi) > 1e-9 {
			t.Errorf("junction %v: θ %v → %v, log J %v, %v", edge, lo, hi, ljlo, ljhi)
		}
	}
	if th, _ := box.fromU(-60); !(th > -2 && th < -2+1e-9) {
		t.Errorf("far lower margin: θ = %v", th)
	}
	// A point on a bound maps to a finite u and back inside the bounds.
	c := coords([]float64{0}, []float64{1}, Transform)[0]
	for _, th := range []float64{0, 1} {
		u := c.toU(th)
		back, lj := c.fromU(u)
		if math.IsInf(u, 0) || math.IsNaN(u) || back < 0 || back > 1 || math.IsInf(lj, 0) {
			t.Errorf("bound %v: u %v, back %v, log J %v", th, u, back, lj)
		}
	}
	// mapPoint is the sum of the per-parameter maps.
	lo, hi := []float64{-2, 0, 3, math.Inf(-1), math.Inf(-1)}, []float64{5, 1, math.Inf(1), -1, math.Inf(1)}
	cs := coords(lo, hi, Transform)
	for range 100 {
		u := make([]float64, len(cs))
		for i := range u {
			u[i] = 8 * rng.NormFloat64()
		}
		th := make([]float64, len(cs))
		got, want := mapPoint(cs, u, th), 0.0
		for i, c := range cs {
			ti, lj := c.fromU(u[i])
			want += lj
			if ti != th[i] {
				t.Fatalf("mapPoint θ%d = %v, fromU %v", i, th[i], ti)
			}
		}
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("mapPoint log J %v, sum of fromU %v", got, want)
		}
	}
}

// boundCase is a posterior piled against a bound: θ ∈ [0, 1]^5 uniform,
// each coordinate observed once as y = 0.05 with unit-normalised Gaussian
// noise s = 0.1, so the posterior is N(0.05, 0.1²) truncated to [0, 1] per
// coordinate, a third of its mass within one s of the bound 0. Exact
// (truncated normal; Johnson, Kotz & Balakrishnan 1994, ch. 13.10):
// Z₁ = Φ(β) − Φ(α), α = −y/s, β = (1 − y)/s, log Z = 5·log Z₁, mean
// y + s(φ(α) − φ(β))/Z₁, variance s²(1 + (αφ(α) − βφ(β))/Z₁ −
// ((φ(α) − φ(β))/Z₁)²).
func boundCase() conformance.Case {
	const d, y, s = 5, 0.05, 0.1
	phi := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	Phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	a, b := -y/s, (1-y)/s
	z1 := Phi(b) - Phi(a)
	r := (phi(a) - phi(b)) / z1
	mean, v := y+s*r, s*s*(1+(a*phi(a)-b*phi(b))/z1-r*r)
	u, _ := prior.NewUniform(0, 1)
	c := conformance.Case{Name: "bound-5d", LogZ: d * math.Log(z1)}
	for i := range d {
		c.Target.Params = append(c.Target.Params, abi.Param{Name: fmt.Sprintf("theta%d", i), Lower: 0, Upper: 1})
		c.Target.Prior = append(c.Target.Prior, u)
		c.PostMean, c.PostVar = append(c.PostMean, mean), append(c.PostVar, v)
	}
	c.Target.LogLik = func(th []float64) (float64, abi.Status) {
		ll := 0.0
		for _, x := range th {
			ll += -0.5*(x-y)*(x-y)/(s*s) - math.Log(s) - 0.5*math.Log(2*math.Pi)
		}
		return ll, abi.OK
	}
	return c
}

// mixtureCase is the bimodal Appendix B problem as a Case (log Z = −ln 400).
func mixtureCase() conformance.Case {
	tgt, logZ := bimodal()
	return conformance.Case{Name: "mixture-2d", Target: tgt, LogZ: logZ}
}

// TestEvidenceCoverage: over 20 seeds, on four problems with known
// evidence (two Gaussians, a posterior against a bound, a two-mode
// mixture), the default sampler (bartsoen, transform proposals, sub-step
// β rule; 1000 chains, 20 sub-steps) has |log Ẑ − log Z| ≤ 4·SE in at
// least 19 seeds of 20 (95 %), and its mean error over the seeds is
// within 4 standard errors of that mean (no bias). It also checks the
// posterior moments where they are known, and that every proposal of the
// transform mode is inside the support.
func TestEvidenceCoverage(t *testing.T) {
	const (
		seeds, minCovered, k = 20, 19, 4.0
		// Posterior moments per seed, as TestConformance (1000 correlated
		// draws; tolerances about 6 standard errors).
		meanTol, varTol = 0.2, 0.3
	)
	cases := []conformance.Case{conformance.Conjugate2D(), conformance.Gauss10D(), boundCase(), mixtureCase()}
	for _, c := range cases {
		runs := runSeeds(seeds, func(seed uint64) caseRun {
			rep, _, err := conformance.Run(mustNew(1000, 20, Bartsoen), c.Target, seed)
			return caseRun{rep, err}
		})
		covered, sumErr, sumSE2 := 0, 0.0, 0.0
		for i, r := range runs {
			if r.err != nil {
				t.Fatalf("%s seed %d: %v", c.Name, i+1, r.err)
			}
			x := r.rep.Extra
			lz, se := x["log_evidence"].(float64), x["log_evidence_se"].(float64)
			if math.Abs(lz-c.LogZ) <= k*se {
				covered++
			}
			sumErr += lz - c.LogZ
			sumSE2 += se * se
			if f := x["in_support_fraction"].(float64); f != 1 {
				t.Errorf("%s seed %d: %.4f of the proposals inside the support, want all", c.Name, i+1, f)
			}
			if x["warnings"] != nil {
				t.Errorf("%s seed %d: bartsoen report has warnings %v", c.Name, i+1, x["warnings"])
			}
			if c.PostMean == nil {
				continue
			}
			mean, v := conformance.Moments(r.rep.Samples)
			for j := range mean {
				sd := math.Sqrt(c.PostVar[j])
				if math.Abs(mean[j]-c.PostMean[j])/sd > meanTol || math.Abs(v[j]/c.PostVar[j]-1) > varTol {
					t.Errorf("%s seed %d θ%d: mean %.4f (exact %.4f), var %.5f (exact %.5f)", c.Name, i+1, j, mean[j], c.PostMean[j], v[j], c.PostVar[j])
				}
			}
		}
		meanErr, seMean := sumErr/seeds, math.Sqrt(sumSE2)/seeds
		if covered < minCovered {
			t.Errorf("%s: log Z within %v·SE in %d of %d seeds, want ≥ %d", c.Name, k, covered, seeds, minCovered)
		}
		if math.Abs(meanErr) > k*seMean {
			t.Errorf("%s: mean error %.4f over %d seeds, more than %v × its standard error %.4f", c.Name, meanErr, seeds, k, seMean)
		}
		t.Logf("%s: within 4·SE in %d/%d seeds; mean error %+.4f ± %.4f", c.Name, covered, seeds, meanErr, seMean)
	}
}

// In reject mode (the paper's algorithm) a posterior against a bound
// wastes proposals outside it; transform mode wastes none, and both agree
// with the exact evidence and moments (so the transform, with its
// log-Jacobian, leaves the target unchanged).
func TestProposalModes(t *testing.T) {
	c := boundCase()
	const evTol = 0.3 // about 4 SE of one run (SE ≈ 0.05–0.08 here)
	var frac [2]float64
	for _, mode := range []int{Transform, Reject} {
		rep, _, err := conformance.Run(newMethodPA(t, 1000, 20, Bartsoen, mode, AdaptSubstep), c.Target, 11)
		if err != nil {
			t.Fatal(err)
		}
		x := rep.Extra
		frac[mode] = x["in_support_fraction"].(float64)
		if lz := x["log_evidence"].(float64); math.Abs(lz-c.LogZ) > evTol {
			t.Errorf("%s: log Ẑ %.4f, exact %.4f", ProposalNames[mode], lz, c.LogZ)
		}
		if x["proposal"] != ProposalNames[mode] {
			t.Errorf("report says proposal %v", x["proposal"])
		}
		if st := x["stages"].([]any)[0].(map[string]any); st["in_support_fraction"] == nil {
			t.Error("stage record lacks in_support_fraction")
		}
	}
	if frac[Transform] != 1 || !(frac[Reject] < 0.9) {
		t.Errorf("in-support fractions: transform %.3f (want 1), reject %.3f (want < 0.9)", frac[Transform], frac[Reject])
	}
}

// The sub-step rule brings the acceptance rate near its target within a
// stage even from a badly scaled start, where Eq. 19 (adapt = stage)
// moves β by at most e^(1/√N_a) per stage; and the biased variants carry
// their warning in the report.
func TestSubstepAdaptAndWarnings(t *testing.T) {
	c := conformance.Gauss10D()
	rep, _, err := conformance.Run(newMethod(t, 500, 20, Bartsoen), c.Target, 2)
	if err != nil {
		t.Fatal(err)
	}
	for j, s := range rep.Extra["stages"].([]any) {
		st := s.(map[string]any)
		if b0, b1 := st["beta"].(float64), st["beta_end"].(float64); j == 0 && b0 == b1 {
			t.Errorf("stage 0: β did not adapt within the stage (%v)", b0)
		}
		// Acceptance over the whole stage, including the adaptation
		// half: 0.23 is the target; a badly scaled β gives < 0.05.
		if a := st["acceptance_rate"].(float64); a < 0.1 || a > 0.6 {
			t.Errorf("stage %d: acceptance %.3f", j, a)
		}
	}
	for _, v := range []int{Original, Betz} {
		rep, _, err := conformance.Run(newMethod(t, 200, 5, v), conformance.Conjugate2D().Target, 1)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := rep.Extra["warnings"].([]any)
		if len(w) != 1 || rep.Extra["evidence_biased"] != true {
			t.Errorf("%s: warnings %v, evidence_biased %v", VariantNames[v], rep.Extra["warnings"], rep.Extra["evidence_biased"])
		}
	}
}
