package nn

import (
	"fmt"
	"math"
	"sort"

	"github.com/kinfer/kinfer/builtin/stats"
)

// OutputMetrics are the validation errors of one output, the columns of
// Bartsoen et al. (2023) Table 3 (definitions in Sec. 2.3).
type OutputMetrics struct {
	// NMAE is the mean absolute error after the output is normalised to
	// [0, 1] by the range of its true validation values, in percent:
	// 100·MAE/(max y − min y).
	NMAE float64
	// MAE is the mean absolute error in the output's units.
	MAE float64
	// AE90 is the 90th percentile of the absolute errors ("90 % AE"),
	// linearly interpolated between order statistics at position
	// 0.9·(n − 1) (numpy's default percentile, Hyndman & Fan type 7).
	AE90 float64
}

// Metrics returns the errors of predictions pred against truth (both n ×
// m, row-major), per output. An output whose true values are constant gets
// NMAE = NaN.
func Metrics(pred, truth []float64, n, m int) ([]OutputMetrics, error) {
	if n < 1 || m < 1 || len(pred) != n*m || len(truth) != n*m {
		return nil, fmt.Errorf("nn: metrics of %d and %d values for %d rows × %d outputs", len(pred), len(truth), n, m)
	}
	res := make([]OutputMetrics, m)
	ae := make([]float64, n)
	for j := 0; j < m; j++ {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for i := 0; i < n; i++ {
			t := truth[i*m+j]
			lo, hi = math.Min(lo, t), math.Max(hi, t)
			ae[i] = math.Abs(pred[i*m+j] - t)
			sum += ae[i]
		}
		mae := sum / float64(n)
		res[j].MAE = mae
		if hi > lo {
			res[j].NMAE = 100 * mae / (hi - lo)
		} else {
			res[j].NMAE = math.NaN()
		}
		sort.Float64s(ae)
		res[j].AE90 = stats.QuantileSorted(ae, 0.9) // Hyndman & Fan type 7
	}
	return res, nil
}

// Validate predicts the validation inputs and returns the per-output
// metrics of Bartsoen et al. (2023) Table 3 against the validation outputs.
func (e *Ensemble) Validate(val *Data) ([]OutputMetrics, error) {
	if err := val.check("validation"); err != nil {
		return nil, err
	}
	if val.In != e.In() || val.Out != e.Out() {
		return nil, fmt.Errorf("nn: validation data is %d→%d, the ensemble %d→%d", val.In, val.Out, e.In(), e.Out())
	}
	p := e.Predict(nil, val.X, val.N, nil)
	return Metrics(p, val.Y, val.N, val.Out)
}
