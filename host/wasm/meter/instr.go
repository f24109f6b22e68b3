package meter

import "fmt"

// Opcodes the rewriter acts on (WebAssembly Core Specification 2.0, 5.4).
const (
	opUnreachable  = 0x00
	opBlock        = 0x02
	opLoop         = 0x03
	opIf           = 0x04
	opElse         = 0x05
	opEnd          = 0x0b
	opBr           = 0x0c
	opBrIf         = 0x0d
	opBrTable      = 0x0e
	opReturn       = 0x0f
	opCall         = 0x10
	opCallIndirect = 0x11
	opLocalGet     = 0x20
	opLocalSet     = 0x21
	opLocalTee     = 0x22
	opGlobalGet    = 0x23
	opGlobalSet    = 0x24
	opI64Const     = 0x42
	opI64LtS       = 0x53
	opI64Add       = 0x7c
	opI64Sub       = 0x7d
	opI64ShrU      = 0x88
	opI64ExtendU   = 0xad
	opRefFunc      = 0xd2
	opPrefixFC     = 0xfc
	opPrefixFD     = 0xfd
)

// 0xFC sub-opcodes that move memory or table elements; the length is the
// operand on top of the stack.
const (
	fcMemoryInit = 8
	fcMemoryCopy = 10
	fcMemoryFill = 11
	fcTableInit  = 12
	fcTableCopy  = 14
	fcTableFill  = 17
)

// instr is one decoded instruction: its opcode, the byte range it spans
// and the immediates the rewriter needs.
type instr struct {
	op         byte
	sub        uint32 // the sub-opcode of a 0xFC or 0xFD prefix
	start, end int    // [start, end) in the body
	idx        uint32 // function, local or global index, or branch depth
	labels     []uint32
}

// bulk reports whether the instruction is a bulk memory or table operation
// whose cost is proportional to its length operand.
func (in *instr) bulk() bool {
	if in.op != opPrefixFC {
		return false
	}
	switch in.sub {
	case fcMemoryInit, fcMemoryCopy, fcMemoryFill, fcTableInit, fcTableCopy, fcTableFill:
		return true
	}
	return false
}

// blockType skips a block type: the empty type, a value type or a type
// index (s33).
func (r *reader) blockType() error {
	b, err := r.peek()
	if err != nil {
		return err
	}
	if b == 0x40 || isValType(b) {
		r.off++
		return nil
	}
	v, err := r.sleb(33)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("block type 0x%02x is not supported", b)
	}
	return nil
}

// memarg skips a memory argument: alignment (bit 6 set: a memory index
// follows, multi-memory) and offset.
func (r *reader) memarg() error {
	a, err := r.u32()
	if err != nil {
		return err
	}
	if a&0x40 != 0 {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	_, err = r.uleb(64)
	return err
}

// decode reads the instruction at r into in.
func (r *reader) decode(in *instr) error {
	in.start = r.off
	in.sub, in.idx = 0, 0
	in.labels = in.labels[:0]
	op, err := r.byte()
	if err != nil {
		return err
	}
	in.op = op
	err = r.immediates(in)
	in.end = r.off
	return err
}

func (r *reader) immediates(in *instr) error {
	var err error
	switch op := in.op; {
	case op == opUnreachable, op == 0x01, op == opElse, op == opEnd, op == opReturn,
		op == 0x1a, op == 0x1b, // drop, select
		op >= 0x45 && op <= 0xc4, // numeric instructions, sign extension
		op == 0xd1:               // ref.is_null
		return nil
	case op == opBlock, op == opLoop, op == opIf:
		return r.blockType()
	case op == opBr, op == opBrIf:
		in.idx, err = r.u32()
		return err
	case op == opBrTable:
		n, err := r.count(1)
		if err != nil {
			return err
		}
		for i := 0; i <= n; i++ { // n labels and the default
			l, err := r.u32()
			if err != nil {
				return err
			}
			in.labels = append(in.labels, l)
		}
		return nil
	case op == opCall, op == opRefFunc:
		in.idx, err = r.u32()
		return err
	case op == opCallIndirect:
		if _, err = r.u32(); err != nil { // type index
			return err
		}
		_, err = r.u32() // table index
		return err
	case op == 0x1c: // select t*
		n, err := r.count(1)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			t, err := r.byte()
			if err != nil {
				return err
			}
			if !isValType(t) {
				return fmt.Errorf("select with value type 0x%02x", t)
			}
		}
		return nil
	case op >= opLocalGet && op <= opGlobalSet:
		in.idx, err = r.u32()
		return err
	case op == 0x25, op == 0x26: // table.get, table.set
		_, err = r.u32()
		return err
	case op >= 0x28 && op <= 0x3e: // loads and stores
		return r.memarg()
	case op == 0x3f, op == 0x40: // memory.size, memory.grow
		_, err = r.u32()
		return err
	case op == 0x41: // i32.const
		_, err = r.sleb(32)
		return err
	case op == opI64Const:
		_, err = r.sleb(64)
		return err
	case op == 0x43: // f32.const
		return r.skip(4)
	case op == 0x44: // f64.const
		return r.skip(8)
	case op == 0xd0: // ref.null t
		t, err := r.byte()
		if err != nil {
			return err
		}
		if !isRefType(t) {
			return fmt.Errorf("ref.null of type 0x%02x", t)
		}
		return nil
	case op == opPrefixFC:
		if in.sub, err = r.u32(); err != nil {
			return err
		}
		return r.fcImmediates(in.sub)
	case op == opPrefixFD:
		if in.sub, err = r.u32(); err != nil {
			return err
		}
		return r.simdImmediates(in.sub)
	}
	return unsupported(in.op)
}

// unsupported names an opcode outside the feature set.
func unsupported(op byte) error {
	switch op {
	case 0x06, 0x07, 0x08, 0x09, 0x18, 0x19, 0x1f, 0x0a:
		return fmt.Errorf("opcode 0x%02x (exception handling) is not supported", op)
	case 0x12, 0x13, 0x14, 0x15:
		return fmt.Errorf("opcode 0x%02x (tail or typed calls) is not supported", op)
	case 0xfb:
		return fmt.Errorf("opcode 0x%02x (garbage collection) is not supported", op)
	case 0xfe:
		return fmt.Errorf("opcode 0x%02x (threads and atomics) is not supported", op)
	}
	return fmt.Errorf("unknown opcode 0x%02x", op)
}

func (r *reader) fcImmediates(sub uint32) error {
	var n int
	switch {
	case sub <= 7: // saturating truncations
		return nil
	case sub == fcMemoryInit, sub == fcTableInit, sub == fcMemoryCopy, sub == fcTableCopy:
		n = 2 // data/elem index and memory/table index, or two indices
	case sub == 9, sub == 13, sub == fcMemoryFill, sub == 15, sub == 16, sub == fcTableFill:
		n = 1 // data.drop, elem.drop, memory.fill, table.grow/size/fill
	default:
		return fmt.Errorf("opcode 0xfc %d is not supported", sub)
	}
	for i := 0; i < n; i++ {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// simdImmediates skips the immediates of a 0xFD (SIMD) instruction
// (WebAssembly 2.0, 5.4.8).
func (r *reader) simdImmediates(sub uint32) error {
	switch {
	case sub <= 11, sub == 92, sub == 93: // loads and stores, load32/64_zero
		return r.memarg()
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		return r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		return r.skip(1)
	case sub >= 84 && sub <= 91: // load/store lane
		if err := r.memarg(); err != nil {
			return err
		}
		return r.skip(1)
	case sub <= 255:
		return nil
	}
	return fmt.Errorf("opcode 0xfd %d is not supported", sub)
}
