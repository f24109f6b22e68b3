package wasm

import (
	"github.com/tetratelabs/wazero/experimental"
)

// doublingMemory backs a guest's linear memory with a Go byte slice whose
// capacity at least doubles when the guest grows past it (up to the
// memory's maximum, memory_mib). wazero's own growth appends the new pages,
// which for a large slice raises the capacity by about 1.25× each time:
// a guest growing page by page to its limit left ≈ 4× the limit of old
// buffers for the collector, and the host's peak was ≈ 4.2 × memory_mib
// per instance (audit 4, hostile #1). With doubling the old buffers sum to
// at most the final one, so an instance holds at most ≈ 2 × memory_mib,
// the bound README.md and the memory budget state. The memory stays Go
// memory (garbage-collected, never unmapped under a slice the host still
// holds).
type doublingMemory struct {
	buf []byte
	max uint64
}

// memoryAllocator creates a doublingMemory for every instance.
var memoryAllocator = experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
	return &doublingMemory{buf: make([]byte, 0, min(capacity, max)), max: max}
})

// Reallocate implements experimental.LinearMemory: the memory grown to size
// bytes (new bytes zero), or nil beyond the maximum.
func (m *doublingMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		// Bytes past the old length were never written (a memory does
		// not shrink) and are zero since make.
		m.buf = m.buf[:size]
		return m.buf
	}
	c := max(size, min(2*uint64(cap(m.buf)), m.max))
	if c > m.max/2 {
		// The next doubling would pass the maximum's half: take the
		// maximum now, so that the old buffers stay below it (a
		// maximum of 300 MiB grew 256 → 300 and held 3.1×: audit 4).
		c = m.max
	}
	nb := make([]byte, size, c)
	copy(nb, m.buf)
	m.buf = nb
	return nb
}

// Free implements experimental.LinearMemory; the collector frees the slice.
func (m *doublingMemory) Free() { m.buf = nil }
