package likelihood

import (
	"testing"

	"github.com/kinfer/kinfer/abi"
)

type sq struct{}

func (sq) Spec() abi.Spec { return abi.Spec{Kind: abi.KindLikelihood, Name: "sq"} }
func (sq) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	var s float64
	for i := range y {
		r := (obs[i] - y[i]) / sigma[i]
		s -= 0.5 * r * r
	}
	return s, abi.OK
}
func (sq) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	for i := range y {
		r[i] = (obs[i] - y[i]) / sigma[i]
	}
	return abi.OK
}

func TestServer(t *testing.T) {
	spec := specOf(sq{})
	if !spec.Has(abi.CapResiduals) || spec.Has(abi.CapGradY) {
		t.Fatalf("capabilities %v", spec.Capabilities)
	}
	s := newServer(spec, func([]float64) (abi.Likelihood, error) { return sq{}, nil })
	if err := s.configure(nil); err != nil {
		t.Fatal(err)
	}
	out := []float64{0}
	if st := s.eval(1, []float64{1, 2}, []float64{2, 2}, []float64{0.5, 1}, out); st != abi.OK || out[0] != -2 {
		t.Fatalf("eval %v %v", out, st)
	}
	r := make([]float64, 2)
	if st := s.residuals(1, []float64{1, 2}, []float64{2, 2}, []float64{0.5, 1}, r); st != abi.OK || r[0] != 2 || r[1] != 0 {
		t.Fatalf("residuals %v", r)
	}
	if st := s.gradY(1, nil, nil, nil, out, nil); st != abi.Failed {
		t.Fatal("grad_y without the capability did not fail")
	}
}

// Declarations (sigma_free, batch) are listed only by the author: Serve
// does not add them. With "batch" listed, evalBatch gives each point what
// eval gives it.
func TestBatchDeclaration(t *testing.T) {
	spec := specOf(sq{})
	if spec.Has(abi.CapSigmaFree) || spec.Has(abi.CapBatch) {
		t.Fatalf("Serve added a declaration: %v", spec.Capabilities)
	}
	spec.Capabilities = append(spec.Capabilities, abi.CapBatch)
	s := newServer(spec, func([]float64) (abi.Likelihood, error) { return sq{}, nil })
	if err := s.configure(nil); err != nil {
		t.Fatal(err)
	}
	obs, sig := []float64{2, 2}, []float64{0.5, 1}
	ys := []float64{1, 2, 3, 5, 2, 2}
	out := make([]float64, 3)
	st := make([]abi.Status, 3)
	s.evalBatch(1, 3, 2, ys, obs, sig, out, st)
	for i := 0; i < 3; i++ {
		one := []float64{0}
		s1 := s.eval(1, ys[2*i:2*i+2], obs, sig, one)
		if st[i] != s1 || out[i] != one[0] {
			t.Errorf("point %d: batch %v %v, single %v %v", i, out[i], st[i], one[0], s1)
		}
	}
}
