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
