package wasm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// export identifies one ABI v1 export.
type export int

const (
	exVersion export = iota
	exDescribe
	exAlloc
	exFree
	exConfigure
	exLastError
	exModelEval
	exModelJacobian
	exModelVJP
	exLikEval
	exLikGrad
	exLikResiduals
	exLikEvalBatch
	exMethodInit
	exMethodAsk
	exMethodTell
	exMethodDone
	exMethodSamples
	exMethodReport
	exMethodSave
	exMethodLoad
	exMethodProblem
	exMethodTellLSQ
	exMethodOutputs
	exMethodTellOutputs
	exModelForward
	exModelPullback
	numExports
)

// exportSig is the name and signature of each export (ABI.md §3, §6):
// params ":" results, i = i32, I = i64.
var exportSig = [numExports]struct{ name, sig string }{
	exVersion:           {"kinfer_abi_version", ":i"},
	exDescribe:          {"kinfer_describe", ":I"},
	exAlloc:             {"kinfer_alloc", "i:i"},
	exFree:              {"kinfer_free", "ii:"},
	exConfigure:         {"kinfer_configure", "ii:i"},
	exLastError:         {"kinfer_last_error", ":I"},
	exModelEval:         {"kinfer_model_eval", "iiiiii:i"},
	exModelJacobian:     {"kinfer_model_jacobian", "iiiii:i"},
	exModelVJP:          {"kinfer_model_vjp", "iiiiii:i"},
	exLikEval:           {"kinfer_likelihood_eval", "iiiiii:i"},
	exLikGrad:           {"kinfer_likelihood_grad", "iiiiiii:i"},
	exLikResiduals:      {"kinfer_likelihood_residuals", "iiiiii:i"},
	exLikEvalBatch:      {"kinfer_likelihood_eval_batch", "iiiiiiii:i"},
	exMethodInit:        {"kinfer_method_init", "iIii:i"},
	exMethodAsk:         {"kinfer_method_ask", ":i"},
	exMethodTell:        {"kinfer_method_tell", "iiiiii:i"},
	exMethodDone:        {"kinfer_method_done", ":i"},
	exMethodSamples:     {"kinfer_method_samples", ":I"},
	exMethodReport:      {"kinfer_method_report", ":I"},
	exMethodSave:        {"kinfer_method_save", ":I"},
	exMethodLoad:        {"kinfer_method_load", "ii:i"},
	exMethodProblem:     {"kinfer_method_problem", "iiiiiii:i"},
	exMethodTellLSQ:     {"kinfer_method_tell_lsq", "iiiiiiiii:i"},
	exMethodOutputs:     {"kinfer_method_outputs", "iiiii:i"},
	exMethodTellOutputs: {"kinfer_method_tell_outputs", "iiiiiiii:i"},
	exModelForward:      {"kinfer_model_forward", "iiiii:i"},
	exModelPullback:     {"kinfer_model_pullback", "iiiiiii:i"},
}

func (e export) String() string { return exportSig[e].name }

// sigString renders a function definition's signature like exportSig.
func sigString(def api.FunctionDefinition) string {
	var b strings.Builder
	enc := func(ts []api.ValueType) {
		for _, t := range ts {
			switch t {
			case api.ValueTypeI32:
				b.WriteByte('i')
			case api.ValueTypeI64:
				b.WriteByte('I')
			case api.ValueTypeF32:
				b.WriteByte('f')
			case api.ValueTypeF64:
				b.WriteByte('F')
			default:
				b.WriteByte('?')
			}
		}
	}
	enc(def.ParamTypes())
	b.WriteByte(':')
	enc(def.ResultTypes())
	return b.String()
}

// sigHuman renders "i:iI" as "() -> i32" style text for error messages.
func sigHuman(sig string) string {
	params, results, _ := strings.Cut(sig, ":")
	conv := func(s string) string {
		var parts []string
		for _, c := range s {
			switch c {
			case 'i':
				parts = append(parts, "i32")
			case 'I':
				parts = append(parts, "i64")
			case 'f':
				parts = append(parts, "f32")
			case 'F':
				parts = append(parts, "f64")
			default:
				parts = append(parts, "?")
			}
		}
		return strings.Join(parts, ", ")
	}
	s := "(" + conv(params) + ")"
	if results != "" {
		s += " -> " + conv(results)
	}
	return s
}

// Error is a fault of a plugin (ABI.md §5): a call that exceeded timeout_ms
// (Status Timeout), or one that trapped, called proc_exit or returned a
// malformed result (Status Trap). The instance that faulted is discarded.
type Error struct {
	Plugin string     // the manifest name
	Export string     // the export called ("_initialize" for a start-up fault)
	Status abi.Status // abi.Timeout or abi.Trap
	Msg    string     // what happened, e.g. "exceeded timeout_ms=200"
	Err    error      // the underlying wazero error, if any
	// Transient is true when the fault may not happen again on the same
	// inputs: a wall-clock timeout (machine load) or an interruption (the
	// run was stopped). A trap, a malformed result or an exhausted fuel
	// budget is deterministic: resuming the run would fault again.
	Transient bool
	// At names the point(s) of the faulting call, when a model's
	// ("; at θ = (a 1.5, b 2)", or the batch's first): a plugin that
	// crashes in part of the parameter space is reproduced from it.
	At string
}

// Deterministic reports whether the same call on the same inputs would
// fault again (see Transient).
func (e *Error) Deterministic() bool { return !e.Transient }

func (e *Error) Error() string { return "plugin " + e.Plugin + ": " + e.Export + " " + e.Msg + e.At }

func (e *Error) Unwrap() error { return e.Err }

// instance is one instantiated module with its exports resolved and its
// reusable host buffer. It is used by one goroutine at a time.
type instance struct {
	p       *Plugin
	ctx     context.Context // the instance's context; carries the plugin log
	callCtx context.Context // ctx with the meter, passed to every call
	done    <-chan struct{} // ctx.Done()
	mod     api.Module
	mem     api.Memory
	fn      [numExports]api.Function
	stack   [9]uint64 // the longest export (kinfer_method_tell_lsq) takes 9 arguments
	out     *lineWriter
	meter   meterState
	fuel    api.MutableGlobal // the meter's counter; nil when unmetered
	rand    *callRand         // WASI random_get, restarted at every call

	arena    uint32 // host buffer from kinfer_alloc; 0 = none
	arenaCap uint32

	dead bool // faulted or closed: never call again

	// wallCap, when > 0, caps the wall-clock limit of the next calls (a
	// method's samples, report and save after the run's stop:
	// method.LimitAfterStop).
	wallCap time.Duration
}

func (in *instance) close() {
	if in.mod != nil {
		_ = in.mod.Close(context.Background())
	}
	if in.out != nil {
		in.out.flush()
	}
	in.dead = true
}

// fault builds an *Error for export e and marks the instance dead.
func (in *instance) fault(e export, status abi.Status, err error, format string, args ...any) *Error {
	in.dead = true
	return &Error{Plugin: in.p.Manifest.Name, Export: e.String(), Status: status, Msg: in.memoryHint(fmt.Sprintf(format, args...)), Err: err}
}

// memoryHint adds to a message that says the guest ran out of memory (its
// runtime's "fatal error: out of memory", a C malloc's failure it
// reported) the limit it ran into and where to raise it (audit 4: nothing
// pointed at memory_mib).
func (in *instance) memoryHint(msg string) string {
	if !strings.Contains(strings.ToLower(msg), "out of memory") || strings.Contains(msg, "memory_mib") {
		return msg
	}
	mib := in.p.Manifest.Limits.MemoryMiB
	if mib <= 0 {
		mib = manifest.DefaultMemoryMiB
	}
	where := "its plugin.toml [limits]"
	if in.p.Manifest.Path != "" {
		where = in.p.Manifest.Path + " [limits]"
	}
	return fmt.Sprintf("%s (its memory is limited to memory_mib = %d MiB, %s: raise it if the plugin needs more)", msg, mib, where)
}

// malformed is the Trap of a guest that returned something the host cannot
// accept (ABI.md §2, §5).
func (in *instance) malformed(e export, format string, args ...any) *Error {
	return in.fault(e, abi.Trap, nil, format, args...)
}

// call runs export e with args under the plugin's fuel budget and
// timeout_ms (ABI.md §8) and returns its first result. Any error is an
// *Error and the instance is dead afterwards.
func (in *instance) call(e export, args ...uint64) (uint64, error) {
	return in.callN(e, 1, args...)
}

// callN is call for a batch of points: the budget and the timeout are the
// plugin's per point times points.
func (in *instance) callN(e export, points int, args ...uint64) (uint64, error) {
	if in.dead {
		return 0, in.fault(e, abi.Trap, nil, "called on a discarded instance")
	}
	if in.out != nil {
		in.out.resetTail() // a fault quotes only this call's output
	}
	f := in.fn[e]
	if f == nil {
		return 0, in.malformed(e, "is not exported")
	}
	// Clear the stack: wazero (v1.12.0, compiler) writes only the low 32
	// bits of an i32 result, so a slot reused after an i64 result keeps
	// stale high bits.
	select {
	case <-in.done: // a stopped run starts no call (a started one is stopped by the meter)
		return 0, in.classify(e.String(), &meterFault{kind: faultInterrupt, cause: context.Cause(in.ctx)})
	default:
	}
	in.stack = [len(in.stack)]uint64{}
	copy(in.stack[:], args)
	if in.fuel != nil {
		timeout := time.Duration(scaled(int64(in.p.timeout), points))
		capped := in.wallCap > 0 && (timeout == 0 || timeout > in.wallCap)
		if capped {
			timeout = in.wallCap
		}
		in.fuel.Set(uint64(in.meter.begin(scaled(in.p.fuel, points), timeout)))
		in.meter.afterStop = capped
	}
	in.rand.restart()
	err := f.CallWithStack(in.callCtx, in.stack[:])
	if err != nil {
		return 0, in.classify(e.String(), err)
	}
	if in.fuel != nil {
		in.meter.end(int64(in.fuel.Get()))
	}
	if result32[e] {
		return uint64(uint32(in.stack[0])), nil
	}
	return in.stack[0], nil
}

// result32 marks the exports whose result is an i32.
var result32 = func() (r [numExports]bool) {
	for e, s := range exportSig {
		r[e] = strings.HasSuffix(s.sig, ":i")
	}
	return r
}()

// classify turns a failed call (or instantiation) into an *Error.
func (in *instance) classify(name string, err error) *Error {
	in.dead = true
	e := &Error{Plugin: in.p.Manifest.Name, Export: name, Status: abi.Trap, Err: err}
	var exit *sys.ExitError
	var mf *meterFault
	switch {
	case errors.As(err, &mf):
		e.Status, e.Msg = abi.Timeout, mf.Error()
		switch mf.kind {
		case faultFuel:
			e.Msg = fmt.Sprintf("exceeded its fuel budget of %d (fuel = %d per call or point in %s)", mf.budget, in.p.fuel, in.p.Manifest.Path)
		case faultInterrupt:
			e.Status, e.Transient = abi.Trap, true
		case faultWall:
			e.Transient = true
		}
	case in.ctx.Err() != nil:
		e.Msg = "interrupted: " + context.Cause(in.ctx).Error()
		e.Transient = true
	case in.p.rt.isClosed():
		e.Msg = "interrupted: the runtime was closed"
		e.Transient = true
	case errors.As(err, &exit):
		e.Msg = fmt.Sprintf("exited with proc_exit(%d)", exit.ExitCode())
		e.Msg += in.lastOutput()
	default:
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			// wazero appends a wasm stack trace: log it, keep the first line.
			in.p.log.message([]byte(name + ": " + msg))
			msg = msg[:i]
		}
		e.Msg = "trapped: " + msg + in.lastOutput()
	}
	return e
}

// i32 is a guest i32 result as a signed value.
func i32(v uint64) int32 { return int32(uint32(v)) }

// unpackSpan splits a packed span (ABI.md §2).
func unpackSpan(v uint64) (ptr, n uint32) { return uint32(v), uint32(v >> 32) }

// view returns the guest bytes [ptr, ptr+n) or a Trap naming export e.
func (in *instance) view(e export, what string, ptr uint32, n uint64) ([]byte, error) {
	if n > math.MaxUint32 || uint64(ptr)+n > uint64(in.mem.Size()) {
		return nil, in.malformed(e, "returned %s [%d, +%d) outside memory of %d bytes", what, ptr, n, in.mem.Size())
	}
	b, ok := in.mem.Read(ptr, uint32(n))
	if !ok {
		return nil, in.malformed(e, "returned %s [%d, +%d) outside memory of %d bytes", what, ptr, n, in.mem.Size())
	}
	return b, nil
}

// spanBytes reads a byte span returned by export e (copying it).
func (in *instance) spanBytes(e export, span uint64, max uint32) ([]byte, error) {
	ptr, n := unpackSpan(span)
	if n == 0 {
		return nil, nil
	}
	if n > max {
		return nil, in.malformed(e, "returned a span of %d bytes (at most %d accepted)", n, max)
	}
	b, err := in.view(e, "span", ptr, uint64(n))
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// lastError is the guest's kinfer_last_error message, or "" (best effort:
// a fault while reading it is ignored, but kills the instance). A message
// longer than maxLogLine bytes is cut there (ABI.md §3), not refused. Call it
// before marking the instance dead (fault), or it is not asked.
func (in *instance) lastError() string {
	if in.fn[exLastError] == nil || in.dead {
		return ""
	}
	span, err := in.call(exLastError)
	if err != nil {
		return ""
	}
	ptr, n := unpackSpan(span)
	if n == 0 {
		return ""
	}
	cut := n > maxLogLine
	if cut {
		n = maxLogLine
	}
	b, err := in.view(exLastError, "span", ptr, uint64(n))
	if err != nil {
		return ""
	}
	if cut {
		// Do not leave half a UTF-8 sequence at the cut.
		for k := len(b); k > 0 && len(b)-k < utf8.UTFMax; k-- {
			if utf8.RuneStart(b[k-1]) {
				if !utf8.FullRune(b[k-1:]) {
					b = b[:k-1]
				}
				break
			}
		}
	}
	// Guest text: escaped (control characters shown, one line) before it
	// goes into any error (ABI.md §8: plugins may be untrusted).
	msg := guesttext.Escape(strings.TrimSpace(string(b)))
	if cut {
		msg += " [truncated]"
	}
	return msg
}

// lastErrorOr is lastError, or a note that there was none.
func (in *instance) lastErrorOr() string {
	if msg := in.lastError(); msg != "" {
		return msg
	}
	return "(no kinfer_last_error message)"
}

// refused is the error of a non-zero return from a configure or method
// export: it names the plugin, the export, the code and the guest's message.
func (in *instance) refused(e export, code int32) error {
	return fmt.Errorf("plugin %s: %s returned %d: %s", in.p.Manifest.Name, e, code, in.memoryHint(in.lastErrorOr()))
}

// buffer returns a host buffer of at least n bytes from kinfer_alloc,
// reusing the previous one when it is large enough (ABI.md §2). A guest must
// not keep pointers to it across calls, so reuse is invisible to it.
func (in *instance) buffer(e export, n uint64) (uint32, error) {
	if n == 0 {
		n = 8
	}
	if n <= uint64(in.arenaCap) && in.arena != 0 {
		return in.arena, nil
	}
	if n > math.MaxUint32-64 {
		return 0, in.malformed(e, "needs a %d-byte buffer, more than a wasm32 memory holds", n)
	}
	if in.arena != 0 {
		if _, err := in.call(exFree, uint64(in.arena), uint64(in.arenaCap)); err != nil {
			return 0, err
		}
		in.arena, in.arenaCap = 0, 0
	}
	want := (n + n/2 + 63) &^ 63 // headroom, so that slowly growing batches do not realloc every time
	if want > math.MaxUint32 {
		want = n
	}
	ptr, err := in.alloc(want)
	if err != nil {
		return 0, err
	}
	if ptr == 0 && want > n {
		want = n
		if ptr, err = in.alloc(want); err != nil {
			return 0, err
		}
	}
	if ptr == 0 {
		msg := in.lastErrorOr() // before malformed: a dead instance is not asked
		return 0, in.fault(exAlloc, abi.Trap, errNoRoom, "returned 0 for %d bytes (memory_mib=%d): %s", n, in.p.Manifest.Limits.MemoryMiB, msg)
	}
	in.arena, in.arenaCap = ptr, uint32(want)
	return ptr, nil
}

// errNoRoom is the cause of a buffer the guest's kinfer_alloc refused
// (returned 0), as opposed to one it trapped or lied about.
var errNoRoom = errors.New("kinfer_alloc returned 0")

func (in *instance) alloc(n uint64) (uint32, error) {
	v, err := in.call(exAlloc, n)
	if err != nil {
		return 0, err
	}
	ptr := uint32(v)
	if ptr == 0 {
		return 0, nil
	}
	if ptr%8 != 0 {
		return 0, in.malformed(exAlloc, "returned %d for %d bytes: not 8-byte aligned", ptr, n)
	}
	if uint64(ptr)+n > uint64(in.mem.Size()) {
		return 0, in.malformed(exAlloc, "returned [%d, +%d) outside memory of %d bytes", ptr, n, in.mem.Size())
	}
	return ptr, nil
}

// layout places consecutive 8-byte aligned regions in the host buffer.
type layout struct{ n uint64 }

func (l *layout) f64(count int) uint64 { return l.add(uint64(count) * 8) }
func (l *layout) i32(count int) uint64 { return l.add(uint64(count) * 4) }
func (l *layout) add(size uint64) uint64 {
	off := l.n
	l.n += (size + 7) &^ 7
	return off
}

// hostView is a host-buffer region. The arena lies inside memory (checked
// when allocated) and memory never shrinks, so this cannot fail; the check
// stays for safety.
func (in *instance) hostView(e export, off uint32, n uint64) ([]byte, error) {
	b, ok := in.mem.Read(off, uint32(n))
	if !ok {
		return nil, in.malformed(e, "host buffer [%d, +%d) outside memory of %d bytes", off, n, in.mem.Size())
	}
	return b, nil
}

// writeF64s writes v at host-buffer offset off.
func (in *instance) writeF64s(e export, off uint32, v []float64) error {
	if len(v) == 0 {
		return nil
	}
	b, err := in.hostView(e, off, uint64(len(v))*8)
	if err != nil {
		return err
	}
	putF64s(b, v)
	return nil
}

// prefill writes the unwritten pattern into n output values at host-buffer
// offset off, so that a value the guest does not write is caught, and a
// previous call's value can never pass as this call's (ABI.md §2).
func (in *instance) prefill(e export, off uint32, n int) error {
	if n == 0 {
		return nil
	}
	b, err := in.hostView(e, off, uint64(n)*8)
	if err != nil {
		return err
	}
	fillUnwritten(b, n)
	return nil
}

// readOut reads the output array name into dst from host-buffer offset
// off, after a call that returned ok. It reports whether every value is
// finite; a value the guest did not write is a Trap naming the export,
// the array and the index.
func (in *instance) readOut(e export, name string, off uint32, dst []float64) (bool, error) {
	if len(dst) == 0 {
		return true, nil
	}
	b, err := in.hostView(e, off, uint64(len(dst))*8)
	if err != nil {
		return false, err
	}
	finite, missing := getF64s(dst, b)
	if missing >= 0 {
		return false, in.malformed(e, "returned ok without writing %s[%d] (of %d values)", name, missing, len(dst))
	}
	return finite, nil
}

// guestStatus checks a status returned by a guest: only 0, 1 or 2. point
// is the batch index, or -1 for a single evaluation.
func (in *instance) guestStatus(e export, v int32, point int) (abi.Status, error) {
	switch abi.Status(v) {
	case abi.OK, abi.Failed, abi.Invalid:
		return abi.Status(v), nil
	}
	where := ""
	if point >= 0 {
		where = fmt.Sprintf(" for point %d", point)
	}
	msg := in.lastErrorOr() // before malformed: a dead instance is not asked
	return abi.Trap, in.malformed(e, "returned status %d%s (a guest returns only 0, 1 or 2): %s", v, where, msg)
}

// setContext makes ctx the instance's context: its cancellation
// interrupts a call in progress (checked by the meter).
func (in *instance) setContext(ctx context.Context) {
	in.ctx = ctx
	in.done = ctx.Done()
	in.meter.ctx = ctx
	in.meter.closed = &in.p.rt.closedF
	in.callCtx = context.WithValue(context.WithValue(ctx, tailKey{}, in.out), meterKey{}, &in.meter)
}

// timeoutOf converts timeout_ms, saturating.
func timeoutOf(ms int) time.Duration {
	if ms > math.MaxInt64/int(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// lastOutput is ", its last output: …" with the guest's last stdout and
// stderr lines (a Go runtime's "fatal error: out of memory" before
// proc_exit(2)), or "" when it wrote none: the reason reaches the user
// without --verbose.
func (in *instance) lastOutput() string {
	if in.out == nil {
		return ""
	}
	if t := in.out.lastLines(); t != "" {
		return "; its last output: " + t
	}
	return ""
}
