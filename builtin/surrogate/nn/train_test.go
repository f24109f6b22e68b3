package nn

import (
	"math"
	"strings"
	"testing"
)

// A constant input is normalised by 1 around its value, decided on the
// values: three 0.05s have a computed mean of 0.05000000000000002 and an
// sd of 2.8e-17, which made any other value 1e15 standard deviations away
// (audit 15). A varying column keeps its mean and population sd.
func TestMeanSDConstantColumn(t *testing.T) {
	x := []float64{0.05, 1, 0.05, 2, 0.05, 3}
	mean, sd := meanSD(x, 3, 2)
	if mean[0] != 0.05 || sd[0] != 1 {
		t.Errorf("constant column: mean %v sd %v, want 0.05 and 1", mean[0], sd[0])
	}
	if mean[1] != 2 || math.Abs(sd[1]-math.Sqrt(2.0/3)) > 1e-15 {
		t.Errorf("varying column: mean %v sd %v, want 2 and √(2/3)", mean[1], sd[1])
	}
}

// A loss history longer than a file keeps is thinned to every k-th epoch
// and the last, within MaxLossValues, and reads back (audit 15: 64
// histories of 2^20 values decoded to 512 MiB).
func TestLossHistoryThinned(t *testing.T) {
	for _, n := range []int{MaxLossValues, MaxLossValues + 1, 2*MaxLossValues - 1, 2 * MaxLossValues, 2*MaxLossValues + 1, 1_000_003, 1 << 22} {
		l := make(LossHistory, n)
		for i := range l {
			l[i] = float64(i)
		}
		got := thinLoss([]TrainInfo{{Epochs: n, Loss: l}})[0]
		if len(got.Loss) > MaxLossValues || got.Loss[len(got.Loss)-1] != float64(n-1) {
			t.Errorf("n = %d: %d values (every %d), last %v", n, len(got.Loss), got.LossEvery, got.Loss[len(got.Loss)-1])
		}
		if n <= MaxLossValues && (got.LossEvery != 0 || len(got.Loss) != n) {
			t.Errorf("n = %d thinned", n)
		}
		if n > MaxLossValues && got.Loss[0] != float64(got.LossEvery-1) {
			t.Errorf("n = %d: first kept %v, every %d", n, got.Loss[0], got.LossEvery)
		}
	}
	var h LossHistory
	if err := h.UnmarshalJSON([]byte("[" + strings.Repeat("0,", MaxLossValues) + "0]")); err == nil || !strings.Contains(err.Error(), "at most 65536") {
		t.Errorf("a history of 65537 values: %v", err)
	}
}
