package run

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDefaultMemoryBudget caps the default memory budget.
const MaxDefaultMemoryBudget int64 = 16 << 30

// DefaultMemoryBudget is the memory budget of a run when Options gives
// none: half the machine's physical memory, at most 16 GiB (4 GiB where
// the physical memory cannot be read). Half leaves room for the host's
// own working memory, the plugins' sandboxes (each bounded by its
// memory_mib) and whatever else runs on the machine.
func DefaultMemoryBudget() int64 {
	ram := physicalMemory()
	if ram <= 0 {
		return 4 << 30
	}
	return min(ram/2, MaxDefaultMemoryBudget)
}

// ParseBytes reads a size such as 8GiB, 512MiB, 2G, 1.5e9 or 1048576
// (bytes). Units: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB; the decimal
// and binary forms alike mean powers of 1024, as memory is counted.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if mult == 0 || err != nil || !(v > 0) || v*mult >= 1<<62 {
		return 0, fmt.Errorf("%q is not a size (e.g. 8GiB, 512MiB, 1e9)", s)
	}
	return int64(v * mult), nil
}

// FormatBytes writes n in the largest binary unit that keeps it ≥ 1.
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.3g %s", v, units[u])
}
