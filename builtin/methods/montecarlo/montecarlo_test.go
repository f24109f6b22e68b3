package montecarlo

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

func defaults() []float64 {
	s := make([]float64, len(Spec.Settings))
	for i, v := range Spec.Settings {
		s[i] = v.Default
	}
	return s
}

// fakeHost drives a method as the host does: prior draws from its own
// seeded stream (uniform on [0, 1]^d), residual 0 the quantity q(θ).
type fakeHost struct {
	rng *rand.Rand
	q   func(th []float64) float64
	d   int
}

func (h *fakeHost) eval(b abi.Batch) []abi.Result {
	out := make([]abi.Result, b.Draw)
	for i := range out {
		th := make([]float64, h.d)
		for j := range th {
			th[j] = h.rng.Float64()
		}
		v := h.q(th)
		st := abi.OK
		if math.IsNaN(v) {
			st = abi.NonFinite
		}
		out[i] = abi.Result{Theta: th, Status: st, Residuals: []float64{v}}
	}
	return out
}

// drive runs m to its end, as the host does, failing t on an error.
func (h *fakeHost) drive(t *testing.T, m abi.Method) {
	t.Helper()
	for !m.Done() {
		b, err := m.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Tell(h.eval(b)); err != nil {
			t.Fatal(err)
		}
	}
}

func problem(d int) abi.Problem {
	p := abi.Problem{Seed: 7, Residuals: 1}
	for i := 0; i < d; i++ {
		p.Params = append(p.Params, abi.Param{Name: "w", Lower: 0, Upper: 1})
	}
	return p
}

// The quantity θ₁ + θ₂ of two uniform draws (triangular on [0, 2]) has
// known percentiles: p10 = √0.2 = 0.4472, p50 = 1, p90 = 2 − √0.2. The
// run stops by the rule at or after min_samples, every reported value is
// within 3 standard errors of the truth (SE of a quantile ≈
// √(p(1−p)/n)/f(q)), failures are counted, and the rule holds on the
// reported values.
func TestTriangular(t *testing.T) {
	m, err := New(defaults())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Init(problem(2)); err != nil {
		t.Fatal(err)
	}
	calls := 0
	h := &fakeHost{rng: rand.New(rand.NewPCG(1, 2)), d: 2, q: func(th []float64) float64 {
		calls++
		if calls%97 == 0 {
			return math.NaN()
		}
		return th[0] + th[1]
	}}
	h.drive(t, m)
	r, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	s := r.Extra["montecarlo"].(Summary)
	t.Logf("n %d failed %d converged %v dev %.4f mean %.4f p10 %.4f p50 %.4f p90 %.4f", s.N, s.Failed, s.Converged, s.RuleDev, s.Mean, s.Pct["p10"], s.Pct["p50"], s.Pct["p90"])
	if !s.Converged || s.N+s.Failed < 1000 || s.Failed == 0 || len(r.Samples) != s.N { // min_samples counts draws
		t.Fatalf("converged %v, n %d, failed %d, samples %d", s.Converged, s.N, s.Failed, len(r.Samples))
	}
	n := float64(s.N)
	q10 := math.Sqrt(0.2)
	se10 := math.Sqrt(0.1*0.9/n) / q10 // density at p10 is q10
	se50 := math.Sqrt(0.25/n) / 1
	for _, c := range []struct {
		name      string
		got, want float64
		se        float64
	}{{"p10", s.Pct["p10"], q10, se10}, {"p50", s.Pct["p50"], 1, se50}, {"p90", s.Pct["p90"], 2 - q10, se10}, {"mean", s.Mean, 1, math.Sqrt(1.0 / 6 / n)}} {
		if math.Abs(c.got-c.want) > 3*c.se {
			t.Errorf("%s %g, want %g ± %g", c.name, c.got, c.want, 3*c.se)
		}
	}
	if math.Abs(s.Span1090-(2-2*q10)) > 6*se10 {
		t.Errorf("span %g, want %g", s.Span1090, 2-2*q10)
	}
}

// The rule: an i.i.d. sequence of 5 000 converges; a drifting one (the
// running mean still moving by more than 2 % over the last 10 %) does not.
func TestRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]float64, 5000)
	for i := range v {
		v[i] = 30 + 3*rng.NormFloat64()
	}
	if ok, dev := Rule(v, 0.1, 0.02); !ok {
		t.Errorf("i.i.d. sequence: rule fails (deviation %g)", dev)
	}
	for i := range v {
		v[i] = float64(i + 1)
	}
	if ok, dev := Rule(v, 0.1, 0.02); ok {
		t.Errorf("drifting sequence passes (deviation %g)", dev)
	}
	mean, cv := Running([]float64{1, 2, 3})
	if mean[2] != 2 || math.Abs(cv[2]-50) > 1e-12 {
		t.Errorf("running mean %v, cv %v", mean, cv)
	}
}

// A run checkpointed between batches (also between Ask and Tell) and
// resumed in a fresh method ends with the same report.
func TestCheckpoint(t *testing.T) {
	run := func(stopAt int) abi.Report {
		m, _ := New(defaults())
		if err := m.Init(problem(3)); err != nil {
			t.Fatal(err)
		}
		h := &fakeHost{rng: rand.New(rand.NewPCG(5, 6)), d: 3, q: func(th []float64) float64 { return th[0] * (1 + th[1]) }}
		for k := 0; !m.Done(); k++ {
			b, err := m.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if k == stopAt {
				st, err := m.(abi.Checkpointer).SaveState()
				if err != nil {
					t.Fatal(err)
				}
				m2, _ := New(defaults())
				if err := m2.Init(problem(3)); err != nil {
					t.Fatal(err)
				}
				if err := m2.(abi.Checkpointer).LoadState(st); err != nil {
					t.Fatal(err)
				}
				m = m2
				if b2, _ := m.Ask(); b2.Draw != b.Draw {
					t.Fatalf("resumed Ask %d, before %d", b2.Draw, b.Draw)
				}
			}
			if err := m.Tell(h.eval(b)); err != nil {
				t.Fatal(err)
			}
		}
		r, err := m.Report()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(-1), run(7)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("resumed run differs")
	}
	m, _ := New(defaults())
	m.Init(problem(3))
	if err := m.(abi.Checkpointer).LoadState([]byte(`{"format":1,"config":{"batch":1}}`)); err == nil {
		t.Error("foreign settings accepted")
	}
}

func TestSettings(t *testing.T) {
	s := defaults()
	s[0] = 0
	if _, err := New(s); err == nil {
		t.Error("batch 0 accepted")
	}
	s = defaults()
	s[4] = 1
	if _, err := New(s); err == nil {
		t.Error("window 1 accepted")
	}
	// Counts beyond the int range (int(1e300) is math.MinInt64 on amd64,
	// which once passed the index checks and crashed Tell) and non-finite
	// tolerances are refused, naming the setting.
	for _, i := range []int{0, 1, 2, 3, 6, 7} {
		for _, v := range []float64{1e19, 1e300, -1e300, math.Inf(1), math.NaN(), 2.5} {
			s = defaults()
			s[i] = v
			if _, err := New(s); err == nil || !strings.Contains(err.Error(), Spec.Settings[i].Name) {
				t.Errorf("%s = %g: error %v", Spec.Settings[i].Name, v, err)
			}
		}
	}
	s = defaults()
	s[5] = math.Inf(1)
	if _, err := New(s); err == nil {
		t.Error("tol +Inf accepted")
	}
	m, _ := New(defaults())
	p := problem(2)
	p.Residuals = 0
	if err := m.Init(p); err == nil {
		t.Error("no residuals accepted")
	}
}

// The shared spec check of kinfer's methods: the spec validates, has the
// checkpoint capability, and each bad setting is refused naming it.
func TestSpec(t *testing.T) {
	conformance.CheckSpec(t, Spec, New, defaults(), map[string]float64{
		"batch": 0, "min_samples": 5, "max_samples": math.Inf(1), "output": math.NaN(), "window": 1, "tol": 0,
		"quantity": -2, "condition": 0.5,
	})
}

// outputsHost is fakeHost for a method with quantity: it answers
// WantOutputs with 2 condition rows × 3 outputs per point, where output 1
// at row 1 is q(θ) and every other entry something else, and a log
// likelihood of −θ₀ that samples.csv must carry.
func (h *fakeHost) outputs(t *testing.T, b abi.Batch) []abi.Result {
	if b.Want != abi.WantOutputs {
		t.Fatalf("want %b, not outputs", b.Want)
	}
	res := h.eval(b)
	for i := range res {
		q := res[i].Residuals[0]
		res[i].Residuals = nil
		res[i].LogLik = -res[i].Theta[0]
		if res[i].Status == abi.OK {
			res[i].Outputs = []float64{q + 100, q + 200, q + 300, q + 400, q, q + 500}
		}
	}
	return res
}

func quantityProblem(d int) abi.Problem {
	p := problem(d)
	p.Residuals, p.OutputNames, p.OutputRows = 0, []string{"u", "v", "w"}, 2
	return p
}

// With quantity = 1 (output v) and condition = 1 the method asks for
// outputs, reads v at row 1 — the triangular θ₁ + θ₂, with the known
// percentiles of TestTriangular —, names the quantity in its summary,
// gives the samples the host's log likelihood, and resumes exactly from a
// checkpoint.
func TestQuantityFromOutputs(t *testing.T) {
	set := defaults()
	set[6], set[7] = 1, 1
	run := func(stopAt int) abi.Report {
		m, err := New(set)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Init(quantityProblem(2)); err != nil {
			t.Fatal(err)
		}
		h := &fakeHost{rng: rand.New(rand.NewPCG(1, 2)), d: 2, q: func(th []float64) float64 { return th[0] + th[1] }}
		for k := 0; !m.Done(); k++ {
			b, err := m.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if k == stopAt {
				st, _ := m.(abi.Checkpointer).SaveState()
				m, _ = New(set)
				m.Init(quantityProblem(2))
				if err := m.(abi.Checkpointer).LoadState(st); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Tell(h.outputs(t, b)); err != nil {
				t.Fatal(err)
			}
		}
		r, err := m.Report()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run(-1)
	s := r.Extra["montecarlo"].(Summary)
	if s.Quantity != "v" || s.Condition != 1 || !s.Converged || s.N < 1000 {
		t.Fatalf("quantity %q condition %d converged %v n %d", s.Quantity, s.Condition, s.Converged, s.N)
	}
	q10 := math.Sqrt(0.2)
	if se := math.Sqrt(0.09/float64(s.N)) / q10; math.Abs(s.Pct["p10"]-q10) > 4*se || math.Abs(s.Pct["p90"]-(2-q10)) > 4*se {
		t.Errorf("p10 %g p90 %g, want %g, %g ± %g", s.Pct["p10"], s.Pct["p90"], q10, 2-q10, 4*se)
	}
	for i, smp := range r.Samples {
		if smp.LogLik != -smp.Theta[0] || s.Values[i] != smp.Theta[0]+smp.Theta[1] {
			t.Fatalf("sample %d: log likelihood %g, value %g, θ %v", i, smp.LogLik, s.Values[i], smp.Theta)
		}
	}
	ja, _ := json.Marshal(r)
	jb, _ := json.Marshal(run(5))
	if string(ja) != string(jb) {
		t.Error("resumed run differs")
	}
	// Init refuses an output or a row the study does not have.
	for _, c := range []struct{ q, row float64 }{{3, 0}, {0, 2}} {
		set := defaults()
		set[6], set[7] = c.q, c.row
		m, _ := New(set)
		if err := m.Init(quantityProblem(2)); err == nil {
			t.Errorf("quantity %g at row %g accepted", c.q, c.row)
		}
	}
	// The old way without a likelihood names the fix.
	m, _ := New(defaults())
	p := quantityProblem(2)
	if err := m.Init(p); err == nil || !strings.Contains(err.Error(), `quantity = "<output>" (outputs: u, v, w)`) {
		t.Errorf("no likelihood, no quantity: %v", err)
	}
}

// Values spanning more than the float64 range (max − min = +Inf, so the
// bin width is +Inf and (y − min)/w is NaN for y = max) once indexed the
// histogram with int(NaN); every value must land in a bin.
func TestSummariseHugeSpan(t *testing.T) {
	s := Summarise([]float64{-1e308, 0, 1e308, 1e308}, 0, 0.1, 0.02)
	total := 0
	for _, c := range s.HistCounts {
		total += c
	}
	// w = 1e307 (computed as max/20 − min/20, without overflow): −1e308 in
	// the first bin, 0 in bin 10, 1e308 (where (y − min)/w overflows) in
	// the last; the edges are finite.
	if total != 4 || s.HistCounts[0] != 1 || s.HistCounts[10] != 1 || s.HistCounts[len(s.HistCounts)-1] != 2 {
		t.Errorf("histogram counts %v, want 1 in the first bin, 1 in bin 10 and 2 in the last", s.HistCounts)
	}
	for _, e := range s.HistEdges {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			t.Errorf("edges %v", s.HistEdges)
			break
		}
	}
}

// When every draw fails there is nothing to propagate: Report is an error
// (the run once ended "done" with mean 0, sd 0), and a summary of no value
// has no statistic (NaN, null in JSON), never 0 ± 0. Failures and a rule
// that did not hold are warnings.
func TestEveryDrawFailed(t *testing.T) {
	s := defaults()
	s[1], s[2] = 10, 20 // min_samples, max_samples
	m, _ := New(s)
	if err := m.Init(problem(2)); err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{rng: rand.New(rand.NewPCG(1, 2)), d: 2, q: func([]float64) float64 { return math.NaN() }}
	h.drive(t, m)
	if _, err := m.Report(); err == nil || !strings.Contains(err.Error(), "every one of the 20 draws failed") {
		t.Fatalf("report: %v", err)
	}
	if e := Summarise(nil, 20, 0.1, 0.02); !math.IsNaN(e.Mean) || !math.IsNaN(e.SD) || !math.IsNaN(e.Min) {
		t.Errorf("empty summary %+v", e)
	}
	// Half the draws failing: a warning naming the count.
	m, _ = New(s)
	m.Init(problem(2))
	h.q = func(th []float64) float64 {
		if th[0] < 0.5 {
			return math.NaN()
		}
		return th[0]
	}
	h.drive(t, m)
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	w, _ := rep.Extra["warnings"].([]any)
	if len(w) == 0 || !strings.Contains(fmt.Sprint(w), "draws failed and are left out") {
		t.Errorf("warnings %v", w)
	}
}

// A quantity of final mean 0: a constant 0 converges at once (its
// relative deviations were 0/0 = NaN, and the run was reported as not
// converged), and a symmetric one is judged relative to its sd.
func TestRuleMeanZero(t *testing.T) {
	if ok, dev := Rule(make([]float64, 100), 0.1, 0.02); !ok || dev != 0 {
		t.Errorf("constant 0: %v %v", ok, dev)
	}
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i%2)*2 - 1 // −1, 1, −1, 1, …: mean 0 at every even count
	}
	ok, dev := Rule(v, 0.1, 0.02)
	if !ok || math.IsNaN(dev) || dev > 0.02 {
		t.Errorf("±1: %v %v", ok, dev)
	}
}

// A run stopped early reports the draws so far with stopped: true and a
// warning, as every built-in method does (audit 7: montecarlo gave
// neither).
func TestReportWhenStopped(t *testing.T) {
	m, _ := New(defaults())
	if err := m.Init(problem(3)); err != nil {
		t.Fatal(err)
	}
	// Before any value: stopped, and JSON can hold the report (review:
	// its statistics were NaN).
	rep0, err := m.Report()
	if err != nil || rep0.Extra["stopped"] != true {
		t.Fatalf("report right after Init: %v %v", rep0.Extra, err)
	}
	if _, err := json.Marshal(rep0.Extra); err != nil {
		t.Errorf("report right after Init does not encode: %v", err)
	}
	h := &fakeHost{rng: rand.New(rand.NewPCG(5, 6)), d: 3, q: func(th []float64) float64 { return th[0] * (1 + th[1]) }}
	b, err := m.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Tell(h.eval(b)); err != nil {
		t.Fatal(err)
	}
	if m.Done() {
		t.Fatal("done after one batch: the test needs a stopped run")
	}
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := rep.Extra["warnings"].([]any)
	if rep.Extra["stopped"] != true || len(ws) == 0 || !strings.Contains(ws[len(ws)-1].(string), "the run stopped after") || len(rep.Samples) != b.Len() {
		t.Errorf("stopped report: stopped=%v, warnings %v, %d samples for %d draws", rep.Extra["stopped"], ws, len(rep.Samples), b.Len())
	}
}

// Values beyond 2^500, whose squares overflow, and values spanning nearly
// ±MaxFloat64, whose differences overflow (audit 9: sd and cv null with
// converged true at 1e160; at ±1.7e308 a null mean and 914 of 2000 values
// in the last bin, none in bins 12–19). Scaling by a power of two is
// exact, so the statistics of v·2^600 are those of v times 2^600, the CV
// and the rule's deviation the same; a uniform grid fills every bin.
func TestSummariseBeyondOverflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float64, 2000)
	big := make([]float64, len(v))
	const s = 0x1p600 // ≈ 4.1e180
	for i := range v {
		v[i] = 0.5 + 0.5*rng.Float64()
		big[i] = v[i] * s
	}
	a, b := Summarise(v, 0, 0.1, 0.02), Summarise(big, 0, 0.1, 0.02)
	if b.Mean != a.Mean*s || b.SD != a.SD*s || b.CV != a.CV || b.RuleDev != a.RuleDev || b.Converged != a.Converged || b.Pct["p50"] != a.Pct["p50"]*s {
		t.Errorf("scaled by 2^600: mean %g sd %g cv %g dev %g; want %g %g %g %g", b.Mean, b.SD, b.CV, b.RuleDev, a.Mean*s, a.SD*s, a.CV, a.RuleDev)
	}
	for i, c := range b.HistCounts {
		if c != a.HistCounts[i] {
			t.Errorf("scaled histogram %v, want %v", b.HistCounts, a.HistCounts)
			break
		}
	}
	// A grid of 2000 values over [−1.7e308, 1.7e308]: 100 per bin, mean 0
	// (symmetric), sd finite.
	grid := make([]float64, 2000)
	for i := range grid {
		f := (float64(i) + 0.5) / float64(len(grid))
		grid[i] = (1-f)*-1.7e308 + f*1.7e308
	}
	g := Summarise(grid, 0, 0.1, 0.02)
	for i, c := range g.HistCounts {
		if c != 100 {
			t.Errorf("bin %d holds %d values, want 100 (counts %v)", i, c, g.HistCounts)
			break
		}
	}
	if math.Abs(g.Mean) > 1e-12*1.7e308 || math.IsNaN(g.SD) || math.IsInf(g.SD, 0) {
		t.Errorf("grid: mean %g, sd %g", g.Mean, g.SD)
	}
}

// More values than the report lists: left out with a count and a warning
// naming samples.csv's column (audit 9: 8 million values made a 167 MiB
// summary.json); max_samples whose draws would not fit in the memory
// budget are refused at Init (8 million draws of 2 parameters peaked at
// 2.4 GB under a 1 GiB budget).
func TestReportValuesBounded(t *testing.T) {
	if need := memoryNeed(8_000_000, 2); 2*need <= 1<<30 {
		t.Errorf("8e6 draws planned at %g bytes, within 1 GiB", 2*need)
	}
	s := Summarise(make([]float64, MaxReportValues+1), 0, 0.1, 0.02)
	if len(s.Values) != MaxReportValues+1 {
		t.Fatal("Summarise keeps every value")
	}
	m := &Method{cfg: Config{Quantity: 0, MaxSamples: MaxReportValues + 1, MinSamples: 1}, inited: true, column: "q", name: "q"}
	m.st.Values = make([]float64, MaxReportValues+1)
	m.st.Draws = make([][]float64, MaxReportValues+1)
	m.st.LogPrior = make([]float64, MaxReportValues+1)
	m.st.LogLik = make([]float64, MaxReportValues+1)
	m.st.Done, m.st.Converged = true, true
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Extra["montecarlo"].(Summary)
	ws, _ := rep.Extra["warnings"].([]any)
	if got.Values != nil || got.ValuesLeftOut != MaxReportValues+1 || len(ws) != 1 || !strings.Contains(ws[0].(string), "they are in samples.csv's column q") {
		t.Errorf("values %d, left out %d, warnings %v", len(got.Values), got.ValuesLeftOut, ws)
	}
}

// min_samples counts draws, failed ones included, as max_samples does
// (audit 10, author10 F5): with a fifth of the draws failing and
// min_samples = max_samples, the rule is tried at the end and holds for
// i.i.d. values.
func TestMinSamplesCountsFailedDraws(t *testing.T) {
	s := defaults()
	for i, st := range Spec.Settings {
		switch st.Name {
		case "min_samples", "max_samples":
			s[i] = 3000
		case "batch":
			s[i] = 100
		}
	}
	am, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	m := am.(*Method)
	m.cfg.Quantity, m.cfg.Output = -1, 0
	m.inited = true
	rng := rand.New(rand.NewPCG(7, 8))
	for !m.Done() {
		res := make([]abi.Result, 100)
		for i := range res {
			res[i] = abi.Result{Theta: []float64{0}, Status: abi.OK, Residuals: []float64{10 + rng.NormFloat64()}}
			if i%5 == 0 {
				res[i].Status = abi.Failed
			}
		}
		if err := m.Tell(res); err != nil {
			t.Fatal(err)
		}
	}
	if !m.st.Converged || m.st.Failed != 600 || len(m.st.Values) != 2400 {
		t.Errorf("converged %v, %d failed, %d values", m.st.Converged, m.st.Failed, len(m.st.Values))
	}
}

// A window holding no earlier running value checks nothing, so the rule
// does not hold (audit 16: window 1e-9 claimed convergence at
// min_samples with a largest deviation of 0).
func TestRuleEmptyWindow(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i % 7)
	}
	if ok, dev := Rule(v, 1e-9, 0.02); ok || !math.IsInf(dev, 1) {
		t.Errorf("window 1e-9 of 1000 values: held %v, deviation %v", ok, dev)
	}
	if _, dev := Rule(v, 0.1, 0.02); math.IsInf(dev, 1) {
		t.Errorf("window 0.1: deviation %v, want a measured one", dev)
	}
}
