package model

import (
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/ligament"
)

type lin struct{}

func (lin) Spec() abi.Spec {
	return abi.Spec{Kind: abi.KindModel, Name: "lin",
		Params: []abi.Param{{Name: "a", Lower: 0, Upper: 1}}, Conditions: []abi.Column{{Name: "x"}}, Outputs: []abi.Column{{Name: "y"}}}
}

func (lin) Eval(theta, x, y []float64) abi.Status {
	if theta[0] < 0 {
		return abi.Status(7) // outside what a guest may return
	}
	for i := range x {
		y[i] = theta[0] * x[i]
	}
	return abi.OK
}

type linVJP struct{ lin }

func (linVJP) VJP(theta, x, v, y, g []float64) abi.Status {
	g[0] = 0
	for i := range x {
		y[i] = theta[0] * x[i]
		g[0] += v[i] * x[i]
	}
	return abi.OK
}

func TestSpecOfCapabilities(t *testing.T) {
	if c := specOf(lin{}).Capabilities; len(c) != 0 {
		t.Fatalf("lin: %v", c)
	}
	if c := specOf(linVJP{}).Capabilities; len(c) != 1 || c[0] != abi.CapVJP {
		t.Fatalf("linVJP: %v", c)
	}
	// Serving never appends to the caller's spec.
	before := len(ligament.Spec.Capabilities)
	s := role.Check(ligament.Spec)
	s.Capabilities = append(s.Capabilities, abi.CapVJP)
	if len(ligament.Spec.Capabilities) != before {
		t.Fatal("clone aliases the caller's capabilities")
	}
}

// The batch loop gives the builtin's outputs bit for bit.
func TestEvalBatchMatchesBuiltin(t *testing.T) {
	s := newServer(role.Check(ligament.Spec), ligament.New)
	if err := s.configure([]float64{30}); err != nil {
		t.Fatal(err)
	}
	thetas := []float64{5000, 0, 12000, -0.1, 2000, 0.4}
	x := []float64{25, 30, 30.9, 31.8, 40}
	b, K := 3, len(x)
	y := make([]float64, b*K*2)
	st := make([]abi.Status, b)
	s.evalBatch(b, K, thetas, x, y, st)
	ref, _ := ligament.New([]float64{30})
	want := make([]float64, K*2)
	for i := 0; i < b; i++ {
		ref.Eval(thetas[2*i:2*i+2], x, want)
		for k := range want {
			if math.Float64bits(y[i*K*2+k]) != math.Float64bits(want[k]) || st[i] != abi.OK {
				t.Fatalf("point %d value %d: %v vs %v (status %v)", i, k, y[i*K*2+k], want[k], st[i])
			}
		}
	}
	jac, yj := make([]float64, K*2*2), make([]float64, K*2)
	if st := s.jacobian(thetas[:2], x, yj, jac); st != abi.OK {
		t.Fatal(st)
	}
	if st := s.vjpOne(thetas[:2], x, yj, yj, jac[:2]); st != abi.Failed {
		t.Fatal("vjp without the capability did not fail")
	}
}

func TestStatusClampAndCapabilityCheck(t *testing.T) {
	s := newServer(specOf(lin{}), func([]float64) (abi.Model, error) { return lin{}, nil })
	if err := s.configure(nil); err != nil {
		t.Fatal(err)
	}
	st := make([]abi.Status, 2)
	y := make([]float64, 2)
	s.evalBatch(2, 1, []float64{-1, 2}, []float64{3}, y, st)
	if st[0] != abi.Failed || st[1] != abi.OK || y[1] != 6 {
		t.Fatalf("statuses %v y %v", st, y)
	}
	spec := lin{}.Spec()
	spec.Capabilities = []abi.Capability{abi.CapJacobian}
	s = newServer(spec, func([]float64) (abi.Model, error) { return lin{}, nil })
	if err := s.configure(nil); err == nil || !strings.Contains(err.Error(), "jacobian") {
		t.Fatalf("unimplemented listed capability: %v", err)
	}
}

type linDependent struct{ lin }

func (linDependent) RowsIndependent() bool { return false }

// rows_independent has no export (ABI.md §4): a spec given to ServeNew may
// declare it for a model without the method (audit 5: every configure
// failed), but not for one whose method says the rows depend on each
// other; Serve adds it only for a method that says yes.
func TestRowsIndependentDeclared(t *testing.T) {
	spec := lin{}.Spec()
	spec.Capabilities = []abi.Capability{abi.CapRowsIndependent}
	s := newServer(spec, func([]float64) (abi.Model, error) { return lin{}, nil })
	if err := s.configure(nil); err != nil {
		t.Fatalf("declared rows_independent, no method: %v", err)
	}
	s = newServer(spec, func([]float64) (abi.Model, error) { return linDependent{}, nil })
	if err := s.configure(nil); err == nil || !strings.Contains(err.Error(), "RowsIndependent method returns false") {
		t.Fatalf("declared rows_independent, method says no: %v", err)
	}
	if c := specOf(linDependent{}).Capabilities; len(c) != 0 {
		t.Fatalf("Serve of a model whose RowsIndependent is false lists %v", c)
	}
}

// linTape serves capability pullback: the tape is x itself.
type linTape struct{ linVJP }

func (linTape) EvalTape(theta, x, y, tape []float64) ([]float64, abi.Status) {
	for i := range x {
		y[i] = theta[0] * x[i]
	}
	return append(tape[:0], x...), abi.OK
}

func (linTape) PullTape(theta, x, tape, v, g []float64) abi.Status {
	if len(tape) != len(x) {
		g[0] = 0
		return abi.Invalid
	}
	g[0] = 0
	for i := range tape {
		g[0] += v[i] * tape[i]
	}
	return abi.OK
}

// Capability pullback: listed when the model implements
// abi.TapePullbacker; the server's forward pass gives y and the tape
// (its storage reused by the next pass), the pullback the VJP's g; a model
// without the capability fails with a message.
func TestPullbackServer(t *testing.T) {
	m := linTape{}
	spec := specOf(m)
	if !spec.Has(abi.CapPullback) || !spec.Has(abi.CapVJP) {
		t.Fatalf("capabilities %v, want vjp and pullback", spec.Capabilities)
	}
	s := newServer(spec, func([]float64) (abi.Model, error) { return m, nil })
	if err := s.configure(nil); err != nil {
		t.Fatal(err)
	}
	x, y := []float64{1, 2, 3}, make([]float64, 3)
	st, tape := s.forward([]float64{0.5}, x, y)
	if st != abi.OK || len(tape) != 3 || tape[2] != 3 || y[1] != 1 {
		t.Fatalf("forward: %v, tape %v, y %v", st, tape, y)
	}
	st2, tape2 := s.forward([]float64{0.5}, x, y)
	if st2 != abi.OK || &tape2[0] != &tape[0] {
		t.Fatal("the second forward pass did not reuse the tape's storage")
	}
	g, gv := make([]float64, 1), make([]float64, 1)
	v := []float64{1, -1, 2}
	if st := s.pullback([]float64{0.5}, x, tape, v, g); st != abi.OK {
		t.Fatal(st)
	}
	s.vjpOne([]float64{0.5}, x, v, make([]float64, 3), gv)
	if g[0] != gv[0] || g[0] != 5 {
		t.Fatalf("pullback g %v, VJP %v, want 5", g, gv)
	}
	plain := newServer(specOf(linVJP{}), func([]float64) (abi.Model, error) { return linVJP{}, nil })
	if err := plain.configure(nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := plain.forward([]float64{0.5}, x, y); st != abi.Failed {
		t.Fatalf("forward without the capability: %v", st)
	}
}
