package wasm

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// TestMemoryGrowthAllocatesAtMostTwice: a guest growing its memory one
// page at a time up to memory_mib makes the host allocate at most about
// twice memory_mib in all (the final buffer and the old ones, doubling),
// not the ≈ 5× of wazero's own append growth (audit 4, hostile #1: a
// peak of 4.2 × memory_mib per instance). Bound: 2 × memory_mib, for the
// final buffer, the halves before it and the test's own allocations.
func TestMemoryGrowthAllocatesAtMostTwice(t *testing.T) {
	const mib = 48 // not a power of two (a maximum of 300 MiB held 3.1×)
	r := newRT(t, nil)
	p := load(t, r, testManifest("mem", "model.wasm", abi.KindModel, mib, 0))
	m, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, 2)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	grown := 0
	// a = 444 grows memory by b pages: y = previous size, or −1 on failure.
	for m.Eval([]float64{444, 1}, []float64{1}, y) == abi.OK {
		grown++
	}
	runtime.ReadMemStats(&after)
	if grown < mib*16-8 {
		t.Fatalf("grew %d pages, want about %d", grown, mib*16)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d pages grown one at a time: %.1f MiB allocated (%.2f × memory_mib)", grown, float64(alloc)/(1<<20), float64(alloc)/(mib<<20))
	if alloc > 2*mib<<20 {
		t.Errorf("%d MiB allocated while growing to %d MiB, want at most 2×", alloc>>20, mib)
	}
}

// A guest's out-of-memory message is followed by the limit it ran into and
// where to raise it (audit 4: a Go guest's "fatal error: out of memory"
// and a C method's "out of memory for 1e+06 points" named neither).
func TestOutOfMemoryNamesTheLimit(t *testing.T) {
	in := &instance{p: &Plugin{Manifest: testManifest("m", "model.wasm", abi.KindModel, 64, 0)}}
	got := in.memoryHint(`trapped: wasm error: unreachable; its last output: "fatal error: out of memory"`)
	if !strings.Contains(got, "memory_mib = 64 MiB") || !strings.Contains(got, "m.toml [limits]") {
		t.Errorf("hint: %s", got)
	}
	if got := in.memoryHint("trapped: wasm error: unreachable"); strings.Contains(got, "memory_mib") {
		t.Errorf("a hint without an out-of-memory message: %s", got)
	}
}
