//go:build !linux

package run

// physicalMemory is unknown off Linux: DefaultMemoryBudget falls back.
func physicalMemory() int64 { return 0 }
