package meter

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Names and limits of the instrumentation.
const (
	// ImportModule and ImportName name the refill import, of type
	// (i64) -> i64: it receives the counter (≤ 0) and returns the next
	// allowance, or traps.
	ImportModule = "kinfer_meter"
	ImportName   = "refill"
	// FuelExport is the exported mutable i64 global that carries the
	// counter into and out of a call.
	FuelExport = "kinfer_meter_fuel"
	// MaxLocals bounds the locals (parameters included) of one function,
	// as browsers do: a module declaring billions of locals in a few bytes
	// would make a compiler allocate them.
	MaxLocals = 50000
	// MaxTableSize bounds every table's size (elements): its maximum is
	// clamped to it, so table.grow beyond it fails inside the guest instead
	// of allocating gigabytes in the host.
	MaxTableSize = 1 << 22
	// BulkShift: a bulk memory or table operation of n bytes or elements
	// charges n >> BulkShift units.
	BulkShift = 6
	// MaxInstructions bounds the instructions of a module: wazero's
	// optimising compiler takes up to about 340 bytes of host memory per
	// instruction (one-byte instructions; about 115 for a Go plugin's
	// code), so 3 million take at most about 1 GB. kinfer's Go plugins
	// have 1.0–1.2 million (audit 5: a 12.5 MB module of i32.eqz, under
	// the code-size bound, crashed the host compiling).
	MaxInstructions = 3_000_000
)

// Section ids (WebAssembly 2.0, 5.5.2).
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// order is the position of each known section id in a module.
var order = map[byte]int{secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secGlobal: 6, secExport: 7, secStart: 8, secElement: 9, secDataCount: 10, secCode: 11, secData: 12}

type section struct {
	id   byte
	body []byte
}

// module is what the rewriter learns from the sections before rewriting.
type module struct {
	sections []section
	params   []int    // number of parameters of each type
	sig      []string // each type's parameter and result bytes (a structural key)
	leafW    []int64  // per defined function: its weight if it is a leaf, else −1
	maxLeaf  map[string]int64
	funcType []uint32 // type index of each defined function
	impFuncs uint32   // imported functions
	impGlobs uint32   // imported globals
	defGlobs uint32   // defined globals
	nTypes   uint32
}

func (m *module) numFuncs() uint32   { return m.impFuncs + uint32(len(m.funcType)) }
func (m *module) numGlobals() uint32 { return m.impGlobs + m.defGlobs }

// Error is a module the rewriter refuses; Func is the defined function's
// index (−1 outside code) and Offset the byte offset in the module.
type Error struct {
	Section string
	Func    int
	Offset  int
	Err     error
}

func (e *Error) Error() string {
	if e.Func >= 0 {
		return fmt.Sprintf("%s section: function %d at byte %d: %v", e.Section, e.Func, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s section: %v", e.Section, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

var sectionNames = map[byte]string{secCustom: "custom", secType: "type", secImport: "import", secFunction: "function",
	secTable: "table", secMemory: "memory", secGlobal: "global", secExport: "export", secStart: "start",
	secElement: "element", secCode: "code", secData: "data", secDataCount: "data count"}

func secErr(id byte, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Section: sectionNames[id], Func: -1, Err: err}
}

// Instrument returns the metered form of the module binary bin (see the
// package documentation). It does not modify bin.
func Instrument(bin []byte) ([]byte, error) {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly binary (bad magic)")
	}
	if bin[4] != 1 || bin[5] != 0 || bin[6] != 0 || bin[7] != 0 {
		return nil, fmt.Errorf("not a core WebAssembly module (version bytes % x)", bin[4:8])
	}
	m := &module{}
	r := &reader{b: bin, off: 8}
	seen := map[byte]bool{}
	last := 0
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, err)
		}
		body, err := r.bytes(uint64(size))
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, err)
		}
		if id != secCustom {
			pos, known := order[id]
			if !known {
				return nil, fmt.Errorf("unknown section id %d", id)
			}
			if seen[id] || pos < last {
				return nil, fmt.Errorf("%s section out of order or repeated", sectionNames[id])
			}
			seen[id], last = true, pos
		}
		m.sections = append(m.sections, section{id, body})
	}
	for _, s := range m.sections {
		var err error
		switch s.id {
		case secType:
			err = m.readTypes(s.body)
		case secImport:
			err = m.readImports(s.body)
		case secFunction:
			err = m.readFunctions(s.body)
		case secGlobal:
			n, e := (&reader{b: s.body}).u32()
			m.defGlobs, err = n, e
		case secExport:
			err = checkExports(s.body)
		}
		if err = secErr(s.id, err); err != nil {
			return nil, err
		}
	}
	return m.write()
}

func (m *module) readTypes(b []byte) error {
	r := &reader{b: b}
	n, err := r.count(3)
	if err != nil {
		return err
	}
	m.params = make([]int, n)
	m.sig = make([]string, n)
	for i := range n {
		start := r.off
		form, err := r.byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("type %d: form 0x%02x is not a function type", i, form)
		}
		for k := 0; k < 2; k++ { // parameters, then results
			c, err := r.count(1)
			if err != nil {
				return err
			}
			for j := 0; j < c; j++ {
				t, err := r.byte()
				if err != nil {
					return err
				}
				if !isValType(t) {
					return fmt.Errorf("type %d: value type 0x%02x is not supported", i, t)
				}
			}
			if k == 0 {
				m.params[i] = c
			}
		}
		m.sig[i] = string(b[start:r.off])
	}
	m.nTypes = uint32(n)
	return nil
}

func (m *module) readImports(b []byte) error {
	r := &reader{b: b}
	n, err := r.count(4)
	if err != nil {
		return err
	}
	for range n {
		mod, err := r.name()
		if err != nil {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		if mod == ImportModule {
			return fmt.Errorf("the module imports %s.%s: %s is reserved for the host's meter", mod, name, ImportModule)
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0:
			if _, err = r.u32(); err != nil {
				return err
			}
			m.impFuncs++
		case 1:
			if _, err = r.byte(); err != nil {
				return err
			}
			if _, _, _, err = r.limits(); err != nil {
				return err
			}
		case 2:
			if _, _, _, err = r.limits(); err != nil {
				return err
			}
		case 3:
			if _, err = r.byte(); err != nil {
				return err
			}
			if _, err = r.byte(); err != nil {
				return err
			}
			m.impGlobs++
		default:
			return fmt.Errorf("import %s.%s has kind %d, not supported", mod, name, kind)
		}
	}
	return nil
}

func (m *module) readFunctions(b []byte) error {
	r := &reader{b: b}
	n, err := r.count(1)
	if err != nil {
		return err
	}
	m.funcType = make([]uint32, n)
	for i := range n {
		if m.funcType[i], err = r.u32(); err != nil {
			return err
		}
	}
	return nil
}

func checkExports(b []byte) error {
	r := &reader{b: b}
	n, err := r.count(3)
	if err != nil {
		return err
	}
	for range n {
		name, err := r.name()
		if err != nil {
			return err
		}
		if name == FuelExport {
			return fmt.Errorf("the module exports %q, a name reserved for the host's meter", name)
		}
		if _, err := r.byte(); err != nil {
			return err
		}
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// write emits the instrumented module.
func (m *module) write() ([]byte, error) {
	if uint32(len(m.funcType)) > math.MaxUint32-m.impFuncs-1 {
		return nil, errors.New("too many functions")
	}
	refillType := m.nTypes
	fuelGlobal := m.numGlobals()
	refill := m.impFuncs
	// Sections the module lacks but the meter needs are created.
	need := map[byte][]byte{
		secType:   appendFuncType(appendULEB(nil, 1)),
		secImport: appendRefillImport(appendULEB(nil, 1), refillType),
		secGlobal: appendFuelGlobal(appendULEB(nil, 1)),
		secExport: appendFuelExport(appendULEB(nil, 1), fuelGlobal),
	}
	out := append([]byte(nil), "\x00asm\x01\x00\x00\x00"...)
	emitMissing := func(before int) {
		for _, id := range []byte{secType, secImport, secGlobal, secExport} {
			if b, ok := need[id]; ok && order[id] < before {
				out = appendSection(out, id, b)
				delete(need, id)
			}
		}
	}
	for _, s := range m.sections {
		if s.id != secCustom {
			emitMissing(order[s.id])
		}
		body, err := m.rewriteSection(s, refillType, refill, fuelGlobal)
		if err = secErr(s.id, err); err != nil {
			return nil, err
		}
		delete(need, s.id)
		if body != nil {
			out = appendSection(out, s.id, body)
		}
	}
	emitMissing(math.MaxInt)
	return out, nil
}

func appendFuncType(b []byte) []byte { // (i64) -> (i64)
	return append(b, 0x60, 1, tI64, 1, tI64)
}

func appendRefillImport(b []byte, typ uint32) []byte {
	b = appendName(b, ImportModule)
	b = appendName(b, ImportName)
	b = append(b, 0)
	return appendULEB(b, uint64(typ))
}

func appendFuelGlobal(b []byte) []byte { // (mut i64) = i64.const 0
	return append(b, tI64, 1, opI64Const, 0, opEnd)
}

func appendFuelExport(b []byte, g uint32) []byte {
	b = appendName(b, FuelExport)
	b = append(b, 3)
	return appendULEB(b, uint64(g))
}

// appendToVector adds one pre-encoded element to a vector section body.
func appendToVector(body []byte, elem func([]byte) []byte) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if n == math.MaxUint32 {
		return nil, errors.New("vector too long")
	}
	out := appendULEB(nil, uint64(n)+1)
	out = append(out, body[r.off:]...)
	return elem(out), nil
}

// rewriteSection returns the new body of s (nil: drop the section).
func (m *module) rewriteSection(s section, refillType, refill, fuelGlobal uint32) ([]byte, error) {
	switch s.id {
	case secType:
		return appendToVector(s.body, appendFuncType)
	case secImport:
		return appendToVector(s.body, func(b []byte) []byte { return appendRefillImport(b, refillType) })
	case secGlobal:
		return m.rewriteGlobals(s.body)
	case secExport:
		return m.rewriteExports(s.body, fuelGlobal)
	case secStart:
		r := &reader{b: s.body}
		f, err := r.u32()
		if err != nil {
			return nil, err
		}
		f, err = m.renumber(f)
		if err != nil {
			return nil, err
		}
		return appendULEB(nil, uint64(f)), nil
	case secTable:
		return clampTables(s.body)
	case secElement:
		return m.rewriteElements(s.body)
	case secData:
		return s.body, m.checkData(s.body)
	case secCode:
		return m.rewriteCode(s.body, refill, fuelGlobal)
	case secCustom:
		r := &reader{b: s.body}
		name, err := r.name()
		if err != nil {
			return nil, nil // a malformed custom section is dropped
		}
		switch {
		case name == "name":
			return m.rewriteNames(s.body, r.off), nil
		case strings.HasPrefix(name, ".debug_"), name == "sourceMappingURL", name == "external_debug_info":
			return nil, nil // code offsets change: debug information would lie
		}
	}
	return s.body, nil
}

// renumber maps a function index of the original module to the
// instrumented one (the refill import takes index impFuncs).
func (m *module) renumber(f uint32) (uint32, error) {
	if f >= m.numFuncs() {
		return 0, fmt.Errorf("function index %d out of range (%d functions)", f, m.numFuncs())
	}
	if f >= m.impFuncs {
		return f + 1, nil
	}
	return f, nil
}

func (m *module) rewriteExports(body []byte, fuelGlobal uint32) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.count(3)
	if err != nil {
		return nil, err
	}
	out := appendULEB(nil, uint64(n)+1)
	for range n {
		name, err := r.name()
		if err != nil {
			return nil, err
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		idx, err := r.u32()
		if err != nil {
			return nil, err
		}
		if kind == 0 {
			if idx, err = m.renumber(idx); err != nil {
				return nil, fmt.Errorf("export %q: %w", name, err)
			}
		}
		if kind == 3 && idx >= m.numGlobals() {
			return nil, fmt.Errorf("export %q: global %d out of range", name, idx)
		}
		out = appendName(out, name)
		out = append(out, kind)
		out = appendULEB(out, uint64(idx))
	}
	return appendFuelExport(out, fuelGlobal), nil
}

func (m *module) rewriteGlobals(body []byte) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.count(3)
	if err != nil {
		return nil, err
	}
	out := appendULEB(nil, uint64(n)+1)
	for i := range n {
		t, err := r.byte()
		if err != nil {
			return nil, err
		}
		mut, err := r.byte()
		if err != nil {
			return nil, err
		}
		out = append(out, t, mut)
		// Initialisers may read only imported globals and globals defined
		// before this one: no reference can reach the meter's.
		if out, err = m.constExpr(r, out, m.impGlobs+uint32(i)); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
	}
	return appendFuelGlobal(out), nil
}

// constExpr copies a constant expression, renumbering ref.func and
// checking global.get against maxGlobal.
func (m *module) constExpr(r *reader, out []byte, maxGlobal uint32) ([]byte, error) {
	var in instr
	for {
		if err := r.decode(&in); err != nil {
			return nil, err
		}
		switch in.op {
		case opRefFunc:
			f, err := m.renumber(in.idx)
			if err != nil {
				return nil, err
			}
			out = append(out, opRefFunc)
			out = appendULEB(out, uint64(f))
			continue
		case opGlobalGet:
			if in.idx >= maxGlobal {
				return nil, fmt.Errorf("constant expression reads global %d (out of range)", in.idx)
			}
		}
		out = append(out, r.b[in.start:in.end]...)
		if in.op == opEnd {
			return out, nil
		}
	}
}

// clampTables gives every table a maximum of at most MaxTableSize and
// refuses a larger minimum.
func clampTables(body []byte) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.count(3)
	if err != nil {
		return nil, err
	}
	out := appendULEB(nil, uint64(n))
	for i := range n {
		t, err := r.byte()
		if err != nil {
			return nil, err
		}
		flags, min, max, err := r.limits()
		if err != nil {
			return nil, err
		}
		if flags&^1 != 0 {
			return nil, fmt.Errorf("table %d: limits flags 0x%02x not supported", i, flags)
		}
		if min > MaxTableSize {
			return nil, fmt.Errorf("table %d: minimum size %d exceeds the host's limit of %d elements", i, min, MaxTableSize)
		}
		if flags&1 == 0 || max > MaxTableSize {
			max = MaxTableSize
		}
		out = append(out, t, 1)
		out = appendULEB(out, min)
		out = appendULEB(out, max)
	}
	return out, nil
}

func (m *module) rewriteElements(body []byte) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.count(2)
	if err != nil {
		return nil, err
	}
	out := appendULEB(nil, uint64(n))
	for i := range n {
		flags, err := r.u32()
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, fmt.Errorf("element segment %d: flags %d", i, flags)
		}
		out = appendULEB(out, uint64(flags))
		if flags&3 == 2 { // explicit table index
			t, err := r.u32()
			if err != nil {
				return nil, err
			}
			out = appendULEB(out, uint64(t))
		}
		if flags&1 == 0 { // active: offset expression
			if out, err = m.constExpr(r, out, m.impGlobs); err != nil {
				return nil, fmt.Errorf("element segment %d: %w", i, err)
			}
		}
		if flags&3 != 0 { // elemkind or reftype
			k, err := r.byte()
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		c, err := r.count(1)
		if err != nil {
			return nil, err
		}
		out = appendULEB(out, uint64(c))
		for range c {
			if flags&4 != 0 { // expressions
				if out, err = m.constExpr(r, out, m.numGlobals()); err != nil {
					return nil, fmt.Errorf("element segment %d: %w", i, err)
				}
				continue
			}
			f, err := r.u32()
			if err != nil {
				return nil, err
			}
			if f, err = m.renumber(f); err != nil {
				return nil, fmt.Errorf("element segment %d: %w", i, err)
			}
			out = appendULEB(out, uint64(f))
		}
	}
	return out, nil
}

// checkData checks that the data segments' offset expressions read only
// imported globals (the meter's global did not exist for them).
func (m *module) checkData(body []byte) error {
	r := &reader{b: body}
	n, err := r.count(1)
	if err != nil {
		return err
	}
	for i := range n {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		switch flags {
		case 2:
			if _, err := r.u32(); err != nil { // memory index
				return err
			}
			fallthrough
		case 0:
			if _, err := m.constExpr(r, nil, m.impGlobs); err != nil {
				return fmt.Errorf("data segment %d: %w", i, err)
			}
		case 1:
		default:
			return fmt.Errorf("data segment %d: flags %d", i, flags)
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		if err := r.skip(int(size)); err != nil {
			return err
		}
	}
	return nil
}

// rewriteNames renumbers the function indices of the name section's
// function, local and label name maps (subsections 1, 2, 3) and keeps the
// other subsections. A malformed name section is dropped (it is only a
// debugging aid).
func (m *module) rewriteNames(body []byte, off int) []byte {
	out := appendName(nil, "name")
	r := &reader{b: body, off: off}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil
		}
		size, err := r.u32()
		if err != nil {
			return nil
		}
		sub, err := r.bytes(uint64(size))
		if err != nil {
			return nil
		}
		if id >= 1 && id <= 3 {
			if sub = m.renumberNameMap(sub, id != 1); sub == nil {
				return nil
			}
		}
		out = append(out, id)
		out = appendULEB(out, uint64(len(sub)))
		out = append(out, sub...)
	}
	return out
}

// renumberNameMap rewrites a name map (idx name)* keyed by function
// index, or an indirect one (idx namemap)* when indirect.
func (m *module) renumberNameMap(b []byte, indirect bool) []byte {
	r := &reader{b: b}
	n, err := r.count(2)
	if err != nil {
		return nil
	}
	out := appendULEB(nil, uint64(n))
	for range n {
		f, err := r.u32()
		if err != nil {
			return nil
		}
		if f, err = m.renumber(f); err != nil {
			return nil
		}
		out = appendULEB(out, uint64(f))
		start := r.off
		if indirect {
			k, err := r.count(2)
			if err != nil {
				return nil
			}
			for range k {
				if _, err := r.u32(); err != nil {
					return nil
				}
				if _, err := r.name(); err != nil {
					return nil
				}
			}
		} else if _, err := r.name(); err != nil {
			return nil
		}
		out = append(out, b[start:r.off]...)
	}
	return out
}

// typeOf is the type index of a call_indirect's immediates (type index,
// table index), or −1 when it is out of range (refused by validation).
func (m *module) typeOf(imm []byte) int {
	r := &reader{b: imm}
	t, err := r.u32()
	if err != nil || t >= m.nTypes {
		return -1
	}
	return int(t)
}
