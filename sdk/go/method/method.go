package method

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/guest"
)

type server struct {
	spec  abi.Spec
	newFn abi.Constructor[abi.Method]
	mth   abi.Method
	ckpt  abi.Checkpointer // nil unless the spec lists "checkpoint"

	lsq  bool        // the spec lists least_squares (ABI.md §6.4)
	prop bool        // the spec lists propagation (ABI.md §6.5)
	held abi.Problem // init, held until its problem and outputs calls
	// waitLSQ, waitOut: kinfer_method_problem, kinfer_method_outputs
	// still to come before Init.
	waitLSQ, waitOut bool
	r                int       // R, the residuals per point (least squares)
	o                int       // outputs per point, rows·m (propagation)
	d                int       // set by init
	inited           bool      // init (and, for least squares, problem) succeeded
	asked            int       // points in the last batch, 0 if none is outstanding
	points           []float64 // last batch's points, n×d (guest-owned, handed out)

	// Report cache, valid until the next init, tell or load.
	rep     *abi.Report
	samples []float64 // rows of d+2 (guest-owned, handed out)
	extra   []byte    // report JSON (guest-owned, handed out)
	saved   []byte    // last save (guest-owned, handed out)
}

var srv *server

var role = guest.Role{Kind: abi.KindMethod, Caps: []guest.Capability{
	{Name: abi.CapCheckpoint, Has: guest.Implementer[abi.Checkpointer](), Method: "SaveState/LoadState"},
	// A declaration: the method asks for residuals (ABI.md §6.4).
	{Name: abi.CapLeastSquares, Has: func(any) bool { return true }},
	// A declaration: the method asks for the model's outputs (ABI.md §6.5).
	{Name: abi.CapPropagation, Has: func(any) bool { return true }},
	// A declaration: the method's draws must be genuine prior draws (ABI.md §6.3).
	{Name: abi.CapPriorDraws, Has: func(any) bool { return true }},
}}

// Serve registers m, a method without settings, as the plugin's component;
// call it from an init function. It panics if the spec is invalid, not a
// method, or lists settings (use ServeNew).
func Serve(m abi.Method) {
	serve(specOf(m), func([]float64) (abi.Method, error) { return m, nil })
}

// specOf is m's spec with "checkpoint" added if m implements it.
func specOf(m abi.Method) abi.Spec { return role.SpecOf(m.Spec(), m) }

// ServeNew registers a method built by newFn from the study's setting values
// (spec order) when kinfer_configure is called; call it from an init
// function. The spec's capabilities are authoritative and checked against
// the built value.
func ServeNew(spec abi.Spec, newFn abi.Constructor[abi.Method]) {
	serve(spec, newFn)
}

func serve(spec abi.Spec, newFn abi.Constructor[abi.Method]) {
	s := newServer(spec, newFn)
	guest.Register(guest.Component{Spec: spec, Configure: s.configure})
	srv = s
}

func newServer(spec abi.Spec, newFn abi.Constructor[abi.Method]) *server {
	spec = role.Check(spec)
	return &server{spec: spec, newFn: newFn, lsq: spec.Has(abi.CapLeastSquares), prop: spec.Has(abi.CapPropagation)}
}

func (s *server) configure(settings []float64) error {
	m, err := s.newFn(settings)
	if err != nil {
		return err
	}
	if err := role.Implements(s.spec, m); err != nil {
		return err
	}
	s.mth, s.ckpt, s.inited, s.asked = m, nil, false, 0
	s.invalidate()
	if s.spec.Has(abi.CapCheckpoint) {
		s.ckpt = m.(abi.Checkpointer)
	}
	return nil
}

func (s *server) invalidate() { s.rep, s.samples, s.extra = nil, nil, nil }

// call runs one method export: the plugin must be configured (and, unless
// it is init, initialised), and a panic becomes an error.
func call(what string, needInit bool, f func(s *server) error) error {
	if srv == nil {
		_, err := guest.Describe()
		return err
	}
	if err := guest.Ready(); err != nil {
		return err
	}
	s := srv
	if needInit && !s.inited {
		return fmt.Errorf("%s: %s called before a successful kinfer_method_init", s.spec.Name, what)
	}
	return guest.Protect(s.spec.Name+": "+what, func() error { return f(s) })
}

// problem builds the abi.Problem of kinfer_method_init. The ABI carries only
// the bounds: names are theta0, theta1, ... and defaults mid-bounds.
func problem(d int, seed uint64, lower, upper []float64) (abi.Problem, error) {
	p := abi.Problem{Params: make([]abi.Param, d), Seed: seed}
	for i := range p.Params {
		lo, hi := lower[i], upper[i]
		if !(lo < hi) {
			return p, fmt.Errorf("parameter %d has bounds [%g, %g]; want lower < upper", i, lo, hi)
		}
		p.Params[i] = abi.Param{Name: fmt.Sprintf("theta%d", i), Lower: lo, Upper: hi, Default: lo + (hi-lo)/2}
	}
	return p, nil
}

func (s *server) init(d int, seed uint64, lower, upper []float64) error {
	s.inited, s.asked = false, 0
	s.invalidate()
	p, err := problem(d, seed, lower, upper)
	if err != nil {
		return err
	}
	if s.lsq || s.prop {
		// Init waits for kinfer_method_problem, which names the
		// parameters and gives R and the starts, and for
		// kinfer_method_outputs, which gives the outputs.
		s.held, s.d, s.r, s.o = p, d, 0, 0
		s.waitLSQ, s.waitOut = s.lsq, s.prop
		return nil
	}
	if err := s.mth.Init(p); err != nil {
		return err
	}
	s.d, s.inited = d, true
	return nil
}

// problem completes a least-squares method's init (ABI.md §6.4): names,
// defaults, R and the starts, then Init with the whole abi.Problem.
func (s *server) problem(d, r int, defaults []float64, starts []float64, names []byte) error {
	if !s.lsq {
		return fmt.Errorf("kinfer_method_problem called, but the spec does not list %q", abi.CapLeastSquares)
	}
	if s.held.Params == nil || s.inited || !s.waitLSQ {
		return fmt.Errorf("kinfer_method_problem must follow kinfer_method_init, once")
	}
	if d != s.d || r < 1 || len(starts)%d != 0 || len(starts) == 0 {
		return fmt.Errorf("kinfer_method_problem with d = %d (init said %d), R = %d, %d start values", d, s.d, r, len(starts))
	}
	p := s.held
	split := strings.Split(string(names), "\x00")
	if len(split) != d+1 || split[d] != "" {
		return fmt.Errorf("kinfer_method_problem: names hold %d NUL-terminated names, want %d", len(split)-1, d)
	}
	for i := range p.Params {
		p.Params[i].Name, p.Params[i].Default = split[i], defaults[i]
	}
	p.Residuals = r
	flat := append([]float64(nil), starts...)
	for i := 0; i < len(flat)/d; i++ {
		p.Starts = append(p.Starts, flat[i*d:(i+1)*d:(i+1)*d])
	}
	s.held, s.r, s.waitLSQ = p, r, false
	return s.finishInit()
}

// outputs completes a propagation method's init (ABI.md §6.5): the
// model's output names, the condition rows and the number of likelihood
// terms.
func (s *server) outputs(m, rows, likelihoods int, names []byte) error {
	if !s.prop {
		return fmt.Errorf("kinfer_method_outputs called, but the spec does not list %q", abi.CapPropagation)
	}
	if s.held.Params == nil || s.inited || !s.waitOut {
		return fmt.Errorf("kinfer_method_outputs must follow kinfer_method_init, once")
	}
	split := strings.Split(string(names), "\x00")
	if m < 1 || rows < 1 || len(split) != m+1 || split[m] != "" {
		return fmt.Errorf("kinfer_method_outputs with m = %d, %d rows, %d NUL-terminated names", m, rows, len(split)-1)
	}
	s.held.OutputNames, s.held.OutputRows, s.held.Likelihoods = split[:m], rows, likelihoods
	s.o, s.waitOut = m*rows, false
	return s.finishInit()
}

// finishInit calls Init with the held problem once every call it waits
// for has come.
func (s *server) finishInit() error {
	if s.waitLSQ || s.waitOut {
		return nil
	}
	if err := s.mth.Init(s.held); err != nil {
		return err
	}
	s.inited = true
	s.held = abi.Problem{}
	return nil
}

// ask calls Ask and returns n, mode, want; the points (mode 0) are in s.points.
func (s *server) ask() (n, mode int, want uint32, err error) {
	b, err := s.mth.Ask()
	if err != nil {
		return 0, 0, 0, err
	}
	n = b.Len()
	if n <= 0 {
		return 0, 0, 0, fmt.Errorf("Ask returned an empty batch (done=%v)", s.mth.Done())
	}
	if !s.lsq && b.Want&(abi.WantResiduals|abi.WantJacobian) != 0 {
		return 0, 0, 0, fmt.Errorf("Ask wants %#x: residuals and Jacobians need capability %q in the spec (ABI.md §6.4)", uint32(b.Want), abi.CapLeastSquares)
	}
	if !s.prop && b.Want&abi.WantOutputs != 0 {
		return 0, 0, 0, fmt.Errorf("Ask wants %#x: outputs need capability %q in the spec (ABI.md §6.5)", uint32(b.Want), abi.CapPropagation)
	}
	if b.Want&abi.WantOutputs != 0 && b.Want&(abi.WantResiduals|abi.WantJacobian) != 0 {
		return 0, 0, 0, fmt.Errorf("Ask wants %#x: outputs cannot be asked with residuals (ABI.md §6.5)", uint32(b.Want))
	}
	if b.Want&^(abi.WantLogTarget|abi.WantGradient|abi.WantResiduals|abi.WantJacobian|abi.WantOutputs) != 0 {
		return 0, 0, 0, fmt.Errorf("Ask wants %#x: undefined bits", uint32(b.Want))
	}
	want = uint32(b.Want | abi.WantLogTarget)
	if b.Want&abi.WantJacobian != 0 {
		want |= uint32(abi.WantResiduals)
	}
	if len(b.Points) == 0 {
		s.points, s.asked = s.points[:0], n
		return n, 1, want, nil
	}
	s.points = s.points[:0]
	for i, p := range b.Points {
		if len(p) != s.d {
			return 0, 0, 0, fmt.Errorf("Ask returned point %d of length %d; d = %d", i, len(p), s.d)
		}
		s.points = append(s.points, p...)
	}
	s.asked = n
	return n, 0, want, nil
}

// tell copies the host's buffers into results and calls Tell. grad may be
// nil (not wanted).
func (s *server) tell(n int, theta []float64, status []abi.Status, logPrior, logLik, grad []float64) error {
	return s.tellLSQ(n, theta, status, logPrior, logLik, grad, nil, nil)
}

// tellLSQ is tell with residuals r (n×R) and Jacobians jac (n×R×d), each
// may be nil. A point's all-NaN rows (ABI.md §6.4: no residuals, no
// Jacobian) become nil slices, as the host's abi.Result has them.
func (s *server) tellLSQ(n int, theta []float64, status []abi.Status, logPrior, logLik, grad, r, jac []float64) error {
	if n != s.asked {
		return fmt.Errorf("tell got %d results for a batch of %d points", n, s.asked)
	}
	d := s.d
	th := append([]float64(nil), theta...)
	var gr []float64
	if grad != nil {
		gr = append([]float64(nil), grad...)
	}
	res := make([]abi.Result, n)
	for i := range res {
		res[i] = abi.Result{
			Theta:    th[i*d : (i+1)*d : (i+1)*d],
			Status:   status[i],
			LogPrior: logPrior[i],
			LogLik:   logLik[i],
		}
		if gr != nil {
			res[i].Grad = gr[i*d : (i+1)*d : (i+1)*d]
		}
		if R := s.r; r != nil && status[i] == abi.OK && !allNaN(r[i*R:(i+1)*R]) {
			res[i].Residuals = append([]float64(nil), r[i*R:(i+1)*R]...)
			if jac != nil && !allNaN(jac[i*R*d:(i+1)*R*d]) {
				res[i].Jacobian = append([]float64(nil), jac[i*R*d:(i+1)*R*d]...)
			}
		}
	}
	s.asked = 0
	s.invalidate()
	return s.mth.Tell(res)
}

// tellOutputs is tell with the outputs y (n×o, o = rows·m) of a batch
// that wanted them (ABI.md §6.5); a point's NaN row (its status is not 0)
// becomes a nil slice, as the host's abi.Result has it.
func (s *server) tellOutputs(n int, theta []float64, status []abi.Status, logPrior, logLik, grad, y []float64) error {
	if n != s.asked {
		return fmt.Errorf("tell_outputs got %d results for a batch of %d points", n, s.asked)
	}
	d, o := s.d, s.o
	th := append([]float64(nil), theta...)
	var gr []float64
	if grad != nil {
		gr = append([]float64(nil), grad...)
	}
	res := make([]abi.Result, n)
	for i := range res {
		res[i] = abi.Result{Theta: th[i*d : (i+1)*d : (i+1)*d], Status: status[i], LogPrior: logPrior[i], LogLik: logLik[i]}
		if gr != nil {
			res[i].Grad = gr[i*d : (i+1)*d : (i+1)*d]
		}
		if status[i] == abi.OK {
			res[i].Outputs = append([]float64(nil), y[i*o:(i+1)*o]...)
		}
	}
	s.asked = 0
	s.invalidate()
	return s.mth.Tell(res)
}

func allNaN(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// report calls Report once per state and fills the samples rows and the
// report JSON.
func (s *server) report() error {
	if s.rep != nil {
		return nil
	}
	r, err := s.mth.Report()
	if err != nil {
		return err
	}
	rows := make([]float64, 0, len(r.Samples)*(s.d+2))
	for i, smp := range r.Samples {
		if len(smp.Theta) != s.d {
			return fmt.Errorf("Report sample %d has %d parameters; d = %d", i, len(smp.Theta), s.d)
		}
		rows = append(rows, smp.Theta...)
		rows = append(rows, smp.LogPrior, smp.LogLik)
	}
	var extra []byte
	if r.Extra != nil {
		if extra, err = json.Marshal(r.Extra); err != nil {
			return fmt.Errorf("report: %v", err)
		}
	}
	s.rep, s.samples, s.extra = &r, rows, extra
	return nil
}

func (s *server) save() error {
	if s.ckpt == nil {
		return fmt.Errorf("the method does not list capability %q", abi.CapCheckpoint)
	}
	b, err := s.ckpt.SaveState()
	if err != nil {
		return err
	}
	if len(b) == 0 {
		// The empty span means "cannot save" (ABI.md §6.3).
		return fmt.Errorf("SaveState returned an empty state; a state has at least one byte")
	}
	s.saved = b
	return nil
}

func (s *server) load(state []byte) error {
	if s.ckpt == nil {
		return fmt.Errorf("the method does not list capability %q", abi.CapCheckpoint)
	}
	s.asked = 0
	s.invalidate()
	return s.ckpt.LoadState(append([]byte(nil), state...))
}
