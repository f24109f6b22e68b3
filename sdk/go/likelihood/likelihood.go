package likelihood

import (
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/guest"
)

type server struct {
	spec  abi.Spec
	newFn abi.Constructor[abi.Likelihood]
	lik   abi.Likelihood
	grad  abi.GradY
	res   abi.Residuals
}

var srv *server

var role = guest.Role{Kind: abi.KindLikelihood, Caps: []guest.Capability{
	{Name: abi.CapGradY, Has: guest.Implementer[abi.GradY](), Method: "LogLikelihoodGrad"},
	{Name: abi.CapResiduals, Has: guest.Implementer[abi.Residuals](), Method: "Residuals"},
	{Name: abi.CapSigmaFree, Has: func(any) bool { return true }}, // a declaration, no method
	{Name: abi.CapBatch, Has: func(any) bool { return true }},     // served by evalBatch
}}

// Serve registers l, a likelihood without settings, as the plugin's
// component; call it from an init function. It panics if the spec is
// invalid, not a likelihood, lists settings (use ServeNew) or lists a
// capability l does not implement.
func Serve(l abi.Likelihood) {
	serve(specOf(l), func([]float64) (abi.Likelihood, error) { return l, nil })
}

// specOf is l's spec with the capabilities l implements added.
func specOf(l abi.Likelihood) abi.Spec { return role.SpecOf(l.Spec(), l) }

// ServeNew registers a likelihood built by newFn from the study's setting
// values (spec order) when kinfer_configure is called. The spec's
// capabilities are authoritative and checked against the built value.
func ServeNew(spec abi.Spec, newFn abi.Constructor[abi.Likelihood]) {
	serve(spec, newFn)
}

func serve(spec abi.Spec, newFn abi.Constructor[abi.Likelihood]) {
	s := newServer(spec, newFn)
	guest.Register(guest.Component{Spec: spec, Configure: s.configure})
	srv = s
}

func newServer(spec abi.Spec, newFn abi.Constructor[abi.Likelihood]) *server {
	return &server{spec: role.Check(spec), newFn: newFn}
}

func (s *server) configure(settings []float64) error {
	l, err := s.newFn(settings)
	if err != nil {
		return err
	}
	if err := role.Implements(s.spec, l); err != nil {
		return err
	}
	s.lik, s.grad, s.res = l, nil, nil
	if s.spec.Has(abi.CapGradY) {
		s.grad = l.(abi.GradY)
	}
	if s.spec.Has(abi.CapResiduals) {
		s.res = l.(abi.Residuals)
	}
	return nil
}

func ready(K, m int32) (*server, int32) {
	if srv == nil {
		_, err := guest.Describe()
		return nil, guest.Fail(err)
	}
	if err := guest.Ready(); err != nil {
		return nil, guest.Fail(err)
	}
	if K < 0 || m < 1 {
		return nil, guest.Failf("%s: dimensions K=%d m=%d; want K ≥ 0 and m ≥ 1", srv.spec.Name, K, m)
	}
	return srv, 0
}

func clamp(st abi.Status) abi.Status {
	switch st {
	case abi.OK, abi.Failed, abi.Invalid:
		return st
	}
	return abi.Failed
}

func (s *server) eval(m int, y, obs, sigma, out []float64) abi.Status {
	v, st := s.lik.LogLikelihood(m, y, obs, sigma)
	out[0] = v
	return clamp(st)
}

func (s *server) gradY(m int, y, obs, sigma, out, gy []float64) abi.Status {
	if s.grad == nil {
		guest.SetError(s.spec.Name + ": the likelihood does not list capability \"grad_y\"")
		return abi.Failed
	}
	v, st := s.grad.LogLikelihoodGrad(m, y, obs, sigma, gy)
	out[0] = v
	return clamp(st)
}

func (s *server) residuals(m int, y, obs, sigma, r []float64) abi.Status {
	if s.res == nil {
		guest.SetError(s.spec.Name + ": the likelihood does not list capability \"residuals\"")
		return abi.Failed
	}
	return clamp(s.res.Residuals(m, y, obs, sigma, r))
}

// evalBatch evaluates b points' outputs (ys, b×n) against the same data
// (capability "batch"): through the likelihood's own abi.BatchLikelihood
// when it has one, else one LogLikelihood per point, inside the module.
func (s *server) evalBatch(m, b, n int, ys, obs, sigma, out []float64, status []abi.Status) {
	if bl, ok := s.lik.(abi.BatchLikelihood); ok {
		pts := make([][]float64, b)
		for i := range pts {
			pts[i] = ys[i*n : (i+1)*n : (i+1)*n]
		}
		bl.LogLikelihoodBatch(m, pts, obs, sigma, out, status)
		for i := range status {
			status[i] = clamp(status[i])
		}
		return
	}
	for i := 0; i < b; i++ {
		status[i] = s.eval(m, ys[i*n:(i+1)*n:(i+1)*n], obs, sigma, out[i:i+1])
	}
}
