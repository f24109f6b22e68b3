package conformance

import (
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// streamer returns m as an abi.SampleStream and abi.Checkpointer, or fails.
func streamer(tb testing.TB, m abi.Method) (abi.SampleStream, abi.Checkpointer) {
	tb.Helper()
	s, ok1 := m.(abi.SampleStream)
	c, ok2 := m.(abi.Checkpointer)
	if !ok1 || !ok2 {
		tb.Fatalf("%T is not an abi.SampleStream and abi.Checkpointer", m)
	}
	return s, c
}

// finishTaking steps h until m is done, taking m's samples after every
// tell (as the kinfer host does) and appending them to journal.
func finishTaking(tb testing.TB, h *Host, m abi.Method, s abi.SampleStream, journal []abi.Sample) ([]abi.Sample, abi.Report) {
	tb.Helper()
	for !m.Done() {
		if err := h.Step(m); err != nil {
			tb.Fatal(err)
		}
		journal = append(journal, s.TakeSamples()...)
	}
	rep, err := m.Report()
	if err != nil {
		tb.Fatal(err)
	}
	return journal, rep
}

// CheckStreamResume checks abi.SampleStream with abi.Checkpointer. A
// straight run whose samples are taken after every tell must stream
// exactly its report's samples, in order. Then, for every stop n (tells),
// a run is saved after n tells with its samples taken, and restored into a
// fresh method (LoadState, then RestoreSamples with the samples taken so
// far); it must stream the rest of the straight run's samples and report
// what the straight run reported. The saved state may not contain the
// taken samples: its size must not grow with them, which is checked by
// requiring the state saved at the last stop to be at most maxState bytes.
func CheckStreamResume(tb testing.TB, newMethod func() abi.Method, target Target, seed uint64, stops []int, maxState int) {
	tb.Helper()
	mA := newMethod()
	sA, _ := streamer(tb, mA)
	hA := NewHost(target, seed)
	if err := mA.Init(target.Problem(seed)); err != nil {
		tb.Fatal(err)
	}
	streamA, repA := finishTaking(tb, hA, mA, sA, nil)
	if err := SameSamples(streamA, repA.Samples); err != nil {
		tb.Fatalf("the streamed samples are not the report's: %v", err)
	}
	for _, n := range stops {
		mB := newMethod()
		sB, cB := streamer(tb, mB)
		hB := NewHost(target, seed)
		if err := mB.Init(target.Problem(seed)); err != nil {
			tb.Fatal(err)
		}
		var journal []abi.Sample
		for range n {
			if err := hB.Step(mB); err != nil {
				tb.Fatal(err)
			}
			journal = append(journal, sB.TakeSamples()...)
		}
		blob, err := cB.SaveState()
		if err != nil {
			tb.Fatal(err)
		}
		if n == stops[len(stops)-1] && len(blob) > maxState {
			tb.Errorf("after %d tells and %d taken samples the state has %d bytes, more than %d: it holds the taken samples", n, len(journal), len(blob), maxState)
		}
		mC := newMethod()
		sC, cC := streamer(tb, mC)
		if err := mC.Init(target.Problem(seed)); err != nil {
			tb.Fatal(err)
		}
		if err := cC.LoadState(blob); err != nil {
			tb.Fatalf("load after %d tells: %v", n, err)
		}
		if len(journal) > 0 {
			if err := sC.RestoreSamples(journal[:len(journal)-1]); err == nil {
				tb.Errorf("after %d tells RestoreSamples accepted one sample too few", n)
			}
		}
		if err := sC.RestoreSamples(journal); err != nil {
			tb.Fatalf("restore after %d tells: %v", n, err)
		}
		if again, err := cC.SaveState(); err != nil || string(again) != string(blob) {
			tb.Fatalf("save → load → restore → save after %d tells is not the identity (%v)", n, err)
		}
		streamC, repC := finishTaking(tb, hB, mC, sC, journal)
		if err := SameSamples(streamA, streamC); err != nil {
			tb.Errorf("resumed after %d tells: the stream differs from the straight run's: %v", n, err)
		}
		if err := SameReports(repA, repC); err != nil {
			tb.Errorf("resumed after %d tells: the report differs from the straight run's: %v", n, err)
		}
	}
}
