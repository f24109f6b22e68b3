package meter

import (
	"fmt"
	"slices"
)

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
	f := &funcWriter{m: m, refill: refill, fuelGlobal: fuelGlobal}
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
	m          *module
	refill     uint32 // function index of the refill import
	fuelGlobal uint32 // index of the fuel global

	at      int     // offset of the instruction being read, for errors
	weights []int64 // per scope in order of opening: the function, then each loop
	scopes  []int   // open meter scopes (indices into weights)
	blocks  []bool  // open blocks; true for a loop (its scope is on scopes)
	extra   []int   // per open block: labels the meter wrapped around it
	loopW   []int64 // weights of the open outlined loops
	out     []byte
	in      instr

	fuel, tmp uint32 // the new locals: the counter (i64) and a length (i32)
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
		case opCall, opRefFunc:
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
//
// A loop whose block type is empty or a single value type is outlined:
//
//	block bt                 ;; done
//	  loop                   ;; again
//	    block                ;; refill
//	      loop bt            ;; the original loop
//	        counter -= w; br_if refill (counter < 0)
//	        …body…
//	      end
//	      br done            ;; the loop's results, if any, go with it
//	    end
//	    counter = refill(counter) + w
//	    br again             ;; the header charges w again
//	  end
//	  unreachable
//	end
//
// so that the loop itself contains no call. A call anywhere in a loop makes
// wazero's register allocator spill the values live across it in the
// loop's hot path (measured: 20–30 % on a small kernel); out of the loop it
// costs nothing until the counter runs out. Branches that leave an
// outlined loop skip its three extra labels (remap). A loop with
// parameters (a type-index block type) is charged in place instead.
func (f *funcWriter) emit(r *reader) error {
	loops := 0 // scopes opened so far (the function is scope 0)
	f.blocks, f.extra, f.loopW = f.blocks[:0], f.extra[:0], f.loopW[:0]
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
			f.blocks, f.extra = append(f.blocks, false), append(f.extra, 0)
		case opLoop:
			loops++
			w := max(1, f.weights[loops])
			f.blocks = append(f.blocks, true)
			if bt := r.b[in.start+1 : in.end]; len(bt) == 1 && (bt[0] == 0x40 || isValType(bt[0])) {
				f.out = append(f.out, opBlock, bt[0], opLoop, 0x40, opBlock, 0x40, opLoop, bt[0])
				f.extra, f.loopW = append(f.extra, 3), append(f.loopW, w)
				f.local(opLocalGet, f.fuel)
				f.i64(w)
				f.out = append(f.out, opI64Sub)
				f.local(opLocalTee, f.fuel)
				f.out = append(f.out, opI64Const, 0, opI64LtS, opBrIf, 1)
				continue
			}
			f.extra = append(f.extra, 0)
			f.out = append(f.out, r.b[in.start:in.end]...)
			f.local(opLocalGet, f.fuel)
			f.subtract(w)
			continue
		case opEnd:
			if len(f.blocks) == 0 {
				f.flush()
				f.out = append(f.out, opEnd)
				return nil
			}
			outlined := f.extra[len(f.extra)-1] == 3
			f.blocks, f.extra = f.blocks[:len(f.blocks)-1], f.extra[:len(f.extra)-1]
			if outlined {
				w := f.loopW[len(f.loopW)-1]
				f.loopW = f.loopW[:len(f.loopW)-1]
				f.out = append(f.out, opEnd, opBr, 2, opEnd)
				f.local(opLocalGet, f.fuel)
				f.call(f.refill)
				f.i64(w)
				f.out = append(f.out, opI64Add)
				f.local(opLocalSet, f.fuel)
				// again never falls through, but validation does not know:
				// unreachable lets done end with the loop's results.
				f.out = append(f.out, opBr, 0, opEnd, opUnreachable, opEnd)
				continue
			}
		case opReturn:
			f.flush()
		case opBr, opBrIf:
			if in.idx == depth {
				f.flush()
			}
			f.out = append(f.out, in.op)
			f.out = appendULEB(f.out, uint64(f.remap(in.idx)))
			continue
		case opBrTable:
			if slices.Contains(in.labels, depth) {
				f.flush()
			}
			f.out = append(f.out, opBrTable)
			f.out = appendULEB(f.out, uint64(len(in.labels)-1))
			for _, l := range in.labels {
				f.out = appendULEB(f.out, uint64(f.remap(l)))
			}
			continue
		case opCall:
			if in.idx < f.m.impFuncs {
				// An import (WASI, kinfer_v1) cannot reach the counter.
				break
			}
			f.flush()
			f.call(in.idx + 1)
			f.reload()
			continue
		case opCallIndirect:
			f.flush()
			f.out = append(f.out, r.b[in.start:in.end]...)
			f.reload()
			continue
		case opRefFunc:
			f.out = append(f.out, opRefFunc)
			if in.idx >= f.m.impFuncs {
				in.idx++
			}
			f.out = appendULEB(f.out, uint64(in.idx))
			continue
		case opPrefixFC:
			if in.bulk() {
				f.chargeBulk()
			}
		}
		f.out = append(f.out, r.b[in.start:in.end]...)
	}
}

// remap is the depth, in the instrumented body, of the branch target at
// original depth d: the labels the meter wrapped around the blocks the
// branch leaves are added.
func (f *funcWriter) remap(d uint32) uint32 {
	n := d
	top := len(f.extra) - 1
	for k := top; k > top-int(d) && k >= 0; k-- {
		n += uint32(f.extra[k])
	}
	return n
}

// The inserted sequences. The counter is local f.fuel; the global carries
// it across calls between the module's functions.

func (f *funcWriter) local(op byte, idx uint32) {
	f.out = append(f.out, op)
	f.out = appendULEB(f.out, uint64(idx))
}

func (f *funcWriter) global(op byte) {
	f.out = append(f.out, op)
	f.out = appendULEB(f.out, uint64(f.fuelGlobal))
}

func (f *funcWriter) call(fn uint32) {
	f.out = append(f.out, opCall)
	f.out = appendULEB(f.out, uint64(fn))
}

func (f *funcWriter) i64(v int64) {
	f.out = append(f.out, opI64Const)
	f.out = appendSLEB(f.out, v)
}

// entry loads the counter from the global and charges w.
func (f *funcWriter) entry(w int64) {
	f.global(opGlobalGet)
	f.subtract(max(1, w))
}

// subtract: [counter] → counter − w, stored, then the refill check.
func (f *funcWriter) subtract(w int64) {
	f.i64(w)
	f.out = append(f.out, opI64Sub)
	f.check()
}

// check: [counter] → stored; if below 0, refilled in place.
func (f *funcWriter) check() {
	f.local(opLocalTee, f.fuel)
	f.out = append(f.out, opI64Const, 0, opI64LtS, opIf, 0x40)
	f.local(opLocalGet, f.fuel)
	f.call(f.refill)
	f.local(opLocalSet, f.fuel)
	f.out = append(f.out, opEnd)
}

// chargeBulk charges a bulk operation's length (the i32 on top of the
// stack) >> BulkShift and leaves the stack as it was.
func (f *funcWriter) chargeBulk() {
	f.local(opLocalSet, f.tmp)
	f.local(opLocalGet, f.fuel)
	f.local(opLocalGet, f.tmp)
	f.out = append(f.out, opI64ExtendU, opI64Const, BulkShift, opI64ShrU, opI64Sub)
	f.check()
	f.local(opLocalGet, f.tmp)
}

// flush stores the counter in the global (before a call or a return).
func (f *funcWriter) flush() {
	f.local(opLocalGet, f.fuel)
	f.global(opGlobalSet)
}

// reload takes the counter back from the global (after a call).
func (f *funcWriter) reload() {
	f.global(opGlobalGet)
	f.local(opLocalSet, f.fuel)
}
