package method

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// walk is a toy method: it asks for one prior draw, then for n points
// stepping from the best point so far, and keeps every result.
type walk struct {
	n, told int
	d       int
	best    []float64
	samples []abi.Sample
}

func (*walk) Spec() abi.Spec { return abi.Spec{Kind: abi.KindMethod, Name: "walk"} }
func (w *walk) Init(p abi.Problem) error {
	w.d = len(p.Params)
	if p.Seed != 42 || p.Params[0].Lower != -1 || p.Params[0].Default != 0 {
		return errors.New("bad problem")
	}
	return nil
}
func (w *walk) Ask() (abi.Batch, error) {
	if w.best == nil {
		return abi.Batch{Draw: 1}, nil
	}
	pts := make([][]float64, 2)
	for i := range pts {
		pts[i] = append([]float64{w.best[0] + float64(i+1)}, w.best[1:]...)
	}
	return abi.Batch{Points: pts, Want: abi.WantGradient}, nil
}
func (w *walk) Tell(rs []abi.Result) error {
	for _, r := range rs {
		w.best = r.Theta
		w.samples = append(w.samples, abi.Sample{Theta: r.Theta, LogPrior: r.LogPrior, LogLik: r.LogLik})
	}
	w.told++
	return nil
}
func (w *walk) Done() bool { return w.told >= w.n }
func (w *walk) Report() (abi.Report, error) {
	return abi.Report{Samples: w.samples, Extra: map[string]any{"told": w.told}}, nil
}
func (w *walk) SaveState() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(w.told)), nil
}
func (w *walk) LoadState(b []byte) error { w.told = int(binary.LittleEndian.Uint64(b)); return nil }

func TestServerRoundTrip(t *testing.T) {
	spec := specOf(&walk{})
	if !spec.Has(abi.CapCheckpoint) {
		t.Fatal("checkpoint not detected")
	}
	s := newServer(spec, func([]float64) (abi.Method, error) { return &walk{n: 2}, nil })
	if err := s.configure(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.init(2, 42, []float64{-1, 0}, []float64{1, 1}); err != nil {
		t.Fatal(err)
	}
	n, mode, want, err := s.ask()
	if err != nil || n != 1 || mode != 1 || want != 1 {
		t.Fatalf("first ask: %d %d %d %v", n, mode, want, err)
	}
	theta := []float64{0.5, 0.25}
	if err := s.tell(1, theta, []abi.Status{0}, []float64{-1}, []float64{-2}, nil); err != nil {
		t.Fatal(err)
	}
	theta[0] = 99 // the host reuses its buffers: the method must hold a copy
	n, mode, want, err = s.ask()
	if err != nil || n != 2 || mode != 0 || want != 3 || len(s.points) != 4 || s.points[0] != 1.5 {
		t.Fatalf("second ask: %d %d %d %v %v", n, mode, want, s.points, err)
	}
	if err := s.tell(3, make([]float64, 6), make([]abi.Status, 3), make([]float64, 3), make([]float64, 3), nil); err == nil {
		t.Fatal("tell with the wrong count accepted")
	}
	if err := s.tell(2, append([]float64(nil), s.points...), []abi.Status{0, 1}, []float64{-1, -1},
		[]float64{-3, math.Inf(-1)}, []float64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if !s.mth.Done() {
		t.Fatal("not done")
	}
	if err := s.report(); err != nil {
		t.Fatal(err)
	}
	if len(s.samples) != 3*4 || s.samples[0] != 0.5 || s.samples[3] != -2 || string(s.extra) != `{"told":2}` {
		t.Fatalf("samples %v extra %s", s.samples, s.extra)
	}
	if err := s.save(); err != nil || len(s.saved) != 8 {
		t.Fatal(err)
	}
	if err := s.load(binary.LittleEndian.AppendUint64(nil, 0)); err != nil || s.mth.Done() || s.rep != nil {
		t.Fatal("load did not restore the state")
	}
}

func TestAskErrors(t *testing.T) {
	s := newServer(specOf(&walk{}), func([]float64) (abi.Method, error) { return &walk{}, nil })
	s.configure(nil)
	s.init(2, 42, []float64{-1, 0}, []float64{1, 1})
	s.mth.(*walk).best = []float64{0} // wrong length points
	if _, _, _, err := s.ask(); err == nil || !strings.Contains(err.Error(), "length") {
		t.Fatalf("short point: %v", err)
	}
	if err := s.init(1, 42, []float64{1}, []float64{1}); err == nil {
		t.Fatal("empty bounds accepted")
	}
}

type wantsResiduals struct{ walk }

func (*wantsResiduals) Ask() (abi.Batch, error) {
	return abi.Batch{Draw: 1, Want: abi.WantResiduals}, nil
}

func TestAskResidualsRefused(t *testing.T) {
	s := newServer(specOf(&wantsResiduals{}), func([]float64) (abi.Method, error) { return &wantsResiduals{}, nil })
	s.configure(nil)
	s.init(1, 42, []float64{-1}, []float64{1})
	if _, _, _, err := s.ask(); err == nil || !strings.Contains(err.Error(), "residuals") {
		t.Fatalf("residuals: %v", err)
	}
}

// lsqWalk is a least-squares toy: it records its Problem and the results.
type lsqWalk struct {
	walk
	p   abi.Problem
	got []abi.Result
}

func (*lsqWalk) Spec() abi.Spec {
	return abi.Spec{Kind: abi.KindMethod, Name: "lsq-walk", Capabilities: []abi.Capability{abi.CapLeastSquares}}
}
func (w *lsqWalk) Init(p abi.Problem) error { w.p = p; return nil }
func (w *lsqWalk) Ask() (abi.Batch, error) {
	return abi.Batch{Points: [][]float64{w.p.Starts[0], w.p.Starts[1]}, Want: abi.WantJacobian}, nil
}
func (w *lsqWalk) Tell(rs []abi.Result) error { w.got = rs; return nil }

// ABI.md §6.4 on the guest side: init is held until problem, which gives
// the names, defaults, R and starts; the batch wants bits 2 and 3; tell_lsq
// hands residuals and Jacobians, a failed point's NaN rows as nil.
func TestLeastSquaresServer(t *testing.T) {
	m := &lsqWalk{}
	s := newServer(m.Spec(), func([]float64) (abi.Method, error) { return m, nil })
	if err := s.configure(nil); err != nil {
		t.Fatal(err)
	}
	if err := s.init(2, 7, []float64{-1, 0}, []float64{1, 5}); err != nil || s.inited {
		t.Fatalf("init: %v, inited %v (want held until problem)", err, s.inited)
	}
	if err := s.problem(2, 3, []float64{0.5, 2}, []float64{0, 1, 0.5, 4}, []byte("a\x00b")); err == nil {
		t.Fatal("names without the last NUL accepted")
	}
	if err := s.problem(2, 3, []float64{0.5, 2}, []float64{0, 1, 0.5, 4}, []byte("a\x00b\x00")); err != nil {
		t.Fatal(err)
	}
	p := m.p
	if p.Residuals != 3 || p.Seed != 7 || p.Params[1].Name != "b" || p.Params[1].Default != 2 || p.Params[1].Upper != 5 || len(p.Starts) != 2 || p.Starts[1][1] != 4 {
		t.Fatalf("problem %+v", p)
	}
	n, mode, want, err := s.ask()
	if err != nil || n != 2 || mode != 0 || want != 1|4|8 {
		t.Fatalf("ask: %d %d %d %v", n, mode, want, err)
	}
	nan := math.NaN()
	r := []float64{1, 2, 3, nan, nan, nan}
	jac := []float64{1, 0, 0, 1, 1, 1, nan, nan, nan, nan, nan, nan}
	if err := s.tellLSQ(2, []float64{0, 1, 0.5, 4}, []abi.Status{0, 1}, []float64{0, 0}, []float64{-7, math.Inf(-1)}, nil, r, jac); err != nil {
		t.Fatal(err)
	}
	if g := m.got; len(g[0].Residuals) != 3 || len(g[0].Jacobian) != 6 || g[0].Jacobian[5] != 1 || g[1].Residuals != nil || g[1].Jacobian != nil {
		t.Fatalf("results %+v", g)
	}
	r[0] = 99 // the host reuses its buffers
	if m.got[0].Residuals[0] != 1 {
		t.Fatal("residuals not copied")
	}
}
