package meter

import "fmt"

// rewriteCode instruments every function body of the code section.
func (m *module) rewriteCode(body []byte, refill, fuelGlobal uint32) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.count(1)
	if err != nil {
		return nil, err
	}
	if n != len(m.funcType) {
		return nil, fmt.Errorf("%d bodies for %d functions", n, len(m.funcType))
	}
	out := appendULEB(make([]byte, 0, len(body)+len(body)/4), uint64(n))
	f := &funcWriter{m: m, refill: refill, global: fuelGlobal}
	for i := range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		start := r.off
		b, err := r.bytes(uint64(size))
		if err != nil {
			return nil, err
		}
		t := m.funcType[i]
		if t >= m.nTypes {
			return nil, &Error{Section: "code", Func: i, Offset: start, Err: fmt.Errorf("type index %d out of range", t)}
		}
		nb, err := f.rewrite(b, m.params[t])
		if err != nil {
			return nil, &Error{Section: "code", Func: i, Offset: start + f.at, Err: err}
		}
		out = appendULEB(out, uint64(len(nb)))
		out = append(out, nb...)
	}
	if !r.done() {
		return nil, fmt.Errorf("%d bytes after the last function body", len(body)-r.off)
	}
	return out, nil
}

// funcWriter rewrites one function body at a time (its buffers are
// reused).
type funcWriter struct {
	m      *module
	refill uint32 // function index of the refill import
	global uint32 // index of the fuel global

	at      int     // offset of the instruction being read, for errors
	weights []int64 // per scope in order of opening: the function, then each loop
	scopes  []int   // open meter scopes (indices into weights)
	blocks  []bool  // open blocks; true for a loop (its scope is on scopes)
	out     []byte
	in      instr

	fuel, tmp uint32 // the new locals: the counter (i64) and a length (i32)
	leaf      bool
}

// rewrite returns the instrumented body b of a function with params
// parameters.
func (f *funcWriter) rewrite(b []byte, params int) ([]byte, error) {
	r := &reader{b: b}
	f.at = 0
	groups, err := r.count(2)
	if err != nil {
		return nil, err
	}
	hdr := r.off
	locals := uint64(params)
	for range groups {
		c, err := r.u32()
		if err != nil {
			return nil, err
		}
		t, err := r.byte()
		if err != nil {
			return nil, err
		}
		if !isValType(t) {
			return nil, fmt.Errorf("local of type 0x%02x is not supported", t)
		}
		locals += uint64(c)
		if locals+2 > MaxLocals {
			return nil, fmt.Errorf("more than %d locals", MaxLocals-2)
		}
	}
	code := r.off
	f.fuel, f.tmp = uint32(locals), uint32(locals+1)

	// Pass 1: the weight of every scope and the validity of indices.
	if err := f.weigh(&reader{b: b, off: code}, uint32(locals)); err != nil {
		return nil, err
	}
	// Pass 2: emit. Locals first: the original groups, then the meter's.
	f.out = appendULEB(f.out[:0], uint64(groups)+2)
	f.out = append(f.out, b[hdr:code]...)
	f.out = append(f.out, 1, tI64, 1, tI32)
	if err := f.emit(&reader{b: b, off: code}); err != nil {
		return nil, err
	}
	return f.out, nil
}

// weigh counts, for the function and for each loop in order of opening,
// the instructions that lie directly in it (not in a nested loop), and
// checks the instructions' indices against the original module.
func (f *funcWriter) weigh(r *reader, locals uint32) error {
	f.weights = append(f.weights[:0], 0)
	f.scopes = append(f.scopes[:0], 0)
	f.leaf = true
	f.blocks = f.blocks[:0]
	in := &f.in
	for {
		f.at = r.off
		if err := r.decode(in); err != nil {
			return err
		}
		f.weights[f.scopes[len(f.scopes)-1]]++
		switch in.op {
		case opBlock, opIf:
			f.blocks = append(f.blocks, false)
		case opLoop:
			f.blocks = append(f.blocks, true)
			f.scopes = append(f.scopes, len(f.weights))
			f.weights = append(f.weights, 0)
		case opEnd:
			if len(f.blocks) == 0 {
				if !r.done() {
					return fmt.Errorf("%d bytes after the function's end", len(r.b)-r.off)
				}
				return nil
			}
			if f.blocks[len(f.blocks)-1] {
				f.scopes = f.scopes[:len(f.scopes)-1]
			}
			f.blocks = f.blocks[:len(f.blocks)-1]
		case opCallIndirect:
			f.leaf = false
		case opCall, opRefFunc:
			if in.op == opCall {
				f.leaf = false
			}
			if in.idx >= f.m.numFuncs() {
				return fmt.Errorf("function index %d out of range (%d functions)", in.idx, f.m.numFuncs())
			}
		case opLocalGet, opLocalSet, opLocalTee:
			if in.idx >= locals {
				return fmt.Errorf("local index %d out of range (%d locals)", in.idx, locals)
			}
		case opGlobalGet, opGlobalSet:
			if in.idx >= f.m.numGlobals() {
				return fmt.Errorf("global index %d out of range (%d globals)", in.idx, f.m.numGlobals())
			}
		}
		if r.done() {
			return errTruncated
		}
	}
}

// emit copies the body's instructions with the meter's code inserted.
func (f *funcWriter) emit(r *reader) error {
	loops := 0 // scopes opened so far (the function is scope 0)
	f.blocks = f.blocks[:0]
	f.entry(f.weights[0])
	in := &f.in
	for {
		f.at = r.off
		if err := r.decode(in); err != nil {
			return err
		}
		depth := uint32(len(f.blocks)) // a branch to depth leaves the function
		switch in.op {
		case opBlock, opIf:
			f.blocks = append(f.blocks, false)
		case opLoop:
			f.blocks = append(f.blocks, true)
			f.out = append(f.out, r.b[in.start:in.end]...)
			loops++
			f.charge(f.weights[loops])
			continue
		case opEnd:
			if len(f.blocks) == 0 {
				f.flush()
				f.out = append(f.out, opEnd)
				return nil
			}
			f.blocks = f.blocks[:len(f.blocks)-1]
		case opReturn:
			f.flush()
		case opBr, opBrIf:
			if in.idx == depth {
				f.flush()
			}
		case opBrTable:
			for _, l := range in.labels {
				if l == depth {
					f.flush()
					break
				}
			}
		case opCall:
			if in.idx < f.m.impFuncs {
				// An import (WASI, kinfer_v1) cannot reach the counter.
				break
			}
			f.flush()
			f.out = append(f.out, opCall)
			f.out = appendULEB(f.out, uint64(in.idx)+1)
			f.reload()
			continue
		case opCallIndirect:
			f.flush()
			f.out = append(f.out, r.b[in.start:in.end]...)
			f.reload()
			continue
		case opRefFunc:
			f.out = append(f.out, opRefFunc)
			f.out = appendULEB(f.out, uint64(in.idx)+boolU64(in.idx >= f.m.impFuncs))
			continue
		case opPrefixFC:
			if in.bulk() {
				f.chargeBulk()
			}
		}
		f.out = append(f.out, r.b[in.start:in.end]...)
	}
}

func boolU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// The inserted sequences. The counter is local f.fuel; the global carries
// it across calls between the module's functions.

// entry loads the counter from the global and charges w.
func (f *funcWriter) entry(w int64) {
	if Variant == 4 {
		f.gcharge(w)
		return
	}
	f.out = append(f.out, opGlobalGet)
	f.out = appendULEB(f.out, uint64(f.global))
	f.subtract(w)
}

// charge subtracts w from the counter and refills when it drops below 0.
func (f *funcWriter) gcharge(w int64) {
	f.out = append(f.out, opGlobalGet)
	f.out = appendULEB(f.out, uint64(f.global))
	f.out = append(f.out, opI64Const)
	f.out = appendSLEB(f.out, w)
	f.out = append(f.out, opI64Sub, opGlobalSet)
	f.out = appendULEB(f.out, uint64(f.global))
	f.out = append(f.out, opGlobalGet)
	f.out = appendULEB(f.out, uint64(f.global))
	f.out = append(f.out, opI64Const, 0, opI64LtS, opIf, 0x40, opUnreachable, opEnd)
}

func (f *funcWriter) charge(w int64) {
	if Variant == 4 {
		f.gcharge(w)
		return
	}
	f.out = append(f.out, opLocalGet)
	f.out = appendULEB(f.out, uint64(f.fuel))
	f.subtract(w)
}

// subtract: [counter] → counter − w, stored, then the refill check.
func (f *funcWriter) subtract(w int64) {
	if w < 1 {
		w = 1
	}
	f.out = append(f.out, opI64Const)
	f.out = appendSLEB(f.out, w)
	f.out = append(f.out, opI64Sub)
	f.check()
}

// check: [counter] → (stored; if < 0, refilled).
func (f *funcWriter) check() {
	if Variant == 1 {
		f.out = append(f.out, opLocalSet)
		f.out = appendULEB(f.out, uint64(f.fuel))
		return
	}
	if Variant == 2 || (Variant == 3 && f.leaf) {
		f.out = append(f.out, opLocalTee)
		f.out = appendULEB(f.out, uint64(f.fuel))
		f.out = append(f.out, opI64Const, 0, opI64LtS, opIf, 0x40, opUnreachable, opEnd)
		return
	}
	f.out = append(f.out, opLocalTee)
	f.out = appendULEB(f.out, uint64(f.fuel))
	f.out = append(f.out, opI64Const, 0, opI64LtS, opIf, 0x40, opLocalGet)
	f.out = appendULEB(f.out, uint64(f.fuel))
	f.out = append(f.out, opCall)
	f.out = appendULEB(f.out, uint64(f.refill))
	f.out = append(f.out, opLocalSet)
	f.out = appendULEB(f.out, uint64(f.fuel))
	f.out = append(f.out, opEnd)
}

// chargeBulk charges a bulk operation's length (the i32 on top of the
// stack) >> BulkShift and leaves the stack as it was.
func (f *funcWriter) chargeBulk() {
	f.out = append(f.out, opLocalSet)
	f.out = appendULEB(f.out, uint64(f.tmp))
	f.out = append(f.out, opLocalGet)
	f.out = appendULEB(f.out, uint64(f.fuel))
	f.out = append(f.out, opLocalGet)
	f.out = appendULEB(f.out, uint64(f.tmp))
	f.out = append(f.out, opI64ExtendU, opI64Const, BulkShift, opI64ShrU, opI64Sub)
	f.check()
	f.out = append(f.out, opLocalGet)
	f.out = appendULEB(f.out, uint64(f.tmp))
}

// flush stores the counter in the global (before a call or a return).
func (f *funcWriter) flush() {
	if Variant == 4 {
		return
	}
	f.out = append(f.out, opLocalGet)
	f.out = appendULEB(f.out, uint64(f.fuel))
	f.out = append(f.out, opGlobalSet)
	f.out = appendULEB(f.out, uint64(f.global))
}

// reload takes the counter back from the global (after a call).
func (f *funcWriter) reload() {
	if Variant == 4 {
		return
	}
	f.out = append(f.out, opGlobalGet)
	f.out = appendULEB(f.out, uint64(f.global))
	f.out = append(f.out, opLocalSet)
	f.out = appendULEB(f.out, uint64(f.fuel))
}
