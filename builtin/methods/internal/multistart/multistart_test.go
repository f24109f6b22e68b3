package multistart

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// runs: -1 not started, 0 started, 1 done.
func statusOf(runs []int) Status {
	return func(k int) (bool, bool) { return runs[k] >= 0, runs[k] == 1 }
}

// Draws come first for the starts not started; once all have started, the
// iterates of those not done; a pending batch is asked again unchanged.
func TestPlan(t *testing.T) {
	runs := []int{-1, 0, -1, 1}
	var s Schedule
	s.Plan(4, statusOf(runs))
	if s.Pending != Draw || !slices.Equal(s.PendingStarts, []int{0, 2}) {
		t.Fatalf("got %+v, want draws for 0 and 2", s)
	}
	s.Plan(4, statusOf([]int{0, 0, 0, 0}))
	if s.Pending != Draw || !slices.Equal(s.PendingStarts, []int{0, 2}) {
		t.Fatalf("a pending batch changed: %+v", s)
	}
	starts, kind := s.Take()
	if kind != Draw || !slices.Equal(starts, []int{0, 2}) || s.Pending != None || s.PendingStarts != nil {
		t.Fatalf("Take: %v %d, left %+v", starts, kind, s)
	}
	s.Plan(4, statusOf([]int{0, 1, 0, 1}))
	if s.Pending != Iterate || !slices.Equal(s.PendingStarts, []int{0, 2}) {
		t.Fatalf("got %+v, want iterates of 0 and 2", s)
	}
}

// Check refuses every kind of damage a checkpoint could carry.
func TestCheck(t *testing.T) {
	st := statusOf([]int{-1, 0, 1})
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{None, nil}, ""},
		{Schedule{Draw, []int{0}}, ""},
		{Schedule{Iterate, []int{1}}, ""},
		{Schedule{Draw, []int{3}}, "out of range"},
		{Schedule{Draw, []int{0, 0}}, "repeated"},
		{Schedule{Draw, []int{1}}, "has started"},
		{Schedule{Iterate, []int{0}}, "not started or is done"},
		{Schedule{Iterate, []int{2}}, "not started or is done"},
		{Schedule{7, nil}, "unknown pending kind"},
		{Schedule{Iterate, nil}, "names no start"},
	} {
		err := c.s.Check(3, st)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: error %v, want %q", c.s, err, c.want)
		}
	}
}

func TestCounts(t *testing.T) {
	var c Counts
	c.Add([]abi.Result{{Status: abi.OK}, {Status: abi.OutOfSupport}, {Status: abi.Failed}, {Status: abi.OK}})
	if c != (Counts{Evaluations: 3, Failures: 1, OutOfSupport: 1}) {
		t.Errorf("got %+v", c)
	}
}

// Ask asks draws, then copies of the pending starts' points, with want.
func TestAskAndAllDone(t *testing.T) {
	runs := []int{-1, 0, 1}
	pt := [][]float64{{5, 6}, {1, 2}, {3, 4}}
	var s Schedule
	b, _ := s.Ask("m", true, 3, statusOf(runs), abi.WantGradient, func(k int) []float64 { return pt[k] })
	if b.Draw != 1 || b.Points != nil || b.Want != abi.WantGradient {
		t.Fatalf("first batch %+v, want one draw", b)
	}
	s.Take()
	runs[0] = 0
	b, _ = s.Ask("m", true, 3, statusOf(runs), abi.WantGradient, func(k int) []float64 { return pt[k] })
	if b.Draw != 0 || len(b.Points) != 2 || b.Points[0][0] != 5 || b.Points[1][0] != 1 {
		t.Fatalf("second batch %+v, want the points of starts 0 and 1", b)
	}
	b.Points[0][0] = 9
	if pt[0][0] != 5 {
		t.Error("Ask did not copy the points")
	}
	if _, err := s.Ask("m", false, 3, statusOf(runs), 0, nil); err == nil || err.Error() != "m: Ask before Init" {
		t.Errorf("Ask before Init: %v", err)
	}
	if _, err := s.Ask("m", true, 1, statusOf([]int{1}), 0, nil); err == nil || err.Error() != "m: Ask after the run is done" {
		t.Errorf("Ask when done: %v", err)
	}
	if AllDone(3, statusOf(runs)) || !AllDone(3, statusOf([]int{1, 1, 1})) {
		t.Error("AllDone")
	}
}

// Save and Load refuse before Init; Load reports a header error as is and
// a shape error as a corrupt checkpoint, and a round trip is exact.
func TestSaveLoad(t *testing.T) {
	type st struct{ X []float64 }
	if _, err := Save("m", false, &st{}); err == nil || !strings.Contains(err.Error(), "m: SaveState before Init") {
		t.Errorf("Save before Init: %v", err)
	}
	ok := func() error { return nil }
	if err := Load("m", false, nil, &st{}, ok, ok); err == nil || !strings.Contains(err.Error(), "m: LoadState before Init") {
		t.Errorf("Load before Init: %v", err)
	}
	in := st{X: []float64{0.1, 1.0 / 3, 1e-300}}
	b, err := Save("m", true, &in)
	if err != nil {
		t.Fatal(err)
	}
	var out st
	if err := Load("m", true, b, &out, ok, ok); err != nil || !slices.Equal(in.X, out.X) {
		t.Errorf("round trip: %v, %v", out, err)
	}
	hdr := errors.New("other seed")
	if err := Load("m", true, b, &out, func() error { return hdr }, ok); err != hdr {
		t.Errorf("header error: %v", err)
	}
	if err := Load("m", true, b, &out, ok, func() error { return hdr }); err == nil || !strings.Contains(err.Error(), "m: corrupt checkpoint: other seed") {
		t.Errorf("shape error: %v", err)
	}
	if err := Load("m", true, []byte("{"), &out, ok, ok); err == nil || !strings.Contains(err.Error(), "m: reading checkpoint") {
		t.Errorf("bad JSON: %v", err)
	}
}
