package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// Limits on what a method may return, beyond the memory bounds checks.
const (
	// MaxBatch is the largest batch a method may ask for.
	MaxBatch = 1 << 20
	// maxBatchValues bounds the f64 values of a batch's points (n·d): 256
	// MiB of points, which the host copies and evaluates.
	maxBatchValues = 1 << 25
	// maxReport bounds the report JSON, in bytes (ABI.md §6.3); the host
	// decodes it into memory, several times its size.
	maxReport = 16 << 20
	// maxState bounds a saved state, in bytes (ABI.md §6.3).
	maxState = 64 << 20
	// maxLSQValues bounds the f64 values kinfer_method_tell_lsq passes,
	// n·R·(d+1) (residuals and Jacobians of a batch; ABI.md §6.4): 1 GiB of
	// the guest's 4 GiB address space. It bounds the outputs
	// kinfer_method_tell_outputs passes, n·rows·m, likewise (ABI.md §6.5).
	maxLSQValues = 1 << 27
)

// Method returns the plugin's method configured with settings, in a single
// instance. The value implements abi.Method, abi.Faulter and io.Closer, and
// abi.Checkpointer exactly when the spec lists "checkpoint". It is not meant
// for concurrent use (calls are serialised). After a fault (timeout, trap,
// malformed result) every call returns the fault.
func (p *Plugin) Method(ctx context.Context, settings []float64) (abi.Method, error) {
	if err := p.checkSettings(abi.KindMethod, settings); err != nil {
		return nil, err
	}
	lctx := withLog(ctx, p.log)
	in, err := p.newConfigured(lctx, settings)
	if err != nil {
		return nil, err
	}
	w := &method{in: in, spec: p.Spec, d: -1, lsq: p.Spec.Has(abi.CapLeastSquares), prop: p.Spec.Has(abi.CapPropagation)}
	if p.Spec.Has(abi.CapCheckpoint) {
		return methodCkpt{w}, nil
	}
	return w, nil
}

type method struct {
	mu    sync.Mutex
	in    *instance
	spec  abi.Spec
	d     int // -1 before Init
	fault *Error
	lsq   bool // capability least_squares (ABI.md §6.4)
	r     int  // R, the residuals per point, given by Init (lsq)
	prop  bool // capability propagation (ABI.md §6.5)
	o     int  // outputs per point, rows·m, given by Init (prop)

	// lower and upper are the bounds given to Init (the method's
	// coordinates: ±∞ with transforms), which every sample row must
	// respect.
	lower, upper []float64

	// The batch last asked for, to check Tell against.
	askN    int
	askWant abi.Want

	// told counts the points told so far and loaded is the scale of the
	// state last loaded: a method's samples, report and save, whose work
	// grows with the run, get bookScale times the fuel (ABI.md §8).
	told   int64
	loaded int

	// intr interrupts an ask or tell in progress when it is done
	// (InterruptCalls); nil: they run to their end.
	intr context.Context
	// stopped and grace: once stopped is done, a samples, report or save
	// call gets at most grace of wall time (LimitAfterStop).
	stopped context.Context
	grace   time.Duration
}

// LimitAfterStop bounds the method's samples, report and save calls made
// after stop is done to grace of wall time each, whatever their fuel and
// timeout_ms (scaled with the points told, ABI.md §8): a stopped run reads
// what the method has, but a method cannot make its own Ctrl-C wait (audit
// 5: 82 s after SIGINT, or up to the hour of an untrusted timeout_ms).
func (w *method) LimitAfterStop(stop context.Context, grace time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped, w.grace = stop, grace
}

// capAfterStop applies LimitAfterStop to the calls until the returned
// function is called.
func (w *method) capAfterStop() func() {
	if w.stopped == nil || w.stopped.Err() == nil {
		return func() {}
	}
	w.in.wallCap = w.grace
	return func() { w.in.wallCap = 0 }
}

// InterruptCalls makes ctx's end interrupt the method's ask, tell and done
// calls in progress (the method's instance outlives the run's stop, so that its
// samples, report and state can still be read; a call that the stop
// interrupts discards it, and the run's results are then those of its
// last checkpoint).
func (w *method) InterruptCalls(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.intr = ctx
}

// interruptible runs f with the meter also watching w.intr.
func (w *method) interruptible(f func() (uint64, error)) (uint64, error) {
	if w.intr == nil {
		return f()
	}
	w.in.meter.stop = w.intr
	defer func() { w.in.meter.stop = nil }()
	return f()
}

// Fuel of the bookkeeping calls: one call's fuel per pointsPerFuel points
// told, or per stateBytesPerFuel bytes of a loaded state. A Go guest's
// metered cost of its kept draws is ~1.5·10⁵ units per point (Go's
// WebAssembly branches re-enter its function's dispatch loop, each charged
// in full), so 10 000 points per 2·10¹⁰ leaves a margin of about 10.
const (
	pointsPerFuel     = 10000
	stateBytesPerFuel = 256 << 10
)

// bookScale is the multiple of the fuel (and timeout) of a samples,
// report or save call.
func (w *method) bookScale() int {
	return max(w.loaded, 1+int(min(w.told/pointsPerFuel, 1<<20)))
}

type methodCkpt struct{ *method }

var (
	_ abi.Faulter      = (*method)(nil)
	_ abi.Checkpointer = methodCkpt{}
	_ io.Closer        = (*method)(nil)
)

func (w *method) Spec() abi.Spec { return w.spec }

// Fault is the timeout or trap that stopped the method, or nil.
func (w *method) Fault() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fault != nil {
		return w.fault
	}
	return nil
}

// Close discards the instance.
func (w *method) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.in.close()
	return nil
}

// enter locks the method and returns the fault that prevents a call.
func (w *method) enter() error {
	w.mu.Lock()
	if w.fault != nil {
		return w.fault
	}
	if w.in.dead {
		return fmt.Errorf("plugin %s: the method's instance was closed or discarded after a fault", w.in.p.Manifest.Name)
	}
	return nil
}

// check records a fault.
func (w *method) check(err error) error {
	var e *Error
	if errors.As(err, &e) && w.fault == nil {
		w.fault = e
	}
	return err
}

func (w *method) name() string { return w.in.p.Manifest.Name }

// Init calls kinfer_method_init(d, seed, lower, upper).
func (w *method) Init(p abi.Problem) error {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return err
	}
	const e = exMethodInit
	in := w.in
	d := len(p.Params)
	lo, hi := make([]float64, d), make([]float64, d)
	for i, q := range p.Params {
		lo[i], hi[i] = q.Lower, q.Upper
	}
	var l layout
	oL, oU := l.f64(d), l.f64(d)
	base, err := in.buffer(e, l.n)
	if err != nil {
		return w.check(err)
	}
	if err := in.writeInputs(e, base, oL, lo, oU, hi, 0, nil); err != nil {
		return w.check(err)
	}
	ret, err := in.call(e, uint64(d), p.Seed, uint64(base+uint32(oL)), uint64(base+uint32(oU)))
	if err != nil {
		return w.check(err)
	}
	if code := i32(ret); code != 0 {
		return w.check(in.refused(e, code))
	}
	if w.lsq {
		if err := w.problem(p); err != nil {
			return err
		}
	}
	if w.prop {
		if err := w.outputs(p); err != nil {
			return err
		}
	}
	w.d, w.lower, w.upper = d, lo, hi
	return nil
}

// outputs calls kinfer_method_outputs (ABI.md §6.5) with the model's
// output names, the condition rows and the number of likelihood terms.
func (w *method) outputs(p abi.Problem) error {
	const e = exMethodOutputs
	in, m := w.in, len(p.OutputNames)
	if m < 1 || p.OutputRows < 1 {
		return fmt.Errorf("plugin %s is a propagation method (capability %q), but the study gives %d outputs at %d condition rows", w.name(), abi.CapPropagation, m, p.OutputRows)
	}
	var names []byte
	for i, n := range p.OutputNames {
		if strings.IndexByte(n, 0) >= 0 {
			return fmt.Errorf("plugin %s: output %d's name %q holds a NUL byte, which kinfer_method_outputs cannot pass", w.name(), i, n)
		}
		names = append(append(names, n...), 0)
	}
	if uint64(m)*uint64(p.OutputRows) > maxLSQValues || len(names) > math.MaxInt32 || p.Likelihoods > math.MaxInt32 {
		return fmt.Errorf("plugin %s: %d outputs at %d condition rows are too many to pass", w.name(), m, p.OutputRows)
	}
	var l layout
	oN := l.add(uint64(max(len(names), 1)))
	base, err := in.buffer(e, l.n)
	if err != nil {
		return w.check(err)
	}
	buf, err := in.hostView(e, base, l.n)
	if err != nil {
		return w.check(err)
	}
	copy(buf[oN:], names)
	ret, err := in.call(e, uint64(m), uint64(p.OutputRows), uint64(p.Likelihoods), uint64(base+uint32(oN)), uint64(len(names)))
	if err != nil {
		return w.check(err)
	}
	if code := i32(ret); code != 0 {
		return w.check(in.refused(e, code))
	}
	w.o = m * p.OutputRows
	return nil
}

// problem calls kinfer_method_problem (ABI.md §6.4) with R, the defaults,
// the starts and the names of p.
func (w *method) problem(p abi.Problem) error {
	const e = exMethodProblem
	in, d := w.in, len(p.Params)
	if p.Residuals < 1 {
		return fmt.Errorf("plugin %s is a least-squares method (capability %q), but the study gives no residuals", w.name(), abi.CapLeastSquares)
	}
	defaults := make([]float64, d)
	var names []byte
	for i, q := range p.Params {
		defaults[i] = math.Min(math.Max(q.Default, q.Lower), q.Upper)
		if strings.IndexByte(q.Name, 0) >= 0 {
			return fmt.Errorf("plugin %s: parameter %d's name %q holds a NUL byte, which kinfer_method_problem cannot pass", w.name(), i, q.Name)
		}
		names = append(append(names, q.Name...), 0)
	}
	starts := p.Starts
	if len(starts) == 0 {
		starts = [][]float64{defaults}
	}
	flat := make([]float64, 0, len(starts)*d)
	for i, x := range starts {
		if len(x) != d {
			return fmt.Errorf("plugin %s: start %d has %d values, want %d", w.name(), i+1, len(x), d)
		}
		flat = append(flat, x...)
	}
	if uint64(len(flat))+uint64(d) > maxBatchValues || p.Residuals > math.MaxInt32 || len(names) > math.MaxInt32 {
		return fmt.Errorf("plugin %s: a problem of %d starts × %d parameters and %d residuals is too large to pass", w.name(), len(starts), d, p.Residuals)
	}
	var l layout
	oD, oS, oN := l.f64(d), l.f64(len(flat)), l.add(uint64(len(names)))
	base, err := in.buffer(e, l.n)
	if err != nil {
		return w.check(err)
	}
	buf, err := in.hostView(e, base, l.n)
	if err != nil {
		return w.check(err)
	}
	putF64s(buf[oD:], defaults)
	putF64s(buf[oS:], flat)
	copy(buf[oN:], names)
	ret, err := in.call(e, uint64(d), uint64(p.Residuals), uint64(base+uint32(oD)), uint64(len(starts)),
		uint64(base+uint32(oS)), uint64(base+uint32(oN)), uint64(len(names)))
	if err != nil {
		return w.check(err)
	}
	if code := i32(ret); code != 0 {
		return w.check(in.refused(e, code))
	}
	w.r = p.Residuals
	return nil
}

func (w *method) needInit(e export) error {
	if w.d < 0 {
		return fmt.Errorf("plugin %s: %s before Init", w.name(), e)
	}
	return nil
}

// Ask calls kinfer_method_ask and reads the batch header (ABI.md §6.3).
func (w *method) Ask() (abi.Batch, error) {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return abi.Batch{}, err
	}
	const e = exMethodAsk
	if err := w.needInit(e); err != nil {
		return abi.Batch{}, err
	}
	in := w.in
	ptr, err := w.interruptible(func() (uint64, error) { return in.call(e) })
	if err != nil {
		return abi.Batch{}, w.check(err)
	}
	if ptr == 0 {
		return abi.Batch{}, in.refused(e, 0)
	}
	r := -1 // want bits 2-3 refused
	if w.lsq {
		r = w.r
	}
	o := -1 // want bit 4 refused
	if w.prop {
		o = w.o
	}
	b, err := parseBatch(func(what string, p uint32, n uint64) ([]byte, error) { return in.view(e, what, p, n) }, uint32(ptr), w.d, r, o)
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			err = in.malformed(e, "%v", err)
		}
		return abi.Batch{}, w.check(err)
	}
	// What the tell must pass to the guest (outputs, or residuals and
	// Jacobians) has to fit in its memory: refused now, before the batch
	// is evaluated, not at the tell (audit 10: 800 MB of outputs for a
	// 64 MiB guest were evaluated, then lost).
	// Per point: θ, the log prior and log likelihood, the status, and
	// the gradient, residuals, Jacobian or outputs asked for (audit 11:
	// a plain batch of 2^20 points for a 16 MiB guest was evaluated,
	// then refused at tell).
	per := uint64(w.d) + 2
	switch {
	case b.Want&abi.WantOutputs != 0:
		per += uint64(o)
	case b.Want&abi.WantJacobian != 0:
		per += uint64(r) * uint64(w.d+1)
	case b.Want&abi.WantResiduals != 0:
		per += uint64(r)
	}
	if b.Want&abi.WantGradient != 0 {
		per += uint64(w.d)
	}
	mib := in.p.Manifest.Limits.MemoryMiB
	if mib <= 0 {
		mib = manifest.DefaultMemoryMiB
	}
	if need := uint64(b.Len()) * (8*per + 4); need > uint64(mib)<<20 {
		return abi.Batch{}, w.check(in.malformed(e, "returned a batch of %d points whose tell would pass %d MiB (%d values a point), more than the plugin's memory (memory_mib = %d): ask for fewer points, or raise memory_mib", b.Len(), need>>20, per, mib))
	}
	// And beside what the guest already holds: the tell's buffer is
	// allocated now (the instance keeps it for the tell), so that a batch
	// the guest's allocator cannot take is refused before it is evaluated
	// (audit 12: a tell of 16 000 000 bytes passed the check above for a
	// 16 MiB guest, then kinfer_alloc refused it after 466 000
	// evaluations).
	if need := w.tellLayout(b.Len(), b.Want).n; need > 0 {
		if _, err := in.buffer(e, need); err != nil {
			var fe *Error
			if errors.As(err, &fe) && errors.Is(err, errNoRoom) {
				err = in.malformed(e, "returned a batch of %d points whose tell needs a %d-byte buffer, which the plugin could not allocate beside what it already holds (kinfer_alloc %s): refused before the batch is evaluated; ask for fewer points, or raise memory_mib", b.Len(), need, fe.Msg)
			}
			return abi.Batch{}, w.check(err)
		}
	}
	w.askN, w.askWant = b.Len(), b.Want
	return b, nil
}

// parseBatch decodes the batch header at ptr and its points (ABI.md §6.3)
// for a method of d parameters; read returns a guest memory span or an
// error. An error other than read's says what is malformed. r is the
// number of residuals of a least-squares method (ABI.md §6.4), which may
// set want bits 2 and 3, or −1 for any other method, which may not; o is
// the number of outputs per point of a propagation method (ABI.md §6.5),
// which may set bit 4 (not with bits 2-3), or −1 for any other.
func parseBatch(read func(what string, ptr uint32, n uint64) ([]byte, error), ptr uint32, d, r, o int) (abi.Batch, error) {
	hdr, err := read("batch header", ptr, 16)
	if err != nil {
		return abi.Batch{}, err
	}
	if ptr%4 != 0 {
		return abi.Batch{}, fmt.Errorf("returned batch header %d: not 4-byte aligned", ptr)
	}
	n := int32(binary.LittleEndian.Uint32(hdr[0:]))
	mode := int32(binary.LittleEndian.Uint32(hdr[4:]))
	want := binary.LittleEndian.Uint32(hdr[8:])
	points := binary.LittleEndian.Uint32(hdr[12:])
	switch {
	case n <= 0 || n > MaxBatch:
		return abi.Batch{}, fmt.Errorf("returned a batch of n=%d points (want 1..%d)", n, MaxBatch)
	case mode != 0 && mode != 1:
		return abi.Batch{}, fmt.Errorf("returned batch mode %d (want 0: points, 1: draw from the prior)", mode)
	case mode == 0 && int64(n)*int64(d) > maxBatchValues:
		return abi.Batch{}, fmt.Errorf("returned a batch of %d points × %d parameters (at most %d values)", n, d, maxBatchValues)
	case r < 0 && want&12 != 0:
		return abi.Batch{}, fmt.Errorf("returned want=%#x; bit 0 is the log target and bit 1 the gradient, bits 2-3 (residuals, Jacobian) need capability %q, other bits are reserved", want, abi.CapLeastSquares)
	case o < 0 && want&16 != 0:
		return abi.Batch{}, fmt.Errorf("returned want=%#x; bit 4 (the model's outputs) needs capability %q, other bits are reserved", want, abi.CapPropagation)
	case want&^31 != 0:
		return abi.Batch{}, fmt.Errorf("returned want=%#x; bits 0-4 are defined (log target, gradient, residuals, Jacobian, outputs), the others are reserved", want)
	case want&16 != 0 && want&12 != 0:
		return abi.Batch{}, fmt.Errorf("returned want=%#x; bit 4 (outputs) cannot be combined with bits 2-3 (residuals, Jacobian)", want)
	case want&16 != 0 && uint64(n)*uint64(o) > maxLSQValues:
		return abi.Batch{}, fmt.Errorf("returned a batch of %d points wanting outputs: with %d outputs per point that is %d values, more than %d", n, o, uint64(n)*uint64(o), maxLSQValues)
	}
	b := abi.Batch{Want: abi.WantLogTarget | abi.Want(want)}
	if b.Want&abi.WantJacobian != 0 {
		b.Want |= abi.WantResiduals
	}
	if b.Want&abi.WantResiduals != 0 {
		per := uint64(r)
		if b.Want&abi.WantJacobian != 0 {
			per *= uint64(d) + 1
		}
		if uint64(n)*per > maxLSQValues {
			what := "residuals"
			if b.Want&abi.WantJacobian != 0 {
				what = "residuals and Jacobians"
			}
			return abi.Batch{}, fmt.Errorf("returned a batch of %d points wanting %s: with %d residuals and %d parameters that is %d values, more than %d",
				n, what, r, d, uint64(n)*per, maxLSQValues)
		}
	}
	if mode == 1 || d == 0 {
		// d = 0 cannot carry n in Points; ask for n draws of nothing.
		b.Draw = int(n)
		return b, nil
	}
	if points == 0 {
		// Address 0 is C's NULL: a header whose points were never set
		// read zeros there, every point out of support, and the run ended
		// "done" with the starting draws repeated (audit 21).
		return abi.Batch{}, fmt.Errorf("returned points pointer 0 (NULL) in mode 0: the header's points (offset 12) must point to the n×d values")
	}
	if points%8 != 0 {
		return abi.Batch{}, fmt.Errorf("returned points pointer %d: not 8-byte aligned", points)
	}
	pv, err := read("points", points, uint64(n)*uint64(d)*8)
	if err != nil {
		return abi.Batch{}, err
	}
	flat := make([]float64, int(n)*d)
	getF64s(flat, pv)
	b.Points = make([][]float64, n)
	for i := range b.Points {
		b.Points[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return b, nil
}

// Tell writes the results and calls kinfer_method_tell. log_lik is −∞ for
// every point whose status is not OK; the gradient buffer is passed only
// when the batch wanted it (a point without a gradient gets zeros).
func (w *method) Tell(results []abi.Result) error {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return err
	}
	e := exMethodTell
	if err := w.needInit(e); err != nil {
		return err
	}
	if w.askN == 0 {
		return fmt.Errorf("plugin %s: Tell without a pending Ask", w.name())
	}
	n, d := len(results), w.d
	if n != w.askN {
		return fmt.Errorf("plugin %s: Tell with %d results for a batch of %d", w.name(), n, w.askN)
	}
	grad := w.askWant&abi.WantGradient != 0
	lsq := w.askWant&(abi.WantResiduals|abi.WantJacobian) != 0
	jac := w.askWant&abi.WantJacobian != 0
	outs := w.askWant&abi.WantOutputs != 0
	if lsq {
		e = exMethodTellLSQ
	}
	if outs {
		e = exMethodTellOutputs
	}
	R, O := w.r, w.o
	in := w.in
	t := w.tellLayout(n, w.askWant)
	oT, oS, oP, oL, oG, oR, oJ, oO := t.theta, t.status, t.logPrior, t.logLik, t.grad, t.res, t.jac, t.outs
	base, err := in.buffer(e, t.n)
	if err != nil {
		return w.check(err)
	}
	buf, err := in.hostView(e, base, t.n)
	if err != nil {
		return w.check(err)
	}
	for i, r := range results {
		if len(r.Theta) != d {
			return fmt.Errorf("plugin %s: Tell: result %d has θ of length %d, want %d", w.name(), i, len(r.Theta), d)
		}
		putF64s(buf[oT+uint64(i*d*8):], r.Theta)
		binary.LittleEndian.PutUint32(buf[oS+uint64(4*i):], uint32(int32(r.Status)))
		ll := r.LogLik
		if r.Status != abi.OK {
			ll = math.Inf(-1)
		}
		binary.LittleEndian.PutUint64(buf[oP+uint64(8*i):], math.Float64bits(r.LogPrior))
		binary.LittleEndian.PutUint64(buf[oL+uint64(8*i):], math.Float64bits(ll))
		if grad {
			g := buf[oG+uint64(i*d*8) : oG+uint64((i+1)*d*8)]
			if len(r.Grad) == d {
				putF64s(g, r.Grad)
			} else {
				clear(g)
			}
		}
		// ABI.md §6.4: NaN rows for a point without residuals (its status
		// is not 0) or without a Jacobian.
		if lsq {
			rr := buf[oR+uint64(i*R*8) : oR+uint64((i+1)*R*8)]
			if r.Status == abi.OK && len(r.Residuals) != R {
				return fmt.Errorf("plugin %s: Tell: result %d has %d residuals, want %d", w.name(), i, len(r.Residuals), R)
			}
			fillOrNaN(rr, r.Residuals, r.Status == abi.OK)
		}
		// ABI.md §6.5: NaN rows for a point without outputs.
		if outs {
			or := buf[oO+uint64(i*O*8) : oO+uint64((i+1)*O*8)]
			if r.Status == abi.OK && len(r.Outputs) != O {
				return fmt.Errorf("plugin %s: Tell: result %d has %d outputs, want %d", w.name(), i, len(r.Outputs), O)
			}
			fillOrNaN(or, r.Outputs, r.Status == abi.OK)
		}
		if jac {
			jr := buf[oJ+uint64(i*R*d*8) : oJ+uint64((i+1)*R*d*8)]
			if r.Jacobian != nil && len(r.Jacobian) != R*d {
				return fmt.Errorf("plugin %s: Tell: result %d has a Jacobian of %d values, want %d×%d", w.name(), i, len(r.Jacobian), R, d)
			}
			fillOrNaN(jr, r.Jacobian, r.Status == abi.OK && r.Jacobian != nil)
		}
	}
	gptr := uint64(0)
	if grad {
		gptr = uint64(base + uint32(oG))
	}
	args := []uint64{uint64(n), uint64(base + uint32(oT)), uint64(base + uint32(oS)), uint64(base + uint32(oP)), uint64(base + uint32(oL)), gptr}
	if lsq {
		jptr := uint64(0)
		if jac {
			jptr = uint64(base + uint32(oJ))
		}
		args = append(args, uint64(R), uint64(base+uint32(oR)), jptr)
	}
	if outs {
		args = append(args, uint64(O), uint64(base+uint32(oO)))
	}
	ret, err := w.interruptible(func() (uint64, error) { return in.call(e, args...) })
	if err != nil {
		return w.check(err)
	}
	w.askN = 0
	if code := i32(ret); code != 0 {
		return w.check(in.refused(e, code))
	}
	w.told += int64(n)
	return nil
}

// tellArgs is where a tell of n points places its arrays in the host
// buffer (offsets), and the buffer's size n.
type tellArgs struct {
	theta, status, logPrior, logLik, grad, res, jac, outs, n uint64
}

// tellLayout is the host buffer of a tell of n points of a batch that
// wanted want (ABI.md §6.3–6.5): θ, statuses, log priors and log
// likelihoods, then the gradients, outputs, residuals and Jacobians
// asked for.
func (w *method) tellLayout(n int, want abi.Want) tellArgs {
	d := w.d
	var l layout
	var t tellArgs
	t.theta, t.status, t.logPrior, t.logLik = l.f64(n*d), l.i32(n), l.f64(n), l.f64(n)
	if want&abi.WantGradient != 0 {
		t.grad = l.f64(n * d)
	}
	if want&abi.WantOutputs != 0 {
		t.outs = l.f64(n * w.o)
	}
	if want&(abi.WantResiduals|abi.WantJacobian) != 0 {
		t.res = l.f64(n * w.r)
	}
	if want&abi.WantJacobian != 0 {
		t.jac = l.f64(n * w.r * d)
	}
	t.n = l.n
	return t
}

// fillOrNaN writes v into b (8 bytes per value) when ok, else NaN.
func fillOrNaN(b []byte, v []float64, ok bool) {
	if ok {
		putF64s(b, v)
		return
	}
	nan := math.Float64bits(math.NaN())
	for k := 0; k+8 <= len(b); k += 8 {
		binary.LittleEndian.PutUint64(b[k:], nan)
	}
}

// Done calls kinfer_method_done. A fault makes it true (the host then gets
// the fault from Report or Fault).
func (w *method) Done() bool {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return true
	}
	if w.d < 0 {
		return false
	}
	ret, err := w.interruptible(func() (uint64, error) { return w.in.call(exMethodDone) })
	if err != nil {
		w.check(err)
		return true
	}
	switch i32(ret) {
	case 0:
		return false
	case 1:
		return true
	}
	w.check(w.in.malformed(exMethodDone, "returned %d (want 0 or 1)", i32(ret)))
	return true
}

// checkSample refuses sample row i (of n) of kinfer_method_samples — θ
// (d values), log prior, log likelihood (ABI.md §6.3) — that no point
// evaluated by the host can have: a θ value that is NaN, ±∞ or outside
// the bounds given to kinfer_method_init (the method's coordinates, so
// ±∞ bounds with transforms allow any finite value), or a log prior or
// log likelihood that is NaN or +∞. Such a row is a Trap naming the export
// and the row, caught when read rather than written to samples.csv.
func (w *method) checkSample(i, n int, row []float64) error {
	d := w.d
	for j, x := range row[:d] {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < w.lower[j] || x > w.upper[j] {
			return w.in.malformed(exMethodSamples, "returned sample row %d (of %d) with θ[%d] = %g, outside [%g, %g] (the bounds given to kinfer_method_init; ABI.md §6.3)", i, n, j, x, w.lower[j], w.upper[j])
		}
	}
	for k, name := range [2]string{"log prior", "log likelihood"} {
		if x := row[d+k]; math.IsNaN(x) || math.IsInf(x, 1) {
			return w.in.malformed(exMethodSamples, "returned sample row %d (of %d) with %s %g (a sample is a point of the target: NaN and +Inf are impossible; ABI.md §6.3)", i, n, name, x)
		}
	}
	return nil
}

// Report reads the samples (rows of d+2 f64) and the report JSON object.
func (w *method) Report() (abi.Report, error) {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return abi.Report{}, err
	}
	if err := w.needInit(exMethodSamples); err != nil {
		return abi.Report{}, err
	}
	in, d := w.in, w.d
	var rep abi.Report
	defer w.capAfterStop()()
	span, err := in.callN(exMethodSamples, w.bookScale())
	if err != nil {
		return rep, w.check(err)
	}
	if ptr, rows := unpackSpan(span); rows > 0 {
		if ptr%8 != 0 {
			return rep, w.check(in.malformed(exMethodSamples, "returned samples pointer %d: not 8-byte aligned", ptr))
		}
		sv, err := in.view(exMethodSamples, "samples span", ptr, uint64(rows)*uint64(d+2)*8)
		if err != nil {
			return rep, w.check(err)
		}
		flat := make([]float64, int(rows)*(d+2))
		getF64s(flat, sv)
		rep.Samples = make([]abi.Sample, rows)
		for i := range rep.Samples {
			row := flat[i*(d+2) : (i+1)*(d+2)]
			if err := w.checkSample(i, int(rows), row); err != nil {
				return abi.Report{}, w.check(err)
			}
			rep.Samples[i] = abi.Sample{Theta: row[:d:d], LogPrior: row[d], LogLik: row[d+1]}
		}
	}
	span, err = in.callN(exMethodReport, w.bookScale())
	if err != nil {
		return rep, w.check(err)
	}
	js, err := in.spanBytes(exMethodReport, span, maxReport)
	if err != nil {
		return rep, w.check(err)
	}
	if len(js) > 0 {
		if err := checkDepth(js, maxJSONDepth); err != nil {
			return rep, w.check(in.malformed(exMethodReport, "returned an invalid report: %v", err))
		}
		// The syntax and trailing bytes first, without decoding values.
		dec := json.NewDecoder(bytes.NewReader(js))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				// "unexpected EOF" alone did not say it was the JSON that
				// ended early (audit 21).
				err = fmt.Errorf("its %d bytes of JSON end before the value does (truncated: is the span's length that of the whole text?)", len(js))
			}
			return rep, w.check(in.malformed(exMethodReport, "returned an invalid report: %v", err))
		}
		if err := trailing(js, dec); err != nil {
			return rep, w.check(in.malformed(exMethodReport, "returned an invalid report: %v", err))
		}
		if raw[0] != '{' { // Decode skipped the white space
			return rep, w.check(in.malformed(exMethodReport, "returned an invalid report: not a JSON object"))
		}
		// Then the values, within the bounds summary.json's readers apply
		// (kinfer report, --verify): a report within 16 MiB whose values
		// decode to far more (5.6 M empty objects) took the run past 1 GB
		// and wrote a summary.json that kinfer itself refused (audit 6).
		if err := strictjson.Decode(js, &rep.Extra, strictjson.Lenient); err != nil || rep.Extra == nil {
			if err == nil {
				err = errors.New("not a JSON object")
			}
			return rep, w.check(in.malformed(exMethodReport, "returned a report kinfer cannot keep in summary.json: %v", err))
		}
	}
	return rep, nil
}

// SaveState calls kinfer_method_save and copies the state (abi.Checkpointer).
func (w methodCkpt) SaveState() ([]byte, error) {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return nil, err
	}
	defer w.capAfterStop()()
	span, err := w.in.callN(exMethodSave, w.bookScale())
	if err != nil {
		return nil, w.check(err)
	}
	// A state beyond what a checkpoint takes fails the checkpoint, not
	// the method: its instance is intact, so the run's partial samples
	// can still be asked of it (audit 15: a 68 MiB state at a periodic
	// checkpoint lost 2.2 million samples, "no samples").
	if ptr, n := unpackSpan(span); n > maxState && uint64(ptr)+uint64(n) <= uint64(w.in.mem.Size()) {
		return nil, fmt.Errorf("plugin %s: %s returned a state of %d bytes, more than the %d a checkpoint takes (ABI.md §6)", w.name(), exMethodSave, n, maxState)
	}
	b, err := w.in.spanBytes(exMethodSave, span, maxState)
	if err != nil {
		return nil, w.check(err)
	}
	if len(b) == 0 {
		// ABI.md §6.3: an empty state means the method cannot save; the
		// checkpoint fails with its message. Not a fault: the run may go on.
		return nil, fmt.Errorf("plugin %s: %s returned an empty state: %s", w.name(), exMethodSave, w.in.lastErrorOr())
	}
	return b, nil
}

// LoadState writes the state and calls kinfer_method_load (after Init).
func (w methodCkpt) LoadState(state []byte) error {
	defer w.mu.Unlock()
	if err := w.enter(); err != nil {
		return err
	}
	const e = exMethodLoad
	if err := w.needInit(e); err != nil {
		return err
	}
	in := w.in
	base, err := in.buffer(e, uint64(len(state)))
	if err != nil {
		return w.check(err)
	}
	if len(state) > 0 {
		if !in.mem.Write(base, state) {
			return w.check(in.malformed(e, "host buffer [%d, +%d) outside memory", base, len(state)))
		}
	}
	scale := 1 + min(len(state)/stateBytesPerFuel, 1<<20)
	ret, err := in.callN(e, scale, uint64(base), uint64(len(state)))
	if err != nil {
		return w.check(err)
	}
	if code := i32(ret); code != 0 {
		return w.check(in.refused(e, code))
	}
	w.askN, w.loaded = 0, scale
	return nil
}
