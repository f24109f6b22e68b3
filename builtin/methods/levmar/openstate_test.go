package levmar

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
	"github.com/kinfer/kinfer/builtin/methods/internal/lsqtest"
	"github.com/kinfer/kinfer/builtin/prior"
)

func openTarget() conformance.Target {
	params := []abi.Param{{Name: "a", Lower: -5, Upper: 5}, {Name: "b", Lower: -5, Upper: 5}, {Name: "c", Lower: -5, Upper: 5}}
	res := func(x []float64) []float64 { return []float64{x[0] - 1, 10 * (x[1] - x[0]*x[0]), x[2] - 2} }
	jac := func(x []float64) []float64 { return []float64{1, 0, 0, -20 * x[0], 10, 0, 0, 0, 1} }
	return lsqtest.Target(params, res, jac)
}

func openState(t *testing.T, edit func(runs []any)) ([]byte, *conformance.Host) {
	tgt := openTarget()
	m := newWith(map[string]float64{"starts": 1})
	h := conformance.NewHost(tgt, 1)
	if err := m.Init(tgt.Problem(1)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := h.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	b, err := m.(abi.Checkpointer).SaveState()
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	edit(findRuns(st))
	b, _ = json.Marshal(st)
	return b, h
}

func findRuns(v any) []any {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["runs"].([]any); ok {
			return r
		}
		for _, y := range x {
			if r := findRuns(y); r != nil {
				return r
			}
		}
	}
	return nil
}

// open_lower and open_upper in a saved state are both absent or both
// of the dimension's length: another shape, from a damaged checkpoint,
// is refused at load (review of audit 7: it panicked in propose).
func TestOpenBoundsInStateChecked(t *testing.T) {
	for name, edit := range map[string]func([]any){
		"short open_lower": func(runs []any) { runs[0].(map[string]any)["open_lower"] = []bool{false} },
		"open_lower only":  func(runs []any) { runs[0].(map[string]any)["open_lower"] = []bool{false, false, false} },
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := openState(t, edit)
			tgt := openTarget()
			m := newWith(map[string]float64{"starts": 1})
			if err := m.Init(tgt.Problem(1)); err != nil {
				t.Fatal(err)
			}
			if err := m.(abi.Checkpointer).LoadState(b); err == nil || !strings.Contains(err.Error(), "wrong shape") {
				t.Errorf("a state with %s: %v, want it refused as the wrong shape (once it panicked on resume)", name, err)
			}
		})
	}
}

// A closed bound (uniform prior) projected onto in the same trial as an
// open one (lognormal's 0, the first parameter) is not marked open: one
// bound is marked per out-of-support trial, in the parameters' order.
func TestClosedBoundNotMarkedOpen(t *testing.T) {
	params := []abi.Param{{Name: "a", Lower: 0, Upper: 10}, {Name: "b", Lower: 0, Upper: 10}}
	res := func(x []float64) []float64 { return []float64{x[0] + 1, x[1] + 1} }
	jac := func(x []float64) []float64 { return []float64{1, 0, 0, 1} }
	tgt := lsqtest.Target(params, res, jac)
	ln, err := prior.NewLogNormal(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	tgt.Prior[0] = ln
	h := conformance.NewHost(tgt, 1)
	m := newWith(map[string]float64{"starts": 1})
	rep := lsqtest.Drive(t, m, h, [][]float64{{1, 1}})
	r := m.(*Method).st.Runs[0]
	t.Logf("theta %v exit %v openLower %v warnings %v", rep.Samples[0].Theta, rep.Extra["exit_reason"], r.OpenLower, rep.Extra["warnings"])
	if r.OpenLower != nil && r.OpenLower[1] {
		t.Errorf("b's closed bound 0 (uniform prior, in the support) marked open; b = %g, not on its bound", rep.Samples[0].Theta[1])
	}
}
