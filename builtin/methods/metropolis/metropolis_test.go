package metropolis

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// settings in Spec order: chains, samples, burn_in, thin, target_accept,
// init_scale.
func newMethod(t *testing.T, chains, samples, burnIn, thin int) *Method {
	t.Helper()
	m, err := New([]float64{float64(chains), float64(samples), float64(burnIn), float64(thin), 0.234, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*Method)
}

func TestMomentCheck(t *testing.T) {
	// docs/REFERENCES.md "Moment check for any MCMC sampler": N(0,1)
	// target, a few thousand steps, fixed seed: |mean| < 0.08,
	// |sd − 1| < 0.05, acceptance in (0.1, 0.9). Here 4 chains × (1000
	// burn-in + 2500 kept) steps. Seed 1 is not chosen: over seeds 1–200
	// this configuration met the check 198 times.
	const (
		meanTol = 0.08
		sdTol   = 0.05
		accLo   = 0.1
		accHi   = 0.9
	)
	c := conformance.StdNormal1D()
	rep, _, err := conformance.Run(newMethod(t, 4, 2500, 1000, 1), c.Target, 1)
	if err != nil {
		t.Fatal(err)
	}
	mean, v := conformance.Moments(rep.Samples)
	acc := rep.Extra["acceptance_rate"].(float64)
	if math.Abs(mean[0]) >= meanTol || math.Abs(math.Sqrt(v[0])-1) >= sdTol || !(acc > accLo && acc < accHi) {
		t.Errorf("moment check: mean %.4f, sd %.4f, acceptance %.3f", mean[0], math.Sqrt(v[0]), acc)
	}
}

func TestConformanceMoments(t *testing.T) {
	// Every analytic problem with the default settings (4 chains, 2000
	// burn-in, 5000 kept). The tolerance is in Monte Carlo standard errors
	// computed from the sampler's own ESS: SE(mean) = √(var/ESS) and, for a
	// Gaussian, SE(variance) ≈ var·√(2/ESS). Over seeds 1–20 the largest
	// |z| seen on any parameter of any case was 4.35 (variance, conjugate-2d).
	const (
		zTol = 5.0
		// essMin guards against a tolerance made loose by a tiny ESS: an
		// optimally tuned random walk gets ESS ≈ 0.3·N/d (Gelman, Roberts
		// & Gilks 1996), here ≥ 600 even in 10-D.
		essMin = 400
		// rhatMax: split-R̂ of well-mixed chains (BDA3 Sec. 11.4 suggests
		// 1.1; these long chains do far better).
		rhatMax = 1.02
	)
	defaults, err := abi.SettingValues(Spec.Settings, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conformance.Cases() {
		m, err := New(defaults)
		if err != nil {
			t.Fatal(err)
		}
		rep, h, err := conformance.Run(m, c.Target, 1)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if len(rep.Samples) != 4*5000 {
			t.Errorf("%s: %d samples, want 20000", c.Name, len(rep.Samples))
		}
		mean, v := conformance.Moments(rep.Samples)
		ess, rhat := rep.Extra["ess"].([]any), rep.Extra["rhat"].([]any)
		for i := range mean {
			e, r := ess[i].(float64), rhat[i].(float64)
			zm := (mean[i] - c.PostMean[i]) / math.Sqrt(c.PostVar[i]/e)
			zv := (v[i] - c.PostVar[i]) / (c.PostVar[i] * math.Sqrt(2/e))
			if math.Abs(zm) > zTol || math.Abs(zv) > zTol || e < essMin || r > rhatMax {
				t.Errorf("%s θ%d: mean %.4f (exact %.4f, z %.2f), var %.4f (exact %.4f, z %.2f), ESS %.0f, R̂ %.4f",
					c.Name, i, mean[i], c.PostMean[i], zm, v[i], c.PostVar[i], zv, e, r)
			}
		}
		if acc := rep.Extra["acceptance_rate"].(float64); !(acc > 0.1 && acc < 0.5) {
			t.Errorf("%s: acceptance %.3f far from the 0.234 target", c.Name, acc)
		}
		t.Logf("%s: %d evaluations, acceptance %.3f, λ %.3g", c.Name, h.Evals, rep.Extra["acceptance_rate"], rep.Extra["proposal_scale"])
	}
}

func TestDeterminism(t *testing.T) {
	c := conformance.Conjugate2D()
	conformance.CheckDeterminism(t, func() abi.Method { return newMethod(t, 3, 400, 300, 2) }, c.Target, 7, nil)
}

func TestCheckpointResume(t *testing.T) {
	const seed = 11
	const chains, samples, burnIn, thin = 4, 300, 400, 2
	conformance.CheckResume(t, func() abi.Method { return newMethod(t, chains, samples, burnIn, thin) }, conformance.FailingTarget(), seed, conformance.ResumeOptions{
		Straight: func(tb testing.TB, rep abi.Report, _ int) {
			if rep.Extra["init_draws"].(int) <= chains || rep.Extra["rejected_failures"].(int) == 0 {
				tb.Fatalf("the target should force re-draws and failures: %v", rep.Extra)
			}
		},
		// Save points cover the start-up draws, the initial proposal, the
		// switch to the adaptive covariance, the window restart at
		// burn_in/2, the end of burn-in, the kept phase and the end.
		Stops: func(total int) []int {
			return []int{1, 2, 5, 30, 150, 201, 250, 399, 403, 404, 405, 700, total - 1, total}
		},
	})
}

// savedState is a 2-chain method initialised on c and its saved state.
func savedState(t *testing.T, c conformance.Case) (*Method, []byte) {
	t.Helper()
	m := newMethod(t, 2, 10, 10, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	blob, err := m.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	return m, blob
}

func TestCheckpointMismatch(t *testing.T) {
	c := conformance.Conjugate2D()
	_, blob := savedState(t, c)
	conformance.CheckLoadRefusals(t, blob, func() abi.Method { return newMethod(t, 2, 10, 10, 1) }, c.Target, 1,
		func() abi.Method { return newMethod(t, 3, 10, 10, 1) })
	other := newMethod(t, 2, 10, 10, 1)
	other.Init(c.Target.Problem(1))
	var s map[string]any
	json.Unmarshal(blob, &s)
	s["x"] = []any{[]any{1.0}}
	bad, _ := json.Marshal(s)
	if err := other.LoadState(bad); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("loading a checkpoint with wrong shapes: %v", err)
	}
}

func TestInitFailure(t *testing.T) {
	c := conformance.StdNormal1D()
	c.Target.LogLik = func([]float64) (float64, abi.Status) { return 0, abi.Failed }
	_, h, err := conformance.Run(newMethod(t, 2, 10, 10, 1), c.Target, 1)
	if err == nil || !strings.Contains(err.Error(), "chain 0 found no starting point") || !strings.Contains(err.Error(), "100 prior draws") {
		t.Fatalf("error %v", err)
	}
	if h.Draws != 2*MaxInitDraws {
		t.Errorf("%d prior draws, want %d", h.Draws, 2*MaxInitDraws)
	}
}

func TestProtocol(t *testing.T) {
	c := conformance.Conjugate2D()
	m := newMethod(t, 2, 5, 5, 1)
	conformance.CheckProtocolStart(t, m, c.Target, 1, 2, abi.WantLogTarget)
	h := conformance.NewHost(c.Target, 1)
	rep, err := h.Finish(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ask(); err == nil {
		t.Error("Ask after done succeeded")
	}
	// Layout: step by step, chain 0 then chain 1 within a step.
	for k := range 2 {
		var chain []abi.Sample
		for i := k; i < len(rep.Samples); i += 2 {
			chain = append(chain, rep.Samples[i])
		}
		if err := conformance.SameSamples(chain, m.kept[k]); err != nil {
			t.Errorf("report rows %d, %d+2, ... are not chain %d's draws: %v", k, k, k, err)
		}
	}
	conformance.CheckExtra(t, rep.Extra, "chains", "acceptance_rate", "acceptance_per_chain", "proposal_scale", "rhat", "ess")
	if bad := (abi.Problem{Params: []abi.Param{{Name: "x", Lower: 1, Upper: 1}}}); m.Init(bad) == nil {
		t.Error("Init accepted empty bounds")
	}
	if m.Init(abi.Problem{}) == nil {
		t.Error("Init accepted a problem without parameters")
	}
}

func TestSettings(t *testing.T) {
	conformance.CheckSpec(t, Spec, New, []float64{4, 10, 10, 1, 0.234, 0.1}, map[string]float64{
		"chains": 0, "samples": 2.5, "burn_in": -1, "thin": 0, "target_accept": 1, "init_scale": 0,
	})
	defaults, _ := abi.SettingValues(Spec.Settings, nil)
	m, err := New(defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Chains: 4, Samples: 5000, BurnIn: 2000, Thin: 1, TargetAccept: 0.234, InitScale: 0.1}
	if got := m.(*Method).Config(); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	var _ abi.Checkpointer = m.(*Method)
}

// BenchmarkStep is the method's own cost per ask/tell round (4 chains,
// d = 10, target evaluation excluded), in the adaptive burn-in phase where
// each step also updates the covariance and its Cholesky factor.
func BenchmarkStep(b *testing.B) {
	const d, chains = 10, 4
	params := make([]abi.Param, d)
	for i := range params {
		params[i] = abi.Param{Name: string(rune('a' + i)), Lower: -10, Upper: 10}
	}
	m, err := New([]float64{chains, 1, 1e9, 1, 0.234, 0.1})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Init(abi.Problem{Params: params, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	results := make([]abi.Result, chains)
	for b.Loop() {
		batch, err := m.Ask()
		if err != nil {
			b.Fatal(err)
		}
		for k := range results {
			theta := make([]float64, d)
			if len(batch.Points) > 0 {
				theta = batch.Points[k]
			}
			ss := 0.0
			for _, v := range theta {
				ss += v * v
			}
			results[k] = abi.Result{Theta: theta, LogPrior: 0, LogLik: -0.5 * ss}
		}
		if err := m.Tell(results[:batch.Len()]); err != nil {
			b.Fatal(err)
		}
	}
}

// The kept draws stream out (abi.SampleStream) and a checkpoint leaves the
// streamed ones out: restored with them, a run continues exactly, and the
// state saved late in a run of 4 × 2000 kept draws stays small (the draws
// alone are ≈ 4·2000·60 B = 480 kB of JSON; the rest of the state is
// ≈ 2 kB for d = 2).
func TestStreamResume(t *testing.T) {
	const chains, samples, burnIn, thin = 4, 2000, 300, 1
	const maxState = 16 << 10
	newM := func() abi.Method { return newMethod(t, chains, samples, burnIn, thin) }
	conformance.CheckStreamResume(t, newM, conformance.Conjugate2D().Target, 5, []int{1, 150, 299, 300, 301, 302, 1500, 2299}, maxState)
}

// Init refuses settings whose kept draws exceed the memory budget, naming
// the settings and the bytes, before reserving anything; accepted settings
// reserve nothing for the draws to come.
func TestMemoryBudget(t *testing.T) {
	c := conformance.Conjugate2D()
	m := newMethod(t, 100_000, 100_000_000, 0, 1)
	err := m.Init(c.Target.Problem(1))
	if err == nil || !strings.Contains(err.Error(), "chains × samples = 100000 × 100000000") || !strings.Contains(err.Error(), "memory budget of 4 GiB") {
		t.Fatalf("Init: %v", err)
	}
	p := c.Target.Problem(1)
	p.MemoryBudget = 1 << 20
	// Audit 10: 4 × 330 000 draws of 2 parameters peaked at 662 MB, and a
	// 512 MiB budget accepted them.
	p.MemoryBudget = 512 << 20
	if err := newMethod(t, 4, 330_000, 0, 1).Init(p); err == nil {
		t.Error("4 × 330 000 draws accepted within 512 MiB")
	}
	p.MemoryBudget = 1 << 20
	m = newMethod(t, 4, 5000, 0, 1) // ≈ 2 · 4·5000·(2·16 + 168 + 64) B = 10 MiB
	if err := m.Init(p); err == nil || !strings.Contains(err.Error(), "more than the memory budget of 1 MiB") {
		t.Fatalf("Init with a 1 MiB budget: %v", err)
	}
	p.MemoryBudget = 64 << 20
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	for k, ch := range m.kept {
		if cap(ch) != 0 {
			t.Errorf("chain %d reserved %d draws at Init", k, cap(ch))
		}
	}
}

// A state from elsewhere whose kept samples are half a million empty
// objects (1.5 MB of text, ≈ 32 MB of samples) is refused before it is
// decoded, with the method left as it was; a real state of the same
// length in numbers loads.
func TestLoadStateListBomb(t *testing.T) {
	c := conformance.Conjugate2D()
	m, blob := savedState(t, c)
	// The list form of an older kinfer's checkpoint, which is still read.
	i := strings.Index(string(blob), `"samples_bin":`)
	if i < 0 {
		t.Fatalf("no samples in %s", blob)
	}
	bomb := string(blob[:i]) + `"samples":[[` + strings.TrimSuffix(strings.Repeat("{},", 500_000), ",") + "]]," + string(blob[i:])
	before := m.st
	if err := m.LoadState([]byte(bomb)); err == nil || !strings.Contains(err.Error(), "per byte") {
		t.Errorf("a state of half a million empty samples: %v", err)
	}
	if !reflect.DeepEqual(before, m.st) {
		t.Error("the refused state changed the method")
	}
	if err := m.LoadState(blob); err != nil {
		t.Errorf("its own state: %v", err)
	}
}

// The report warns when the samples are not a posterior sample yet: no
// proposal accepted after burn-in, or chains that disagree (split-R̂ above
// 1.1, or not finite).
func TestWarnings(t *testing.T) {
	m := &Method{cfg: Config{Chains: 4}, names: []string{"a", "b"}}
	if w := m.warnings(0.25, []float64{1.01, 1.002}); len(w) != 0 {
		t.Errorf("mixed chains: %v", w)
	}
	if w := m.warnings(math.NaN(), []float64{1.01, 1.002}); len(w) != 0 {
		t.Errorf("stopped in burn-in, nothing kept yet: %v", w)
	}
	m.st.ProposedKept = 100
	w := m.warnings(0, []float64{math.NaN(), 2.79})
	if len(w) != 3 || !strings.Contains(w[0].(string), "acceptance rate 0 after burn-in") ||
		!strings.Contains(w[1].(string), "split-R̂ above 1.1 for b (2.79)") ||
		!strings.Contains(w[2].(string), "split-R̂ could not be computed for a") {
		t.Errorf("stuck chains: %v", w)
	}
}

// The kept draws are saved packed (samples_bin) and round-trip to the bit;
// an older checkpoint's list form (samples) still loads to the same
// method; a packed block of the wrong length is refused.
func TestSamplesBinRoundTrip(t *testing.T) {
	c := conformance.Conjugate2D()
	m := newMethod(t, 2, 10, 30, 1)
	if err := m.Init(c.Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	h := conformance.NewHost(c.Target, 1)
	for m.keptSteps() < 7 { // through burn-in into the kept steps
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	blob, err := m.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *Method {
		n := newMethod(t, 2, 10, 30, 1)
		if err := n.Init(c.Target.Problem(1)); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := fresh()
	if err := n.LoadState(blob); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n.kept, m.kept) || len(m.kept[0]) != 7 {
		t.Fatalf("packed draws did not round-trip: %d kept", len(m.kept[0]))
	}
	var s map[string]any
	json.Unmarshal(blob, &s)
	delete(s, "samples_bin")
	s["samples"] = m.kept // the list form of an older kinfer
	old, _ := json.Marshal(s)
	if o := fresh(); o.LoadState(old) != nil || !reflect.DeepEqual(o.kept, m.kept) {
		t.Fatal("an older checkpoint's list form did not load to the same draws")
	}
	var st struct {
		Packed []byte `json:"samples_bin"`
	}
	json.Unmarshal(blob, &st)
	delete(s, "samples")
	for _, cut := range [][]byte{st.Packed[:len(st.Packed)-1], append(append([]byte(nil), st.Packed...), 0)} {
		s["samples_bin"] = cut
		bad, _ := json.Marshal(s)
		if err := fresh().LoadState(bad); err == nil || !strings.Contains(err.Error(), "samples_bin") {
			t.Errorf("samples_bin of %d bytes (want %d): %v", len(cut), len(st.Packed), err)
		}
	}
}

// When every chain starts at an init row (or there is one chain) the
// starting values say nothing of the prior's scale: the first proposal
// takes the width of Problem.PriorBox, not of bounds of ±1e9 (which made
// it 2e8 and no proposal was ever accepted).
func TestStartProposalFromPriorBox(t *testing.T) {
	c := conformance.Conjugate2D()
	p := c.Target.Problem(1)
	for i := range p.Params {
		p.Params[i].Lower, p.Params[i].Upper = -1e9, 1e9
	}
	p.PriorBox = [][2]float64{{-15, 15}, {-15, 15}} // N(0, 9) cut at ±5 sd
	p.Starts = [][]float64{{0.1, 0.2}, {0.3, 0.1}}
	m := newMethod(t, 2, 10, 10, 1)
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	m.st.X = [][]float64{{0.1, 0.2}, {0.3, 0.1}} // both chains at init rows
	m.startProposal()
	for i, s0 := range m.st.S0 {
		if want := 0.1 * 30; math.Abs(s0-want) > 1e-12 {
			t.Errorf("s0[%d] = %g, want init_scale × the prior box's width = %g", i, s0, want)
		}
	}
}

// A run stopped early (Ctrl-C, a fault) still gets a report: the draws
// kept so far, "stopped", through burn-in (none kept) and after
// (ABI.md §6.3; audit 6). FailingTarget forces re-draws and failures.
func TestReportWhenStopped(t *testing.T) {
	conformance.CheckStoppedReport(t, func() abi.Method { return newMethod(t, 4, 30, 20, 1) }, conformance.FailingTarget(), 11, 45)
}

// A state holding ±∞ (chains diverged on a target improper in the
// method's coordinates) cannot be saved: the error says why, not
// "json: unsupported value" (review 17).
func TestSaveDivergedState(t *testing.T) {
	m := newMethod(t, 2, 10, 10, 1)
	if err := m.Init(conformance.Conjugate2D().Target.Problem(1)); err != nil {
		t.Fatal(err)
	}
	m.st.AccM2[0] = math.Inf(1)
	if _, err := m.SaveState(); err == nil || !strings.Contains(err.Error(), "the chains diverged (a value of the state is +Inf)") {
		t.Errorf("SaveState: %v", err)
	}
}
