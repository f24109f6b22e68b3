package lsq

import (
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// The memory check counts the QR factorisation's [J | r] copy: 10 million
// observations of 10 parameters need 8·10⁷·11 bytes ≈ 880 MB for it
// alone, so a budget of 500 MB is refused, though the per-start arrays
// (a few KB) fit.
func TestSetupBudgetsTheFactorisation(t *testing.T) {
	p := abi.Problem{MemoryBudget: 500 << 20, Observations: 10_000_000}
	for i := 0; i < 10; i++ {
		p.Params = append(p.Params, abi.Param{Name: string(rune('a' + i)), Lower: -1, Upper: 1})
	}
	if _, err := NewSetup("levmar", p, 1, 0); err == nil || !strings.Contains(err.Error(), "more than the memory budget") {
		t.Fatalf("10⁷ observations × 10 parameters in 500 MiB: %v", err)
	}
	p.Observations = 1000
	if _, err := NewSetup("levmar", p, 1, 0); err != nil {
		t.Fatalf("1000 observations: %v", err)
	}
}
