package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A report with a null nmae_percent (an output whose validation values
// are constant) reads back, the NMAE as NaN: kinfer combine reads the
// members' reports strictly (review of audit 10: it could not, and the
// combined report silently lost its training figures).
func TestReportWithNullNMAEReadsBack(t *testing.T) {
	rep := Report{Kind: "nn", TrainSeconds: 1.5, TrainingPoints: 7, Outputs: []OutputReport{{Name: "y", NMAE: math.NaN(), MAE: 0.5, AE90: 1}, {Name: "z", NMAE: 2.5}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.report.json")
	os.WriteFile(p, b, 0o644)
	got, err := readReport(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.TrainSeconds != 1.5 || got.TrainingPoints != 7 || !math.IsNaN(got.Outputs[0].NMAE) || got.Outputs[0].MAE != 0.5 || got.Outputs[1].NMAE != 2.5 {
		t.Errorf("read back %+v", got)
	}
}
