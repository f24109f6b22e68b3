package wasm

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used (Linux
// RUSAGE_THREAD). Benchmarks that compare a builtin with a plugin report it
// beside wall time: on a shared machine the wall time of a single-threaded
// loop depends on what else runs, its thread's CPU time much less.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPer runs the benchmark loop body on one locked OS thread and reports
// its CPU time per unit (units per iteration) as the metric "cpu-"+unit.
func cpuPer(b *testing.B, units int, unit string, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	for b.Loop() {
		body()
	}
	cpu := threadCPU() - start
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*units), "cpu-"+unit)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*units), unit)
}
