package meter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// A small assembler for test modules (WebAssembly 2.0 binary format).

func vec(items ...[]byte) []byte {
	out := appendULEB(nil, uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func uleb(v uint64) []byte { return appendULEB(nil, v) }
func sleb(v int64) []byte  { return appendSLEB(nil, v) }
func str(s string) []byte  { return appendName(nil, s) }

func functype(params, results []byte) []byte {
	return cat([]byte{0x60}, uleb(uint64(len(params))), params, uleb(uint64(len(results))), results)
}

// body encodes a function body: local groups (count, type) and code
// (without the final end, which is added).
func body(locals [][2]uint64, code ...[]byte) []byte {
	var groups [][]byte
	for _, l := range locals {
		groups = append(groups, cat(uleb(l[0]), []byte{byte(l[1])}))
	}
	b := cat(vec(groups...), cat(code...), []byte{opEnd})
	return cat(uleb(uint64(len(b))), b)
}

func export(name string, kind byte, idx uint64) []byte {
	return cat(str(name), []byte{kind}, uleb(idx))
}

type modSpec struct {
	types    [][]byte
	imports  [][]byte
	funcs    []uint64 // type index per defined function
	tables   [][]byte
	memory   []byte
	globals  [][]byte
	exports  [][]byte
	elements [][]byte
	bodies   [][]byte
	custom   [][]byte
}

func (s modSpec) bytes() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	add := func(id byte, items [][]byte) {
		if len(items) > 0 {
			out = appendSection(out, id, vec(items...))
		}
	}
	add(secType, s.types)
	add(secImport, s.imports)
	var fs [][]byte
	for _, t := range s.funcs {
		fs = append(fs, uleb(t))
	}
	add(secFunction, fs)
	add(secTable, s.tables)
	if s.memory != nil {
		out = appendSection(out, secMemory, vec(s.memory))
	}
	add(secGlobal, s.globals)
	add(secExport, s.exports)
	add(secElement, s.elements)
	add(secCode, s.bodies)
	for _, c := range s.custom {
		out = appendSection(out, secCustom, c)
	}
	return out
}

// Instructions used by the tests.
func i32c(v int32) []byte             { return cat([]byte{0x41}, sleb(int64(v))) }
func lget(i uint64) []byte            { return cat([]byte{opLocalGet}, uleb(i)) }
func lset(i uint64) []byte            { return cat([]byte{opLocalSet}, uleb(i)) }
func call(i uint64) []byte            { return cat([]byte{opCall}, uleb(i)) }
func brIf(l uint64) []byte            { return cat([]byte{opBrIf}, uleb(l)) }
func op(b ...byte) []byte             { return b }
func loopEmpty(code ...[]byte) []byte { return cat([]byte{opLoop, 0x40}, cat(code...), []byte{opEnd}) }

const (
	i32Add = 0x6a
	i32Sub = 0x6b
	i32Eqz = 0x45
	i32LtS = 0x48
)

// meterHost is a refill import that counts what the guest used, with a
// budget and a chunk size.
type meterHost struct {
	budget, chunk, granted int64
	refills                int
	atTrap                 int64 // the fuel used when the budget trapped
}

var errBudget = errors.New("fuel budget exhausted")

func (h *meterHost) refill(_ context.Context, stack []uint64) {
	cur := int64(stack[0])
	used := h.granted - cur
	h.refills++
	if used >= h.budget {
		h.atTrap = used
		panic(errBudget)
	}
	next := min(h.chunk, h.budget-used)
	h.granted = used + next
	stack[0] = uint64(next)
}

// used is the fuel a finished call used, given the global's final value.
func (h *meterHost) used(g api.Global) int64 { return h.granted - int64(g.Get()) }

type rig struct {
	t   *testing.T
	rt  wazero.Runtime
	mod api.Module
	h   *meterHost
	g   api.MutableGlobal
}

// load instruments bin and instantiates it with a meter host and an
// "env" module offering add1 (i32) -> i32.
func load(t *testing.T, bin []byte, budget, chunk int64) *rig {
	t.Helper()
	ctx := context.Background()
	inst, err := Instrument(bin)
	if err != nil {
		t.Fatalf("Instrument: %v", err)
	}
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	h := &meterHost{budget: budget, chunk: chunk}
	if _, err := rt.NewHostModuleBuilder(ImportModule).NewFunctionBuilder().
		WithGoFunction(api.GoFunc(h.refill), []api.ValueType{api.ValueTypeI64}, []api.ValueType{api.ValueTypeI64}).
		Export(ImportName).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = uint64(uint32(s[0]) + 1) }),
			[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		Export("add1").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, inst)
	if err != nil {
		t.Fatalf("instantiate the instrumented module: %v", err)
	}
	g, ok := mod.ExportedGlobal(FuelExport).(api.MutableGlobal)
	if !ok {
		t.Fatalf("no mutable global %s", FuelExport)
	}
	return &rig{t: t, rt: rt, mod: mod, h: h, g: g}
}

// call runs an export with a fresh allowance and returns its results and
// the fuel used.
func (r *rig) call(name string, args ...uint64) ([]uint64, int64, error) {
	r.h.granted = min(r.h.chunk, r.h.budget)
	r.g.Set(uint64(r.h.granted))
	res, err := r.mod.ExportedFunction(name).Call(context.Background(), args...)
	return res, r.h.used(r.g), err
}

// plain runs an export of the original module, without the meter.
func plain(t *testing.T, bin []byte, name string, args ...uint64) []uint64 {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(_ context.Context, s []uint64) { s[0] = uint64(uint32(s[0]) + 1) }),
			[]api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		Export("add1").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, bin)
	if err != nil {
		t.Fatalf("instantiate the original module: %v", err)
	}
	res, err := mod.ExportedFunction(name).Call(ctx, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// countLoop: (n) -> n, counting up in a loop of n iterations.
//
//	local i
//	loop
//	  i = i + 1
//	  br_if 0 (i < n)
//	end
//	i
func countLoop() []byte {
	code := cat(loopEmpty(lget(1), i32c(1), op(i32Add), lset(1), lget(1), lget(0), op(i32LtS), brIf(0)), lget(1))
	return modSpec{
		types:   [][]byte{functype([]byte{tI32}, []byte{tI32})},
		funcs:   []uint64{0},
		exports: [][]byte{export("count", 0, 0)},
		bodies:  [][]byte{body([][2]uint64{{1, tI32}}, code)},
	}.bytes()
}

// The loop body has 9 instructions (8 + its end), the function outside the
// loop 4 (loop, local.get, end of function... counted below).
func TestLoopFuelIsExactAndDeterministic(t *testing.T) {
	bin := countLoop()
	r := load(t, bin, 1<<40, 1<<20)
	// Weights by construction: the loop's body is local.get, i32.const,
	// i32.add, local.set, local.get, local.get, i32.lt_s, br_if, end = 9;
	// the function outside it: loop, local.get, end = 3. The function
	// starts with the loop, so its header charges both on every iteration.
	const loopW, fnW = 9, 3
	for _, n := range []uint64{1, 10, 1000, 100000} {
		res, used, err := r.call("count", n)
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != n {
			t.Fatalf("count(%d) = %d", n, res[0])
		}
		if want := int64((fnW + loopW) * n); used != want {
			t.Errorf("count(%d) used %d fuel, want %d (analytic: (%d + %d)·n)", n, used, want, fnW, loopW)
		}
	}
	// The same count with a tiny chunk (many refills) uses the same fuel.
	r2 := load(t, bin, 1<<40, 7)
	_, used, err := r2.call("count", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64((fnW + loopW) * 1000); used != want || r2.h.refills < 1000 {
		t.Errorf("with chunk 7: used %d (want %d), %d refills", used, want, r2.h.refills)
	}
}

func TestBudgetStopsAnInfiniteLoop(t *testing.T) {
	bin := modSpec{
		types:   [][]byte{functype(nil, nil)},
		funcs:   []uint64{0},
		exports: [][]byte{export("spin", 0, 0)},
		bodies:  [][]byte{body(nil, loopEmpty(cat([]byte{opBr}, uleb(0))))},
	}.bytes()
	r := load(t, bin, 5_000_000, 1<<16)
	_, _, err := r.call("spin")
	if !errors.Is(err, errBudget) {
		t.Fatalf("spin: err = %v, want the budget error", err)
	}
	used := r.h.atTrap
	// The refill that traps sees the first charge past the budget; an
	// iteration charges 4 (the loop's br and end, and the function's loop
	// and end, charged with its leading loop).
	if used < 5_000_000 || used > 5_000_000+4 {
		t.Errorf("spin stopped after %d fuel, want the budget 5e6 (+ at most one charge)", used)
	}
}

// fib recurses twice per call without any loop: only the entry charge can
// stop it.
func TestBudgetStopsExponentialRecursion(t *testing.T) {
	// fib(n) = n < 2 ? n : fib(n-1) + fib(n-2)
	code := cat(lget(0), i32c(2), op(i32LtS), op(opIf, tI32), lget(0), op(opElse),
		lget(0), i32c(1), op(i32Sub), call(0), lget(0), i32c(2), op(i32Sub), call(0), op(i32Add), op(opEnd))
	bin := modSpec{
		types:   [][]byte{functype([]byte{tI32}, []byte{tI32})},
		funcs:   []uint64{0},
		exports: [][]byte{export("fib", 0, 0)},
		bodies:  [][]byte{body(nil, code)},
	}.bytes()
	if got := plain(t, bin, "fib", 20); got[0] != 6765 {
		t.Fatalf("original fib(20) = %d", got[0])
	}
	r := load(t, bin, 1<<40, 1<<20)
	res, used, err := r.call("fib", 20)
	if err != nil || res[0] != 6765 {
		t.Fatalf("instrumented fib(20) = %v, %v", res, err)
	}
	// fib(20) makes 21891 calls, each charging the whole body: local.get,
	// i32.const, i32.lt_s, if, local.get, else, local.get, i32.const,
	// i32.sub, call, local.get, i32.const, i32.sub, call, i32.add, end,
	// end = 17 instructions. The fuel is exact.
	if want := int64(21891 * 17); used != want {
		t.Errorf("fib(20) used %d, want %d", used, want)
	}
	r2 := load(t, bin, 1_000_000, 1<<16)
	if _, _, err := r2.call("fib", 40); !errors.Is(err, errBudget) {
		t.Fatalf("fib(40) with a budget of 1e6: err = %v, want the budget error", err)
	}
}

// A module with an import, calls between functions, a table with an
// element segment, call_indirect, ref.func and a start function: the
// instrumented module computes what the original does.
func TestRenumberingKeepsBehaviour(t *testing.T) {
	// Functions: 0 = env.add1 (import); 1 = twice(x) = add1(add1(x));
	// 2 = viaTable(x) = table[0](x) (call_indirect type 0) + table[1](x);
	// 3 = start, sets global 0 to 7; 4 = getg() = global 0 + ref.is_null(ref.func 1).
	t0 := functype([]byte{tI32}, []byte{tI32})
	t1 := functype(nil, nil)
	t2 := functype(nil, []byte{tI32})
	twice := body(nil, lget(0), call(0), call(0))
	viaTable := body(nil, lget(0), i32c(0), op(opCallIndirect, 0, 0), lget(0), i32c(1), op(opCallIndirect, 0, 0), op(i32Add))
	start := body(nil, i32c(7), op(opGlobalSet, 0))
	getg := body(nil, op(opGlobalGet, 0), op(opRefFunc, 1), op(0xd1), op(i32Add))
	bin := modSpec{
		types:    [][]byte{t0, t1, t2},
		imports:  [][]byte{cat(str("env"), str("add1"), []byte{0}, uleb(0))},
		funcs:    []uint64{0, 0, 1, 2},
		tables:   [][]byte{{tFuncref, 0, 2}},
		globals:  [][]byte{{tI32, 1, 0x41, 0, opEnd}},
		exports:  [][]byte{export("twice", 0, 1), export("via", 0, 2), export("getg", 0, 4)},
		elements: [][]byte{cat(uleb(0), i32c(0), []byte{opEnd}, vec(uleb(1), uleb(0)))},
		bodies:   [][]byte{twice, viaTable, start, getg},
	}
	// The start section goes between export and element.
	b := spliceStart(bin.bytes(), 3)
	r := load(t, b, 1<<40, 1<<20)
	for _, c := range []struct {
		name string
		arg  []uint64
	}{{"twice", []uint64{5}}, {"via", []uint64{5}}, {"getg", nil}} {
		want := plain(t, b, c.name, c.arg...)
		got, _, err := r.call(c.name, c.arg...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s%v: instrumented %v, original %v", c.name, c.arg, got, want)
		}
	}
	// Twice: 7; via: twice(5) + add1(5) = 7 + 6 = 13; getg: 7 + 0 = 7.
	if got, _, _ := r.call("via", 5); got[0] != 13 {
		t.Errorf("via(5) = %d, want 13", got[0])
	}
}

// spliceStart inserts a start section naming function f before the
// element section.
func spliceStart(bin []byte, f uint64) []byte {
	r := &reader{b: bin, off: 8}
	for !r.done() {
		at := r.off
		id, _ := r.byte()
		size, _ := r.u32()
		r.off += int(size)
		if id == secElement {
			out := append([]byte(nil), bin[:at]...)
			out = appendSection(out, secStart, uleb(f))
			return append(out, bin[at:]...)
		}
	}
	panic("no element section")
}

func TestBulkMemoryIsCharged(t *testing.T) {
	// fill(n): memory.fill(0, 0, n)
	code := cat(i32c(0), i32c(0), lget(0), op(opPrefixFC), uleb(fcMemoryFill), op(0))
	bin := modSpec{
		types:   [][]byte{functype([]byte{tI32}, nil)},
		funcs:   []uint64{0},
		memory:  []byte{0, 32},
		exports: [][]byte{export("fill", 0, 0)},
		bodies:  [][]byte{body(nil, code)},
	}.bytes()
	r := load(t, bin, 1<<40, 1<<20)
	_, small, err := r.call("fill", 64)
	if err != nil {
		t.Fatal(err)
	}
	_, big, err := r.call("fill", 1<<21)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1<<21>>BulkShift) - 1; big-small != want {
		t.Errorf("filling 2 MiB cost %d more than 64 bytes, want %d", big-small, want)
	}
}

// Indices that do not exist in the original module would reach the
// meter's own local, global or import after the rewrite: refused.
func TestOutOfRangeIndicesRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want string
	}{
		{"local", cat(lget(0), op(0x1a)), "local index 0"},
		{"global", cat(op(opGlobalGet, 0), op(0x1a)), "global index 0"},
		{"global.set", cat(i32c(0), op(opGlobalSet, 0)), "global index 0"},
		{"call", call(1), "function index 1"},
		{"ref.func", cat(op(opRefFunc, 1), op(0x1a)), "function index 1"},
	} {
		bin := modSpec{
			types:  [][]byte{functype(nil, nil)},
			funcs:  []uint64{0},
			bodies: [][]byte{body(nil, c.code)},
		}.bytes()
		_, err := Instrument(bin)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestHostileShapesRefused(t *testing.T) {
	ft := functype(nil, nil)
	for _, c := range []struct {
		name string
		bin  []byte
		want string
	}{
		{"billions of locals", modSpec{types: [][]byte{ft}, funcs: []uint64{0},
			bodies: [][]byte{body([][2]uint64{{4_000_000_000, tI64}})}}.bytes(), "locals"},
		{"huge table minimum", modSpec{types: [][]byte{ft}, tables: [][]byte{cat([]byte{tFuncref, 0}, uleb(1<<30))}}.bytes(), "minimum size"},
		{"tail call", modSpec{types: [][]byte{ft}, funcs: []uint64{0},
			bodies: [][]byte{body(nil, op(0x12, 0))}}.bytes(), "tail"},
		{"atomics", modSpec{types: [][]byte{ft}, funcs: []uint64{0},
			bodies: [][]byte{body(nil, op(0xfe, 3, 0))}}.bytes(), "threads"},
		{"reserved import", modSpec{types: [][]byte{ft},
			imports: [][]byte{cat(str(ImportModule), str("x"), []byte{0}, uleb(0))}}.bytes(), "reserved"},
		{"reserved export", modSpec{types: [][]byte{ft}, funcs: []uint64{0}, bodies: [][]byte{body(nil)},
			exports: [][]byte{export(FuelExport, 0, 0)}}.bytes(), "reserved"},
		{"lying vector", append([]byte("\x00asm\x01\x00\x00\x00"), secType, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), "vector"},
		{"truncated body", modSpec{types: [][]byte{ft}, funcs: []uint64{0},
			bodies: [][]byte{{3, 0, opLoop, 0x40}}}.bytes(), "unexpected end"},
	} {
		_, err := Instrument(c.bin)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// An unbounded table maximum is clamped: growing past MaxTableSize fails
// inside the guest (−1) instead of allocating in the host.
func TestTableGrowthIsBounded(t *testing.T) {
	// grow(n) = table.grow(ref.null func, n)
	code := cat(op(0xd0, tFuncref), lget(0), op(opPrefixFC), uleb(15), op(0))
	bin := modSpec{
		types:   [][]byte{functype([]byte{tI32}, []byte{tI32})},
		funcs:   []uint64{0},
		tables:  [][]byte{{tFuncref, 0, 0}},
		exports: [][]byte{export("grow", 0, 0)},
		bodies:  [][]byte{body(nil, code)},
	}.bytes()
	r := load(t, bin, 1<<40, 1<<20)
	res, _, err := r.call("grow", 1<<31)
	if err != nil {
		t.Fatal(err)
	}
	if int32(res[0]) != -1 {
		t.Errorf("table.grow(2^31) = %d, want -1", int32(res[0]))
	}
	res, _, err = r.call("grow", 10)
	if err != nil || res[0] != 0 {
		t.Errorf("table.grow(10) = %v, %v; want 0 (the old size)", res, err)
	}
}

// Nested loops with branches that leave them (br, br_if, br_table across
// outlined loops), a loop with a result, and a loop with a parameter
// (charged in place): the instrumented function computes what the
// original does, and uses the same fuel whatever the refill chunk.
func TestNestedLoopsAndBranches(t *testing.T) {
	const typeParam = 1 // type 1: (i32) -> i32, used as a loop block type
	// f(n): acc = 0; for i in 0..n { for j in 0..n { if j == 3 break outer-block;
	//   acc += j } ; acc += i } via nested blocks; then a loop with result i32
	// and a loop with an i32 parameter.
	i32Eq, i32Ge := byte(0x46), byte(0x4e)
	code := cat(
		// block $out
		op(opBlock, 0x40),
		//   loop $i (local 1 = i)
		op(opLoop, 0x40),
		//     block $skip
		op(opBlock, 0x40),
		//       loop $j (local 2 = j)
		op(opLoop, 0x40),
		//         if j == 5 and i == 7: br $out (depth 3) — leaves two loops
		lget(2), i32c(5), op(i32Eq), lget(1), i32c(7), op(i32Eq), op(0x71), brIf(3),
		//         block $cont; br_table [$cont] default $skip (on j == 3); end
		op(opBlock, 0x40), lget(2), i32c(3), op(i32Eq), op(opBrTable), uleb(1), uleb(0), uleb(2), op(opEnd),
		//         acc += j; j++; br_if $j (j < n)
		lget(3), lget(2), op(i32Add), lset(3),
		lget(2), i32c(1), op(i32Add), lset(2),
		lget(2), lget(0), op(i32LtS), brIf(0),
		op(opEnd), // $j
		op(opEnd), // $skip
		//     acc += i; j = 0; i++; br_if $i (i < n)
		lget(3), lget(1), op(i32Add), lset(3),
		i32c(0), lset(2),
		lget(1), i32c(1), op(i32Add), lset(1),
		lget(1), lget(0), op(i32LtS), brIf(0),
		op(opEnd), // $i
		op(opEnd), // $out
		// acc += loop (result i32) { k++; br_if 0 (k < 4); k }
		lget(3),
		op(opLoop, tI32),
		lget(4), i32c(1), op(i32Add), lset(4),
		lget(4), i32c(4), op(i32LtS), brIf(0),
		lget(4),
		op(opEnd),
		op(i32Add), lset(3),
		// acc = loop (param i32) (result i32) { 1 + ; if acc >= 100 exit else br 0 with acc+1 }
		lget(3),
		op(opLoop, typeParam),
		i32c(1), op(i32Add), lset(3), lget(3), lget(3), i32c(100), op(i32Ge), op(i32Eqz), brIf(0),
		op(opEnd),
	)
	bin := modSpec{
		types:   [][]byte{functype([]byte{tI32}, []byte{tI32}), functype([]byte{tI32}, []byte{tI32})},
		funcs:   []uint64{0},
		exports: [][]byte{export("f", 0, 0)},
		bodies:  [][]byte{body([][2]uint64{{4, tI32}}, code)},
	}.bytes()
	plain(t, bin, "f", 0) // the original is valid
	big := load(t, bin, 1<<40, 1<<20)
	small := load(t, bin, 1<<40, 5)
	for _, n := range []uint64{0, 1, 4, 6, 9, 20} {
		want := plain(t, bin, "f", n)
		got, used, err := big.call("f", n)
		if err != nil || got[0] != want[0] {
			t.Fatalf("f(%d) = %v, %v; original %v", n, got, err, want)
		}
		got2, used2, err := small.call("f", n)
		if err != nil || got2[0] != want[0] || used2 != used {
			t.Errorf("f(%d) with chunk 5: %v (fuel %d), %v; with chunk 2^20: %v (fuel %d)", n, got2, used2, err, got, used)
		}
	}
}

// A leaf (no loop, no call) carries no meter code: its caller charges its
// instructions at the call, directly or through call_indirect (the largest
// leaf of the type).
func TestLeavesChargedByCallers(t *testing.T) {
	// 0: leaf add3(x) = x + 3 (local.get, i32.const, i32.add, end = 4)
	// 1: leaf dbl(x) = x + x (local.get, local.get, i32.add, end = 4) … and
	//    a bigger leaf of the same type, 2: sq5(x) = x*x+5 (6 instructions)
	// 3: f(x) = add3(x) + call_indirect[1](x)  (not a leaf: it calls)
	i32Mul := byte(0x6c)
	add3 := body(nil, lget(0), i32c(3), op(i32Add))
	dbl := body(nil, lget(0), lget(0), op(i32Add))
	sq5 := body(nil, lget(0), lget(0), op(i32Mul), i32c(5), op(i32Add))
	f := body(nil, lget(0), call(0), lget(0), i32c(1), op(opCallIndirect, 0, 0), op(i32Add))
	bin := modSpec{
		types:    [][]byte{functype([]byte{tI32}, []byte{tI32})},
		funcs:    []uint64{0, 0, 0, 0},
		tables:   [][]byte{{tFuncref, 0, 3}},
		exports:  [][]byte{export("f", 0, 3)},
		elements: [][]byte{cat(uleb(0), i32c(0), []byte{opEnd}, vec(uleb(0), uleb(1), uleb(2)))},
		bodies:   [][]byte{add3, dbl, sq5, f},
	}.bytes()
	r := load(t, bin, 1<<40, 1<<20)
	res, used, err := r.call("f", 10)
	if err != nil || res[0] != 33 { // add3(10) + dbl(10) = 13 + 20
		t.Fatalf("f(10) = %v, %v", res, err)
	}
	// f's own instructions: local.get, call, local.get, i32.const,
	// call_indirect, i32.add, end = 7; add3 at its call: 4; the
	// call_indirect: the largest leaf of the type, sq5: 6.
	if want := int64(7 + 4 + 6); used != want {
		t.Errorf("f used %d fuel, want %d", used, want)
	}
}

// A module of more than MaxInstructions instructions is refused before
// compiling, naming the function where the count ran over (audit 5: 12.5
// MB of one-byte instructions, under the code-size bound, took gigabytes
// to compile).
func TestMaxInstructions(t *testing.T) {
	// One function: i32.const 0, then i32.eqz MaxInstructions times,
	// drop, end.
	body := append([]byte{0, 0x41, 0}, bytes.Repeat([]byte{0x45}, MaxInstructions)...)
	body = append(body, 0x1a, 0x0b)
	mod := []byte("\x00asm\x01\x00\x00\x00")
	mod = appendSection(mod, 1, []byte{1, 0x60, 0, 0})
	mod = appendSection(mod, 3, []byte{1, 0})
	mod = appendSection(mod, 10, append(appendULEB(appendULEB(nil, 1), uint64(len(body))), body...))
	_, err := Instrument(mod)
	var e *Error
	if !errors.As(err, &e) || e.Func != 0 || !strings.Contains(err.Error(), fmt.Sprintf("more than %d instructions", MaxInstructions)) {
		t.Fatalf("Instrument: %v", err)
	}
}
