package surrogate

import (
	"bytes"
	"math"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// krigingToy fits one Kriging predictor per output of f on 60 Sobol sites
// of [0,1]² × [0,2] and returns them as read back from a file.
func krigingToy(t testing.TB) ([]*kriging.Model, nn.Provenance) {
	t.Helper()
	s, err := design.NewSobol(3, true, 11)
	if err != nil {
		t.Fatal(err)
	}
	pts := s.Points(0, 60)
	y0, y1 := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		p[2] *= 2
		y0[i], y1[i] = f(p[0], p[1], p[2])
	}
	// A small nugget: the interpolating Gaussian fit is so ill-conditioned
	// (θ₂ at its lower bound) that ŷ carries ≈ 1e-9 of rounding noise and
	// a central difference with step 1e-5 is off by 1e-4.
	m0, err := kriging.Fit(pts, y0, kriging.Options{Order: 1, Nugget: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := kriging.Fit(pts, y1, kriging.Options{Order: 2, Correlation: kriging.Matern52})
	if err != nil {
		t.Fatal(err)
	}
	_, p := trained(t)
	p.Design, p.TrainingSamples = "sobol n=60", 60
	var buf bytes.Buffer
	if err := kriging.Write(&buf, []*kriging.Model{m0, m1}, p); err != nil {
		t.Fatal(err)
	}
	ms, q, err := kriging.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return ms, q
}

// The Kriging surrogate evaluates the predictors row by row, learned f,
// names itself in its spec and refuses conditions outside the sites' box.
func TestKrigingEvalAndSpec(t *testing.T) {
	ms, p := krigingToy(t)
	m, err := NewKriging(ms, p, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Spec()
	if len(s.Params) != 2 || len(s.Conditions) != 1 || len(s.Outputs) != 2 || !s.Has(abi.CapJacobian) || !s.Has(abi.CapVJP) {
		t.Fatalf("spec %+v", s)
	}
	if !bytes.Contains([]byte(s.Doc), []byte("Kriging")) {
		t.Errorf("doc %q", s.Doc)
	}
	theta, x := []float64{0.3, 0.7}, []float64{0.2, 0.5, 1.5}
	y := make([]float64, 6)
	if st := m.Eval(theta, x, y); st != abi.OK {
		t.Fatal(st)
	}
	for k, xk := range x {
		for i := range 2 {
			want, _ := ms[i].Mean([]float64{theta[0], theta[1], xk})
			if y[k*2+i] != want {
				t.Errorf("row %d output %d: %v, predictor %v", k, i, y[k*2+i], want)
			}
		}
		// 60 sites of a smooth function: a loose check of the plumbing.
		f0, f1 := f(theta[0], theta[1], xk)
		if math.Abs(y[k*2]-f0) > 0.05 || math.Abs(y[k*2+1]-f1) > 0.05 {
			t.Errorf("row %d: y %v %v, f %v %v", k, y[k*2], y[k*2+1], f0, f1)
		}
	}
	if st := m.Eval(theta, []float64{2.5}, y[:2]); st != abi.Invalid {
		t.Errorf("condition outside the sites: status %v", st)
	}
}

// Kriging Jacobian against central differences of Eval; VJP = vᵀJ.
func TestKrigingJacobianAndVJP(t *testing.T) {
	ms, p := krigingToy(t)
	m, _ := NewKriging(ms, p, []float64{0, 0})
	checkJacobianAndVJP(t, m)
}
