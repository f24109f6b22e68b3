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
	if err := m.findLeaves(body); err != nil {
		return nil, err
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
		nb, err := f.rewrite(b, m.params[t], m.leafW[i] >= 0)
		if err != nil {
			return nil, &Error{Section: "code", Func: i, Offset: start + f.at, Err: err}
		}
		if f.total > MaxInstructions {
			return nil, &Error{Section: "code", Func: i, Offset: start, Err: fmt.Errorf("more than %d instructions in the module (compiling takes up to about 340 bytes of host memory per instruction)", MaxInstructions)}
		}
		out = appendULEB(out, uint64(len(nb)))
		out = append(out, nb...)
	}
	if !r.done() {
		return nil, fmt.Errorf("%d bytes after the last function body", len(body)-r.off)
	}
	return out, nil
}

// findLeaves marks the leaf functions: those without a loop, a call or a
// bulk memory or table operation. A leaf's work is bounded by its size, so
// it carries no meter code at all: its weight (its instruction count) is
// charged by its callers at the call, with the caller's own instructions,
// and a call_indirect charges the largest weight of the leaves of its
// type. A leaf called by the host directly (an export) runs uncharged,
// its work bounded by its size. Small helpers are leaves; calls to them
// then cost nothing extra.
func (m *module) findLeaves(body []byte) error {
	r := &reader{b: body}
	n, err := r.count(1)
	if err != nil {
		return err
	}
	m.leafW = make([]int64, n)
	m.maxLeaf = map[string]int64{}
	var in instr
	for i := range n {
		size, err := r.u32()
		if err != nil {
			return err
		}
		b, err := r.bytes(uint64(size))
		if err != nil {
			return err
		}
		fr := &reader{b: b}
		groups, err := fr.count(2)
		if err != nil {
			return err
		}
		for range groups {
			if _, err := fr.u32(); err != nil {
				return err
			}
			if _, err := fr.byte(); err != nil {
				return err
			}
		}
		w := int64(0)
		for !fr.done() && w >= 0 {
			if err := fr.decode(&in); err != nil {
				w = -1 // reported by the rewrite, with its place
				break
			}
			w++
			if in.op == opLoop || in.op == opCall || in.op == opCallIndirect || in.bulk() {
				w = -1
			}
		}
		m.leafW[i] = w
		if w >= 0 {
			if t := m.funcType[i]; t < m.nTypes {
				m.maxLeaf[m.sig[t]] = max(m.maxLeaf[m.sig[t]], w)
			}
		}
	}
	return nil
}

// leafWeight is the weight of a call to function fn (an index of the
// original module): a defined leaf's, else −1.
func (m *module) leafWeight(fn uint32) int64 {
	if fn < m.impFuncs || int(fn-m.impFuncs) >= len(m.leafW) {
		return -1
	}
	return m.leafW[fn-m.impFuncs]
}

// funcWriter rewrites one function body at a time (its buffers are
// reused).
type funcWriter struct {
	m          *module
	refill     uint32 // function index of the refill import
	fuelGlobal uint32 // index of the fuel global

	at      int     // offset of the instruction being read, for errors
	total   int64   // instructions of the module so far (MaxInstructions)
	weights []int64 // per scope in order of opening: the function, then each loop
	scopes  []int   // open meter scopes (indices into weights)
	blocks  []bool  // open blocks; true for a loop (its scope is on scopes)
	extra   []int   // per open block: labels the meter wrapped around it
	loopW   []int64 // weights of the open outlined loops
	out     []byte
	in      instr

	fuel, tmp uint32 // the new locals: the counter (i64) and a length (i32)
	// leading: the function's first instruction other than block openers
	// is a loop. Its header is then reached on every entry and charges the
	// function's own weight too (an upper bound still: the instructions
	// outside the loop run at most once per entry, the header at least
	// once), so the entry needs no check of its own. Go compiles every
	// function as such a loop (to resume goroutines).
	leading bool
}

// rewrite returns the instrumented body b of a function with params
// parameters.
func (f *funcWriter) rewrite(b []byte, params int, leaf bool) ([]byte, error) {
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
	if leaf {
		// No meter code: the callers charge it. Only function indices
		// move (ref.func).
		f.out = append(f.out[:0], b[:code]...)
		return f.out, f.copyLeaf(&reader{b: b, off: code})
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
	f.leading = false
	opening := true // only block openers so far
	in := &f.in
	for {
		f.at = r.off
		if err := r.decode(in); err != nil {
			return err
		}
		f.weights[f.scopes[len(f.scopes)-1]]++
		f.total++
		if opening && in.op == opLoop {
			f.leading = true
		}
		opening = opening && in.op == opBlock
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
			if w := f.m.leafWeight(in.idx); in.op == opCall && w >= 0 {
				f.weights[f.scopes[len(f.scopes)-1]] += w
			}
		case opCallIndirect:
			if t := f.m.typeOf(r.b[in.start+1 : in.end]); t >= 0 {
				f.weights[f.scopes[len(f.scopes)-1]] += f.m.maxLeaf[f.m.sig[t]]
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
	if f.leading {
		f.weights[1] += f.weights[0]
		f.reload()
	} else {
		f.entry(f.weights[0])
	}
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
				f.cget()
				f.i64(w)
				f.out = append(f.out, opI64Sub)
				f.ctee()
				f.out = append(f.out, opI64Const, 0, opI64LtS, opBrIf, 1)
				continue
			}
			f.extra = append(f.extra, 0)
			f.out = append(f.out, r.b[in.start:in.end]...)
			f.cget()
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
				f.cget()
				f.call(f.refill)
				f.i64(w)
				f.out = append(f.out, opI64Add)
				f.cset()
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
				// An import (WASI, kinfer_v1) keeps its index. The
				// counter goes through the global around it, so that
				// the host charges the work it does for the guest
				// (ABI.md §8: a WASI call moving bytes).
				f.flush()
				f.out = append(f.out, r.b[in.start:in.end]...)
				f.reload()
				continue
			}
			if f.m.leafWeight(in.idx) >= 0 {
				// A leaf has no meter code; it was charged with this scope.
				f.call(in.idx + 1)
				continue
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

// copyLeaf copies a leaf's instructions, renumbering ref.func.
func (f *funcWriter) copyLeaf(r *reader) error {
	in := &f.in
	for !r.done() {
		f.at = r.off
		if err := r.decode(in); err != nil {
			return err
		}
		if in.op == opRefFunc {
			f.out = append(f.out, opRefFunc)
			if in.idx >= f.m.impFuncs {
				in.idx++
			}
			f.out = appendULEB(f.out, uint64(in.idx))
			continue
		}
		f.out = append(f.out, r.b[in.start:in.end]...)
	}
	return nil
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
	f.ctee()
	f.out = append(f.out, opI64Const, 0, opI64LtS, opIf, 0x40)
	f.cget()
	f.call(f.refill)
	f.cset()
	f.out = append(f.out, opEnd)
}

// chargeBulk charges a bulk operation's length (the i32 on top of the
// stack) >> BulkShift and leaves the stack as it was. It does not check
// the counter: one operation is bounded by the memory's size, and the
// next function entry or loop header (every path to more work passes one)
// refills or stops the call, at the same place on every run. A check here
// would put a call in the loops that copy memory (Go's memmove), and a
// call in a loop costs its registers.
func (f *funcWriter) chargeBulk() {
	f.local(opLocalSet, f.tmp)
	f.cget()
	f.local(opLocalGet, f.tmp)
	f.out = append(f.out, opI64ExtendU, opI64Const, BulkShift, opI64ShrU, opI64Sub)
	f.cset()
	f.local(opLocalGet, f.tmp)
}

// cget, cset and ctee read, write and write-keep the counter.
func (f *funcWriter) cget() { f.local(opLocalGet, f.fuel) }
func (f *funcWriter) cset() { f.local(opLocalSet, f.fuel) }
func (f *funcWriter) ctee() { f.local(opLocalTee, f.fuel) }

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
