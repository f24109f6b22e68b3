package run

import (
	"strings"
	"testing"
)

// A method report over MaxReportBytes is left out of summary.json with a
// warning (audit 9: a 258 MiB summary.json its own tools refused); one
// within it is kept as it is.
func TestBoundReport(t *testing.T) {
	small := map[string]any{"trace": make([]float64, 1000)}
	if got := boundReport(small); got.(map[string]any)["trace"] == nil {
		t.Errorf("a small report changed: %v", got)
	}
	big := map[string]any{"trace": make([]float64, MaxReportBytes/2)} // "0," per value: just over
	got, ok := boundReport(big).(map[string]any)
	if !ok || got["trace"] != nil || got["report_left_out_bytes"].(int) <= MaxReportBytes {
		t.Fatalf("a big report kept: %T", got)
	}
	ws := MethodWarnings(got)
	if len(ws) != 1 || !strings.Contains(ws[0], "more than the 16.0 MiB a report may have in summary.json: it is left out") {
		t.Errorf("warnings %q", ws)
	}
}
