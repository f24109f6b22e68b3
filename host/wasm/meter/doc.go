// Package meter instruments a WebAssembly module so that the host can bound
// the work of every call into it deterministically and stop it cheaply.
//
// Instrument rewrites a core WebAssembly 2.0 binary (the features wazero
// enables by default: multi-value, bulk memory, reference types, SIMD,
// sign extension, non-trapping conversions) so that the module charges
// "fuel" as it runs:
//
//   - every function, on entry, charges the number of instructions of its
//     body that lie outside any loop; a function whose body begins with a
//     loop (as every function Go compiles does) charges them with that
//     loop instead;
//   - every loop, on each iteration (at its header), charges the number of
//     instructions of its body that lie outside nested loops;
//   - a leaf function (no loop, no call, no bulk operation) carries no
//     meter code: its callers charge its instruction count with their own,
//     and a call_indirect charges the largest count of the leaves of its
//     type;
//   - memory.fill, memory.copy, memory.init, table.fill, table.copy and
//     table.init charge one unit per 64 bytes or elements they move.
//
// Every instruction the guest executes therefore belongs to a charge made
// before it runs (a leaf exported to and called by the host directly is
// the one exception; its work is bounded by its size), so the fuel a call
// uses is an upper bound of the instructions it executes, plus the bulk
// work, the same on every machine and under any load. Loops, calls and
// bulk operations are the only ways a wasm function can run for long, and
// all three are charged.
//
// The counter lives in a new local of every metered function and moves
// through a new exported mutable i64 global (FuelExport) across calls
// between the module's functions. When it drops below zero at a function
// entry or loop header, the function calls a new import,
// ImportModule.ImportName of type (i64) -> i64, with the (negative)
// counter; the host either returns a new allowance or traps the call
// (budget exhausted, wall-clock backstop, run interrupted). A bulk
// operation only subtracts; the next entry or loop header checks. With an
// allowance of about a million units the guest leaves compiled code about
// once per millisecond, which is also when the host checks its clock and
// cancellation, and which lets Go's garbage collector stop the world.
//
// The refill call of a loop is placed after the loop, reached by a branch
// when the counter runs out and branching back to the header, so that no
// loop contains a call: wazero's register allocator spills the values
// live across a call in a loop's hot path, which cost 20–30 % on small
// kernels (BenchmarkMeter in host/wasm); outlined, a loop iteration costs
// one subtraction and one compare-and-branch in registers.
//
// Before each call the host sets the global to the call's first allowance;
// after it the global holds what is left. A call to an import (a host
// function) also goes through the global: the counter is stored before it
// and reloaded after it, so that the host can charge the work it does for
// the guest (host/wasm charges WASI and kinfer_v1 calls by the bytes they
// move).
//
// The new import becomes function index n (n = number of imported
// functions), so every reference to a defined function (call, ref.func,
// exports, start, element segments, the name section) is renumbered by one.
// DWARF sections, whose code offsets would be wrong, are dropped.
//
// Instrument also refuses what would let a module escape the meter or
// exhaust the host before the meter runs: references to locals, globals or
// functions that do not exist in the original module (they could address
// the meter's own), more than MaxLocals locals in a function, a table that
// could grow beyond MaxTableSize elements (its maximum is clamped), and
// instructions outside the supported feature set (tail calls, exceptions,
// threads, GC), each with an error naming the function and the offset.
//
// The approach is that of gas metering in blockchain virtual machines and
// Wasmtime's "fuel", done here as a binary rewrite so that it works with an
// unmodified wazero. Sources: WebAssembly Core Specification 2.0 (binary
// format, sections 5.3–5.5), W3C, 2022.
package meter
