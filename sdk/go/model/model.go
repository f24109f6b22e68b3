package model

import (
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/guest"
)

// server is the registered model and its dimensions.
type server struct {
	spec    abi.Spec
	d, c, m int
	newFn   abi.Constructor[abi.Model]
	mdl     abi.Model
	jac     abi.Jacobian // nil unless the model has the capability
	vjp     abi.VJP
	tp      abi.TapePullbacker // capability pullback
	tape    []float64          // the last forward pass's tape (guest-owned, ABI.md §6.1)
}

var srv *server

var role = guest.Role{Kind: abi.KindModel, Caps: []guest.Capability{
	{Name: abi.CapJacobian, Has: guest.Implementer[abi.Jacobian](), Method: "Jacobian"},
	{Name: abi.CapVJP, Has: guest.Implementer[abi.VJP](), Method: "VJP"},
	{Name: abi.CapRowsIndependent, Has: rowsIndependent, Method: "RowsIndependent", Refuses: rowsDependent},
	{Name: abi.CapPullback, Has: guest.Implementer[abi.TapePullbacker](), Method: "EvalTape"},
}}

// rowsIndependent: the model declares its rows independent (a method that
// returns true).
func rowsIndependent(v any) bool {
	r, ok := v.(abi.RowsIndependent)
	return ok && r.RowsIndependent()
}

// rowsDependent: the model's RowsIndependent method returns false. A spec
// given to ServeNew may list rows_independent without the method (the
// capability has no export, ABI.md §4), but not against it.
func rowsDependent(v any) bool {
	r, ok := v.(abi.RowsIndependent)
	return ok && !r.RowsIndependent()
}

// Serve registers m, a model without settings, as the plugin's component.
// It must be called from an init function. It panics (the module then traps
// in _initialize with the message on standard error) if m's spec is
// invalid, is not a model, lists settings (use ServeNew), or lists a
// capability m does not implement.
func Serve(m abi.Model) {
	serve(specOf(m), func([]float64) (abi.Model, error) { return m, nil })
}

// specOf is m's spec with the capabilities m implements added.
func specOf(m abi.Model) abi.Spec { return role.SpecOf(m.Spec(), m) }

// ServeNew registers a model whose instances are built by newFn from the
// study's setting values (spec order), once kinfer_configure has been
// called. spec is what kinfer_describe returns; its capabilities must be
// implemented by every model newFn returns. Call it from an init function.
func ServeNew(spec abi.Spec, newFn abi.Constructor[abi.Model]) {
	serve(spec, newFn)
}

func serve(spec abi.Spec, newFn abi.Constructor[abi.Model]) {
	s := newServer(spec, newFn)
	guest.Register(guest.Component{Spec: spec, Configure: s.configure})
	srv = s
}

func newServer(spec abi.Spec, newFn abi.Constructor[abi.Model]) *server {
	spec = role.Check(spec)
	return &server{spec: spec, d: len(spec.Params), c: len(spec.Conditions), m: len(spec.Outputs), newFn: newFn}
}

func (s *server) configure(settings []float64) error {
	m, err := s.newFn(settings)
	if err != nil {
		return err
	}
	if err := role.Implements(s.spec, m); err != nil {
		return err
	}
	s.mdl, s.jac, s.vjp, s.tp = m, nil, nil, nil
	if s.spec.Has(abi.CapPullback) {
		s.tp = m.(abi.TapePullbacker)
	}
	if s.spec.Has(abi.CapJacobian) {
		s.jac = m.(abi.Jacobian)
	}
	if s.spec.Has(abi.CapVJP) {
		s.vjp = m.(abi.VJP)
	}
	return nil
}

// ready checks that a model is configured and the counts are sane.
func ready(counts ...int32) (*server, int32) {
	if srv == nil {
		_, err := guest.Describe()
		return nil, guest.Fail(err)
	}
	if err := guest.Ready(); err != nil {
		return nil, guest.Fail(err)
	}
	for _, n := range counts {
		if n < 0 {
			return nil, guest.Failf("%s: negative count %d", srv.spec.Name, n)
		}
	}
	return srv, 0
}

// clamp keeps a model's status within what a guest may return.
func clamp(st abi.Status) abi.Status {
	switch st {
	case abi.OK, abi.Failed, abi.Invalid:
		return st
	}
	return abi.Failed
}

// evalBatch is kinfer_model_eval on slices: theta b×d, x K×c, y b×K×m,
// status b.
func (s *server) evalBatch(b, K int, theta, x, y []float64, status []abi.Status) {
	d, n := s.d, K*s.m
	for i := 0; i < b; i++ {
		status[i] = clamp(s.mdl.Eval(theta[i*d:(i+1)*d:(i+1)*d], x, y[i*n:(i+1)*n:(i+1)*n]))
	}
}

// jacobian is kinfer_model_jacobian on slices.
func (s *server) jacobian(theta, x, y, jac []float64) abi.Status {
	if s.jac == nil {
		guest.SetError(s.spec.Name + ": the model does not list capability \"jacobian\"")
		return abi.Failed
	}
	return clamp(s.jac.Jacobian(theta, x, y, jac))
}

// vjpOne is kinfer_model_vjp on slices.
func (s *server) vjpOne(theta, x, v, y, g []float64) abi.Status {
	if s.vjp == nil {
		guest.SetError(s.spec.Name + ": the model does not list capability \"vjp\"")
		return abi.Failed
	}
	return clamp(s.vjp.VJP(theta, x, v, y, g))
}

// forward is kinfer_model_forward: y and the tape, which the server keeps
// (and reuses) until the next forward pass, so that it stays valid until
// the host has copied it (ABI.md §6.1).
func (s *server) forward(theta, x, y []float64) (abi.Status, []float64) {
	if s.tp == nil {
		guest.SetError(s.spec.Name + ": the model does not list capability \"pullback\"")
		return abi.Failed, nil
	}
	tape, st := s.tp.EvalTape(theta, x, y, s.tape[:0])
	if cap(tape) > 0 {
		s.tape = tape[:0]
	}
	return clamp(st), tape
}

// pullback is kinfer_model_pullback.
func (s *server) pullback(theta, x, tape, v, g []float64) abi.Status {
	if s.tp == nil {
		guest.SetError(s.spec.Name + ": the model does not list capability \"pullback\"")
		return abi.Failed
	}
	return clamp(s.tp.PullTape(theta, x, tape, v, g))
}
