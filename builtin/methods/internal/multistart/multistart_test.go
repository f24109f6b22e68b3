package multistart

import (
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
