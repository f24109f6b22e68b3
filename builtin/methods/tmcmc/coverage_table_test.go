package tmcmc

import (
	"math"
	"os"
	"testing"

	"github.com/kinfer/kinfer/builtin/methods/conformance"
)

// TestCoverageTable prints, for the default settings, the paper's
// algorithm and the two biased variants, how often |log Ẑ − log Z| ≤ 4·SE
// over 20 seeds on the four problems with known evidence, with each SE
// estimate, the mean error and the mean SE (docs/PERFORMANCE.md, "TMCMC
// evidence"). About 30 s; run with
//
//	KINFER_COVERAGE_TABLE=1 go test ./builtin/methods/tmcmc -run CoverageTable -v
func TestCoverageTable(t *testing.T) {
	if os.Getenv("KINFER_COVERAGE_TABLE") == "" {
		t.Skip()
	}
	cases := []conformance.Case{conformance.Conjugate2D(), conformance.Gauss10D(), boundCase(), mixtureCase()}
	for _, cfg := range []struct{ v, p, a int }{{Bartsoen, Transform, AdaptSubstep}, {Bartsoen, Reject, AdaptStage}, {Betz, Reject, AdaptStage}, {Original, Reject, AdaptStage}} {
		for _, c := range cases {
			runs := runSeeds(20, func(seed uint64) caseRun {
				rep, _, err := conformance.Run(mustNewPA(1000, 20, cfg.v, cfg.p, cfg.a), c.Target, seed)
				return caseRun{rep, err}
			})
			cov, covStage, covLin, bias, se := 0, 0, 0, 0.0, 0.0
			for _, r := range runs {
				x := r.rep.Extra
				e := math.Abs(x["log_evidence"].(float64) - c.LogZ)
				if e <= 4*x["log_evidence_se"].(float64) {
					cov++
				}
				if e <= 4*x["log_evidence_se_stagewise"].(float64) {
					covStage++
				}
				if e <= 4*x["log_evidence_se_lineage"].(float64) {
					covLin++
				}
				bias += (x["log_evidence"].(float64) - c.LogZ) / 20
				se += x["log_evidence_se"].(float64) / 20
			}
			t.Logf("%s/%s/%s %-12s covered %2d/20 (stagewise %2d, lineage %2d); mean error %+.3f, mean SE %.3f", VariantNames[cfg.v], ProposalNames[cfg.p], AdaptNames[cfg.a], c.Name, cov, covStage, covLin, bias, se)
		}
	}
}
