package analyze

import (
	"context"
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/analysis"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// Fit is the posterior-predictive fit of one output of one dataset.
type Fit struct {
	Dataset string  `json:"dataset"`
	Output  string  `json:"output"`
	Unit    string  `json:"unit,omitempty"`
	N       int     `json:"n"`    // observed values compared
	MAE     float64 `json:"mae"`  // mean |posterior-mean prediction − observation|
	RMSE    float64 `json:"rmse"` // root mean square of the same
	MaxAbs  float64 `json:"max_abs_error"`
}

// maxPredictiveValues bounds the model outputs Predictive holds at once.
var maxPredictiveValues = 25_000_000 // a variable for the test of its chunks

// Predictive evaluates the model at up to maxSamples of the samples
// (evenly spaced, deterministic) with the study's workers and compares the
// posterior-mean prediction with every observed output of every dataset.
// Samples whose evaluation fails are skipped; used counts the others.
// budget is the memory the analysis leaves it beside the study's data.
func Predictive(ctx context.Context, s *study.Study, samples [][]float64, maxSamples, workers int, budget int64) (fits []Fit, used int, err error) {
	// The outputs held at once: maxPredictiveValues, and within a sixth
	// of the memory budget at about 24 bytes a value (the value, its
	// copy into the result and the scratch; audit 11: --predictive
	// 1000000 passed a 196 MiB budget 2.3 times).
	maxValues := maxPredictiveValues
	if budget > 0 {
		maxValues = int(min(int64(maxValues), max(budget/6/24, 1)))
	}
	pick := samples
	if maxSamples > 0 && len(samples) > maxSamples {
		pick = make([][]float64, maxSamples)
		for i, r := range analysis.Thin(len(samples), maxSamples) {
			pick[i] = samples[r]
		}
	}
	spec := s.ModelInfo.Spec
	m := len(spec.Outputs)
	tg := target.New(s, workers)
	for _, ds := range s.Data {
		mean := make([]float64, ds.K*m)
		n := 0 // this dataset's samples evaluated
		// Only the mean is kept: the samples are evaluated in chunks of at
		// most maxPredictiveValues outputs (1000 samples of a 500 000-row
		// dataset held at once exhausted memory; audit 4), summed in the
		// same order, so the mean has the same bits.
		// One sample's outputs on this dataset must fit in that share
		// itself (audit 13: a 5.3-million-row dataset under 64 MiB).
		if budget > 0 && int64(ds.K)*int64(m)*24 > budget/6 {
			return nil, 0, fmt.Errorf("analyze: the posterior-predictive fit holds one sample's outputs on dataset %s (%d rows × %d outputs, about %s), more than the sixth it may take of the %s the memory budget leaves beside the study's data: raise --memory-budget", ds.Name, ds.K, m, run.FormatBytes(int64(ds.K)*int64(m)*24), run.FormatBytes(budget))
		}
		obsCols := map[string][]float64{}
		for _, term := range s.Terms {
			if term.Data != ds {
				continue
			}
			for j, o := range term.Outputs {
				col := make([]float64, ds.K)
				for r := range col {
					col[r] = term.Obs[r*len(term.Outputs)+j]
				}
				obsCols[o] = col
			}
		}
		if len(obsCols) == 0 {
			// No observation to compare with (a propagation's
			// [conditions]): not evaluated (docs 24: 1000 evaluations of
			// the wear model, 75 s, thrown away).
			continue
		}
		chunk := max(1, maxValues/max(1, ds.K*m))
		for lo := 0; lo < len(pick); lo += chunk {
			ys, sts, err := tg.Outputs(ctx, pick[lo:min(lo+chunk, len(pick))], ds)
			if err != nil {
				return nil, 0, err
			}
			for i, y := range ys {
				if sts[i] != abi.OK {
					continue
				}
				n++
				for j, v := range y {
					mean[j] += v
				}
			}
		}
		if n == 0 {
			continue
		}
		used = n // a dataset without observations leaves it (review 25)
		for j := range mean {
			mean[j] /= float64(n)
		}
		for oi, out := range spec.Outputs {
			obs, ok := obsCols[out.Name]
			if !ok {
				continue
			}
			f := Fit{Dataset: ds.Name, Output: out.Name, Unit: out.Unit}
			for r, o := range obs {
				if math.IsNaN(o) {
					continue
				}
				e := math.Abs(mean[r*m+oi] - o)
				f.N++
				f.MAE += e
				f.RMSE += e * e
				f.MaxAbs = math.Max(f.MaxAbs, e)
			}
			if f.N == 0 {
				continue
			}
			f.MAE /= float64(f.N)
			f.RMSE = math.Sqrt(f.RMSE / float64(f.N))
			fits = append(fits, f)
		}
	}
	return fits, used, nil
}
