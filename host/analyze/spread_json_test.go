package analyze

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/run"
)

// A relative spread that is not a number (a prior range of 0: a normal
// prior so narrow that its central 90 % rounds to one value) is written as
// null; it once failed analysis.json with "unsupported value: NaN".
func TestSpreadRelativeNaNWritesNull(t *testing.T) {
	b, err := json.Marshal(Analysis{Params: []Spread{{Name: "k", Relative: run.F(math.NaN())}}})
	if err != nil || !strings.Contains(string(b), `"relative":null`) {
		t.Fatalf("%s %v", b, err)
	}
}

// A spread p95 − p05 that overflows (samples at ∓1.7e308) is written as
// null too, not a failed analysis.json ("unsupported value: +Inf").
func TestSpreadOverflowWritesNull(t *testing.T) {
	b, err := json.Marshal(Analysis{Params: []Spread{{Name: "k", P05: -1.7e308, P95: 1.7e308, Spread: run.F(math.Inf(1)), PriorRange: run.F(math.Inf(1))}}})
	if err != nil || !strings.Contains(string(b), `"spread":null`) || !strings.Contains(string(b), `"prior_range":null`) {
		t.Fatalf("%s %v", b, err)
	}
}
