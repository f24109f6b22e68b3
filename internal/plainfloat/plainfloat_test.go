package plainfloat

import (
	"math"
	"testing"
)

// Decimal numbers, NaN and infinities parse as strconv.ParseFloat does;
// Go's underscores and hexadecimal floats, which strconv.ParseFloat
// accepts (audit 5: "2_9" read as 29, "0x1p3" as 8), are refused.
func TestParse(t *testing.T) {
	for s, want := range map[string]float64{"29": 29, "-1.5e3": -1500, "+0.25": 0.25, "1E-3": 1e-3, ".5": 0.5, "Inf": math.Inf(1), "-infinity": math.Inf(-1)} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if v, err := Parse("NaN"); err != nil || !math.IsNaN(v) {
		t.Errorf("Parse(NaN) = %v, %v", v, err)
	}
	for _, s := range []string{"2_9", "1_000", "0x1Dp0", "0x1p3", "-0X1p-2", "0x10", "1__0", "abc", ""} {
		if v, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, v)
		}
	}
}
