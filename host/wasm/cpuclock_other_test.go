//go:build !linux

package wasm

import "testing"

// cpuPer reports wall time per unit only (thread CPU time is read on Linux).
func cpuPer(b *testing.B, units int, unit string, body func()) {
	for b.Loop() {
		body()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*units), unit)
}
