package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// This file holds the checks every method's tests share: bit-for-bit
// comparison of results, determinism, checkpoint resume and refusal, the
// settings contract and the report's Extra.

// SameSamples returns nil if a and b are bit-identical (same length; every
// sample's Theta, LogPrior and LogLik equal bit for bit, so that NaNs and
// signed zeros count too), and otherwise an error naming the first
// difference.
func SameSamples(a, b []abi.Sample) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d samples against %d", len(a), len(b))
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	for i := range a {
		switch {
		case !same(a[i].LogPrior, b[i].LogPrior):
			return fmt.Errorf("sample %d: log prior %v against %v", i, a[i].LogPrior, b[i].LogPrior)
		case !same(a[i].LogLik, b[i].LogLik):
			return fmt.Errorf("sample %d: log lik %v against %v", i, a[i].LogLik, b[i].LogLik)
		case len(a[i].Theta) != len(b[i].Theta):
			return fmt.Errorf("sample %d: %d values against %d", i, len(a[i].Theta), len(b[i].Theta))
		}
		for j := range a[i].Theta {
			if !same(a[i].Theta[j], b[i].Theta[j]) {
				return fmt.Errorf("sample %d θ%d: %v against %v", i, j, a[i].Theta[j], b[i].Theta[j])
			}
		}
	}
	return nil
}

// SameReports returns nil if a and b have bit-identical samples
// (SameSamples) and deeply equal Extra (reflect.DeepEqual), and otherwise an
// error saying which differs.
func SameReports(a, b abi.Report) error {
	if err := SameSamples(a.Samples, b.Samples); err != nil {
		return fmt.Errorf("samples differ: %w", err)
	}
	if !reflect.DeepEqual(a.Extra, b.Extra) {
		var keys []string
		for k, v := range a.Extra {
			if w, ok := b.Extra[k]; !ok || !reflect.DeepEqual(v, w) {
				keys = append(keys, k)
			}
		}
		for k := range b.Extra {
			if _, ok := a.Extra[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return fmt.Errorf("extra differs in %v", keys)
	}
	return nil
}

// runOnce initialises a fresh method for target with seed and drives it to
// the end with a host of the same seed, asking twice per step if askTwice.
func runOnce(tb testing.TB, newMethod func() abi.Method, target Target, seed uint64, askTwice bool) abi.Report {
	tb.Helper()
	m := newMethod()
	h := NewHost(target, seed)
	h.AskTwice = askTwice
	if err := m.Init(target.Problem(seed)); err != nil {
		tb.Fatal(err)
	}
	rep, err := h.Finish(m)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// CheckDeterminism runs fresh methods from newMethod over target and checks
// that a method is a function of its seed and its results alone: two runs
// with seed give the same report (SameReports); a run whose host calls Ask
// twice per step (Host.AskTwice) gives that report too, so Ask has no side
// effect; and a run with seed+1 differs, as told by distinct (nil: the
// samples are not bit-identical).
func CheckDeterminism(tb testing.TB, newMethod func() abi.Method, target Target, seed uint64, distinct func(a, b abi.Report) bool) {
	tb.Helper()
	a, b := runOnce(tb, newMethod, target, seed, false), runOnce(tb, newMethod, target, seed, false)
	if err := SameReports(a, b); err != nil {
		tb.Errorf("same seed gave different results: %v", err)
	}
	if err := SameReports(a, runOnce(tb, newMethod, target, seed, true)); err != nil {
		tb.Errorf("calling Ask twice per step changed the results: %v", err)
	}
	if distinct == nil {
		distinct = func(a, b abi.Report) bool { return SameSamples(a.Samples, b.Samples) != nil }
	}
	if !distinct(a, runOnce(tb, newMethod, target, seed+1, false)) {
		tb.Error("different seeds gave identical results")
	}
}

// ResumeOptions tunes CheckResume.
type ResumeOptions struct {
	// Straight, if set, is called with the straight run's report and number
	// of asks before any resume, to check that the target exercises what
	// the resumes are to cover (failures, re-draws, stage boundaries); it
	// may call tb.Fatal.
	Straight func(tb testing.TB, rep abi.Report, asks int)
	// Stops returns the numbers of tells, each in 1..asks, after which a
	// run is saved and resumed, given the straight run's number of asks;
	// nil: every n from 1 to asks.
	Stops func(asks int) []int
}

// CheckResume checks abi.Checkpointer's promise of an exact continuation.
// It runs a fresh method from newMethod (which must be an
// abi.Checkpointer) over target with seed straight through; then, for every
// stop n, drives another to n tells and saves it twice: right after the
// Tell, and (unless it is done) after the next Ask, between Ask and Tell.
// Each state is loaded into a fresh method initialised with the same
// problem; save → load → save must give the same bytes, a method restored
// between Ask and Tell must ask the same batch again, and a host in the
// saved run's state (Host.Clone) then finishes the restored method, whose
// report must equal the straight run's (SameReports: samples bit for bit,
// Extra deeply).
func CheckResume(tb testing.TB, newMethod func() abi.Method, target Target, seed uint64, o ResumeOptions) {
	tb.Helper()
	checkpointer := func(m abi.Method) abi.Checkpointer {
		c, ok := m.(abi.Checkpointer)
		if !ok {
			tb.Fatalf("%T is not an abi.Checkpointer", m)
		}
		return c
	}
	repA, hA, err := Run(newMethod(), target, seed)
	if err != nil {
		tb.Fatal(err)
	}
	total := hA.Asks
	if o.Straight != nil {
		o.Straight(tb, repA, total)
	}
	var stops []int
	if o.Stops != nil {
		stops = o.Stops(total)
	} else {
		for n := 1; n <= total; n++ {
			stops = append(stops, n)
		}
	}
	// resume loads blob into a fresh method and lets h finish it; asked is
	// the pending batch, if any, the saved method had asked.
	resume := func(n int, where string, blob []byte, asked *abi.Batch, h *Host) {
		tb.Helper()
		mC := newMethod()
		if err := mC.Init(target.Problem(seed)); err != nil {
			tb.Fatal(err)
		}
		cC := checkpointer(mC)
		if err := cC.LoadState(blob); err != nil {
			tb.Fatalf("load after %d tells (%s): %v", n, where, err)
		}
		if again, err := cC.SaveState(); err != nil || string(again) != string(blob) {
			tb.Fatalf("save → load → save after %d tells (%s) is not the identity (%v)", n, where, err)
		}
		if asked != nil {
			if again, err := mC.Ask(); err != nil || !reflect.DeepEqual(again, *asked) {
				tb.Fatalf("after %d tells the restored method asks %+v, %v; the saved one asked %+v", n, again, err, *asked)
			}
		}
		repC, err := h.Finish(mC)
		if err != nil {
			tb.Fatalf("resume after %d tells (%s): %v", n, where, err)
		}
		if err := SameReports(repA, repC); err != nil {
			tb.Errorf("resumed after %d of %d tells (%s): results differ from the straight run: %v", n, total, where, err)
		}
	}
	for _, n := range stops {
		if n < 1 || n > total {
			tb.Fatalf("stop %d outside 1..%d", n, total)
		}
		mB := newMethod()
		cB := checkpointer(mB)
		hB := NewHost(target, seed)
		if err := mB.Init(target.Problem(seed)); err != nil {
			tb.Fatal(err)
		}
		for range n {
			if err := hB.Step(mB); err != nil {
				tb.Fatal(err)
			}
		}
		blob, err := cB.SaveState()
		if err != nil {
			tb.Fatalf("save after %d tells: %v", n, err)
		}
		hP := hB.Clone()
		resume(n, "after the tell", blob, nil, hB)
		if mB.Done() {
			continue
		}
		asked, err := mB.Ask()
		if err != nil {
			tb.Fatal(err)
		}
		if blob, err = cB.SaveState(); err != nil {
			tb.Fatalf("save after %d tells and an ask: %v", n, err)
		}
		resume(n, "between ask and tell", blob, &asked, hP)
	}
}

// CheckLoadRefusals checks that a checkpoint is refused where it does not
// belong. blob was saved by a method from newMethod initialised for target
// with seed. Loading it must fail with an error that mentions "seed" into a
// fresh method initialised with seed+1, with one that mentions "settings"
// into each method from others (other settings, initialised with seed), and
// with some error when the blob is cut in half.
func CheckLoadRefusals(tb testing.TB, blob []byte, newMethod func() abi.Method, target Target, seed uint64, others ...func() abi.Method) {
	tb.Helper()
	load := func(m abi.Method, s uint64, b []byte) error {
		if err := m.Init(target.Problem(s)); err != nil {
			tb.Fatal(err)
		}
		c, ok := m.(abi.Checkpointer)
		if !ok {
			tb.Fatalf("%T is not an abi.Checkpointer", m)
		}
		return c.LoadState(b)
	}
	if err := load(newMethod(), seed+1, blob); err == nil || !strings.Contains(err.Error(), "seed") {
		tb.Errorf("loading a checkpoint of another seed: %v", err)
	}
	for _, o := range others {
		if err := load(o(), seed, blob); err == nil || !strings.Contains(err.Error(), "settings") {
			tb.Errorf("loading a checkpoint of other settings: %v", err)
		}
	}
	if err := load(newMethod(), seed, blob[:len(blob)/2]); err == nil {
		tb.Error("loading a truncated checkpoint succeeded")
	}
}

// CheckSpec checks a method's Spec and constructor: the spec validates and
// has the checkpoint capability; each entry of bad, a setting's name and a
// value it must refuse, put into good (a valid settings vector in Spec
// order) makes newMethod fail with an error naming that setting; and a
// vector of the wrong length is refused.
func CheckSpec(tb testing.TB, spec abi.Spec, newMethod func([]float64) (abi.Method, error), good []float64, bad map[string]float64) {
	tb.Helper()
	if err := spec.Validate(); err != nil {
		tb.Fatal(err)
	}
	if !spec.Has(abi.CapCheckpoint) {
		tb.Error("spec lacks the checkpoint capability")
	}
	if _, err := newMethod(good); err != nil {
		tb.Fatalf("good settings %v: %v", good, err)
	}
	for name, v := range bad {
		idx := -1
		for k, st := range spec.Settings {
			if st.Name == name {
				idx = k
			}
		}
		if idx < 0 {
			tb.Fatalf("no setting %q", name)
		}
		s := append([]float64(nil), good...)
		s[idx] = v
		if _, err := newMethod(s); err == nil || !strings.Contains(err.Error(), name) {
			tb.Errorf("bad %s: error %v", name, err)
		}
	}
	if _, err := newMethod([]float64{4}); err == nil {
		tb.Error("New accepted one setting")
	}
}

// CheckExtra checks that a report's Extra marshals to JSON and has every
// key of keys.
func CheckExtra(tb testing.TB, extra map[string]any, keys ...string) {
	tb.Helper()
	if _, err := json.Marshal(extra); err != nil {
		tb.Errorf("Extra does not marshal: %v", err)
	}
	for _, key := range keys {
		if _, ok := extra[key]; !ok {
			tb.Errorf("Extra lacks %q", key)
		}
	}
}

// CheckProtocolStart checks the start of the ask/tell contract on m, a
// fresh method not yet initialised: Ask before Init fails; after
// Init(target.Problem(seed)), Tell without an Ask fails and the first batch
// asks for draw prior draws (no points) with want; Tell with draw+1
// results, or with draw points of a wrong dimension, fails; and so does
// Report before the method is done (which must answer). It leaves m with
// its first batch pending.
func CheckProtocolStart(tb testing.TB, m abi.Method, target Target, seed uint64, draw int, want abi.Want) {
	tb.Helper()
	if _, err := m.Ask(); err == nil {
		tb.Error("Ask before Init succeeded")
	}
	if err := m.Init(target.Problem(seed)); err != nil {
		tb.Fatal(err)
	}
	if err := m.Tell(nil); err == nil {
		tb.Error("Tell without Ask succeeded")
	}
	b, err := m.Ask()
	if err != nil || b.Draw != draw || len(b.Points) != 0 || b.Want != want {
		tb.Fatalf("first batch %+v, %v; want Draw: %d, Want: %v", b, err, draw, want)
	}
	if err := m.Tell(make([]abi.Result, draw+1)); err == nil {
		tb.Error("Tell with the wrong number of results succeeded")
	}
	wrong := 1
	if len(target.Params) == 1 {
		wrong = 2
	}
	bad := make([]abi.Result, draw)
	for k := range bad {
		bad[k] = abi.Result{Theta: make([]float64, wrong)}
	}
	if err := m.Tell(bad); err == nil {
		tb.Error("Tell with points of the wrong dimension succeeded")
	}
	// ABI.md §6.3: a method answers report in any state after init (a
	// run stopped early), here with its first batch pending.
	if rep, err := m.Report(); err != nil || rep.Extra["stopped"] != true {
		tb.Errorf("Report before done: %v, stopped = %v; want an answer that says stopped", err, rep.Extra["stopped"])
	}
}

// CheckStoppedReport checks ABI.md §6.3's "a method MUST answer [samples
// and report] in any state after init": after Init and after each of the
// first steps ask/tell rounds (a run stopped by Ctrl-C or a fault), Report
// answers without an error, says "stopped" in Extra while the method is
// not done, and every sample it gives has the problem's dimension with
// finite values and a finite log target (audit 6: every built-in method
// refused, and summary.json lost its method report).
func CheckStoppedReport(tb testing.TB, newMethod func() abi.Method, target Target, seed uint64, steps int) {
	tb.Helper()
	m := newMethod()
	h := NewHost(target, seed)
	if err := m.Init(target.Problem(seed)); err != nil {
		tb.Fatalf("init: %v", err)
	}
	d := len(target.Params)
	for i := 0; i <= steps && !m.Done(); i++ {
		rep, err := m.Report()
		if err != nil {
			tb.Fatalf("report after %d rounds, not done: %v", i, err)
		}
		if rep.Extra["stopped"] != true {
			tb.Errorf("report after %d rounds, not done: Extra[stopped] = %v, want true", i, rep.Extra["stopped"])
		}
		for k, s := range rep.Samples {
			ok := len(s.Theta) == d && !math.IsNaN(s.LogPrior+s.LogLik) && !math.IsInf(s.LogPrior+s.LogLik, 0)
			for _, x := range s.Theta {
				ok = ok && !math.IsNaN(x) && !math.IsInf(x, 0)
			}
			if !ok {
				tb.Errorf("report after %d rounds: sample %d is %+v (d = %d)", i, k, s, d)
			}
		}
		if _, err := json.Marshal(rep.Extra); err != nil {
			tb.Errorf("report after %d rounds: Extra does not encode: %v", i, err)
		}
		if err := h.Step(m); err != nil {
			tb.Fatalf("round %d: %v", i+1, err)
		}
	}
}
