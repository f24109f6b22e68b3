package wasm

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// The batch header's want bits 2-3 (ABI.md §6.4): refused without the
// capability (r < 0), accepted with it, bit 3 implying bit 2, and bounded
// by n·R·(d+1) values.
func TestParseBatchLeastSquares(t *testing.T) {
	mem := make([]byte, 64)
	header := func(n, want uint32) {
		binary.LittleEndian.PutUint32(mem[0:], n)
		binary.LittleEndian.PutUint32(mem[4:], 1) // draw from the prior
		binary.LittleEndian.PutUint32(mem[8:], want)
	}
	read := func(_ string, p uint32, n uint64) ([]byte, error) {
		if uint64(p)+n > uint64(len(mem)) {
			return nil, errors.New("out of range")
		}
		return mem[p : uint64(p)+n], nil
	}
	header(1, 1|8)
	if _, err := parseBatch(read, 0, 2, -1, -1); err == nil || !strings.Contains(err.Error(), `need capability "least_squares"`) {
		t.Fatalf("want bit 3 without the capability: %v", err)
	}
	b, err := parseBatch(read, 0, 2, 40, -1)
	if err != nil || b.Want != abi.WantLogTarget|abi.WantResiduals|abi.WantJacobian {
		t.Fatalf("with the capability: %v %v", b.Want, err)
	}
	header(1, 1|16)
	if _, err := parseBatch(read, 0, 2, 40, -1); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("bit 4: %v", err)
	}
	// 2^27 values: 1 point, R = 2^26, d = 1 wanting Jacobians is 2^27 (ok);
	// 3 such points are not.
	header(1, 1|8)
	if _, err := parseBatch(read, 0, 1, 1<<26, -1); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	header(3, 1|8)
	if _, err := parseBatch(read, 0, 1, 1<<26, -1); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("over the limit: %v", err)
	}
}

// The committed C Gauss–Newton through the host adapter: Init calls
// kinfer_method_problem; the first Ask wants residuals and a Jacobian at
// the first start; Tell refuses results whose residuals or Jacobian have
// the wrong size (a host error before the guest is called), and a problem
// without residuals is refused. A guest that gets another R than its
// problem's refuses it (here called directly).
func TestGaussNewtonAdapter(t *testing.T) {
	p := loadPlugin(t, "plugins/c/gaussnewton")
	ctx := context.Background()
	newM := func() *method {
		m, err := p.Method(ctx, []float64{200, 1e-12, 40, 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.(*method).Close() })
		return m.(*method)
	}
	prob := abi.Problem{Params: []abi.Param{{Name: "a", Lower: -5, Upper: 5}, {Name: "b", Lower: 0, Upper: 2}},
		Residuals: 3, Starts: [][]float64{{1, 1}}}
	if err := newM().Init(abi.Problem{Params: prob.Params}); err == nil || !strings.Contains(err.Error(), "gives no residuals") {
		t.Fatalf("problem without residuals: %v", err)
	}
	m := newM()
	if err := m.Init(prob); err != nil {
		t.Fatal(err)
	}
	b, err := m.Ask()
	if err != nil || len(b.Points) != 1 || b.Points[0][0] != 1 || b.Want != abi.WantLogTarget|abi.WantResiduals|abi.WantJacobian {
		t.Fatalf("ask: %+v %v", b, err)
	}
	good := abi.Result{Theta: []float64{1, 1}, Residuals: []float64{1, 2, 3}, Jacobian: []float64{1, 0, 0, 1, 1, 1}}
	bad := good
	bad.Residuals = []float64{1, 2}
	if err := m.Tell([]abi.Result{bad}); err == nil || !strings.Contains(err.Error(), "has 2 residuals, want 3") {
		t.Fatalf("short residuals: %v", err)
	}
	bad = good
	bad.Jacobian = []float64{1, 2, 3}
	if err := m.Tell([]abi.Result{bad}); err == nil || !strings.Contains(err.Error(), "Jacobian of 3 values, want 3×2") {
		t.Fatalf("short Jacobian: %v", err)
	}
	// The guest checks R against its problem's.
	m.mu.Lock()
	ret, err := m.in.call(exMethodTellLSQ, 1, 0, 0, 0, 0, 0, 4, 0, 0)
	m.mu.Unlock()
	if err != nil || i32(ret) == 0 || !strings.Contains(m.in.lastErrorOr(), "R = 4, the problem's is 3") {
		t.Fatalf("R mismatch: ret %d, %v, %q", i32(ret), err, m.in.lastErrorOr())
	}
	// A point without a Jacobian arrives as NaN rows: the method stops
	// that start and reports it.
	noJ := good
	noJ.Jacobian = nil
	if err := m.Tell([]abi.Result{noJ}); err != nil {
		t.Fatal(err)
	}
	if !m.Done() {
		t.Fatal("not done after the only start had no Jacobian")
	}
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	if ps := rep.Extra["per_start"].([]any)[0].(map[string]any); ps["stop"] != "no Jacobian at the start" || len(rep.Samples) != 1 ||
		math.Abs(rep.Extra["cost"].(float64)-7) > 0 {
		t.Fatalf("report %+v", rep)
	}
}

// BenchmarkGaussNewtonTell: one kinfer_method_tell_lsq of the C
// Gauss–Newton at Jackson's size (R = 10 000 residuals, d = 150): copying
// the 12 MB Jacobian into the guest, its column-scaled Householder QR
// (2Rd² ≈ 4.5e8 flops) and the Jacobi SVD of the 150×150 triangle, metered.
//
//	go test ./host/wasm -run XXX -bench GaussNewtonTell -benchtime 3x
func BenchmarkGaussNewtonTell(b *testing.B) {
	const R, d = 10000, 150
	p := loadPlugin(b, "plugins/c/gaussnewton")
	params := make([]abi.Param, d)
	for j := range params {
		params[j] = abi.Param{Name: "p" + string(rune('a'+j%26)) + string(rune('a'+j/26)), Lower: -10, Upper: 10}
	}
	start := make([]float64, d)
	res := abi.Result{Theta: start, Residuals: make([]float64, R), Jacobian: make([]float64, R*d)}
	// A well-conditioned pseudo-random Jacobian and residuals (a fixed
	// linear congruential sequence).
	u := uint64(1)
	next := func() float64 { u = u*6364136223846793005 + 1442695040888963407; return float64(u>>11)/(1<<53) - 0.5 }
	for i := range res.Residuals {
		res.Residuals[i] = next()
	}
	for i := range res.Jacobian {
		res.Jacobian[i] = next()
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m, err := p.Method(context.Background(), []float64{200, 1e-12, 40, 0})
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Init(abi.Problem{Params: params, Residuals: R, Starts: [][]float64{start}}); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Ask(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := m.Tell([]abi.Result{res}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if bt, err := m.Ask(); err != nil || bt.Want&abi.WantJacobian != 0 {
			b.Fatalf("after the first step: %+v %v (want a trial point)", bt.Want, err)
		}
		m.(*method).Close()
	}
}

// The batch header's want bit 4 (ABI.md §6.5): refused without the
// capability propagation (o < 0), accepted with it, never with bits 2-3,
// and bounded by n·o values.
func TestParseBatchOutputs(t *testing.T) {
	mem := make([]byte, 64)
	header := func(n, want uint32) {
		binary.LittleEndian.PutUint32(mem[0:], n)
		binary.LittleEndian.PutUint32(mem[4:], 1) // draw from the prior
		binary.LittleEndian.PutUint32(mem[8:], want)
	}
	read := func(_ string, p uint32, n uint64) ([]byte, error) {
		if uint64(p)+n > uint64(len(mem)) {
			return nil, errors.New("out of range")
		}
		return mem[p : uint64(p)+n], nil
	}
	header(2, 1|16)
	if _, err := parseBatch(read, 0, 2, 5, -1); err == nil || !strings.Contains(err.Error(), `needs capability "propagation"`) {
		t.Fatalf("bit 4 without the capability: %v", err)
	}
	b, err := parseBatch(read, 0, 2, -1, 6)
	if err != nil || b.Want != abi.WantLogTarget|abi.WantOutputs || b.Draw != 2 {
		t.Fatalf("with the capability: %v %v", b, err)
	}
	header(2, 1|16|4)
	if _, err := parseBatch(read, 0, 2, 5, 6); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Fatalf("bits 4 and 2: %v", err)
	}
	header(2, 1|32)
	if _, err := parseBatch(read, 0, 2, 5, 6); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("bit 5: %v", err)
	}
	header(3, 1|16)
	if _, err := parseBatch(read, 0, 2, -1, 1<<26); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("over the limit: %v", err)
	}
}

// The Go SDK's montecarlo (host/testdata/plugins/mcprop) through the host
// adapter (ABI.md §6.5): Init passes the outputs to kinfer_method_outputs
// and a problem without them is refused; Ask wants outputs (bit 4) as
// prior draws; Tell refuses a result whose outputs have the wrong length
// before the guest is called, and hands the right ones to the method,
// which reads output 1 at row 1 (settings quantity = 1, condition = 1).
func TestPropagationAdapter(t *testing.T) {
	p := loadPlugin(t, "host/testdata/plugins/mcprop")
	if !p.Spec.Has(abi.CapPropagation) {
		t.Fatalf("capabilities %v", p.Spec.Capabilities)
	}
	ctx := context.Background()
	// batch, min_samples, max_samples, output, window, tol, quantity, condition
	settings := []float64{4, 10, 12, 0, 0.1, 0.02, 1, 1}
	newM := func() *method {
		m, err := p.Method(ctx, settings)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.(methodCkpt).Close() })
		return m.(methodCkpt).method
	}
	params := []abi.Param{{Name: "a", Lower: 0, Upper: 1}}
	if err := newM().Init(abi.Problem{Params: params}); err == nil || !strings.Contains(err.Error(), "gives 0 outputs at 0 condition rows") {
		t.Fatalf("problem without outputs: %v", err)
	}
	m := newM()
	if err := m.Init(abi.Problem{Params: params, OutputNames: []string{"u", "v"}, OutputRows: 2}); err != nil {
		t.Fatal(err)
	}
	for k := 0; !m.Done(); k++ {
		b, err := m.Ask()
		if err != nil {
			t.Fatal(err)
		}
		if b.Want != abi.WantLogTarget|abi.WantOutputs || b.Draw != 4 {
			t.Fatalf("ask %d: %+v", k, b)
		}
		res := make([]abi.Result, b.Draw)
		for i := range res {
			x := float64(4*k + i)
			res[i] = abi.Result{Theta: []float64{x / 100}, Status: abi.OK, Outputs: []float64{-1, -2, -3, x}}
		}
		if k == 0 {
			bad := append([]abi.Result(nil), res...)
			bad[2].Outputs = bad[2].Outputs[:3]
			if err := m.Tell(bad); err == nil || !strings.Contains(err.Error(), "has 3 outputs, want 4") {
				t.Fatalf("short outputs: %v", err)
			}
		}
		if err := m.Tell(res); err != nil {
			t.Fatal(err)
		}
	}
	r, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	mc, _ := r.Extra["montecarlo"].(map[string]any)
	vals, _ := mc["values"].([]any)
	if mc["quantity"] != "v" || len(vals) != 12 || vals[5] != 5.0 || len(r.Samples) != 12 {
		t.Fatalf("report %v, %d samples", mc, len(r.Samples))
	}
}
