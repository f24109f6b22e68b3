package train

import (
	"fmt"
	"slices"

	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// Score measures a trained surrogate on a design run: per output the
// nMAE, MAE and 90 % AE (nn.Metrics, the measures of the validation
// report) of its predictions at the design's samples. It is the check on
// a held-out design, one that neither the training nor the ensemble's
// weights saw (kinfer combine --validation only takes the members' own).
// The design must have the surrogate's inputs and outputs, by name and in
// order, and be of the model the file records (name and version); a
// design (or a part of one) the surrogate was trained on is refused
// (heldOut).
func Score(f *surrogate.File, ds *Design) ([]OutputReport, error) {
	p, d := f.Provenance, &ds.Data
	if p.Model != "" && (ds.Record.Model != p.Model || ds.Record.ModelVer != p.ModelVersion) {
		return nil, fmt.Errorf("score: design %s is of model %s %s, the surrogate of %s %s", ds.Dir, ds.Record.Model, ds.Record.ModelVer, p.Model, p.ModelVersion)
	}
	if (p.InputNames != nil && !slices.Equal(ds.InNames, p.InputNames)) || (p.OutputNames != nil && !slices.Equal(ds.OutNames, p.OutputNames)) {
		return nil, fmt.Errorf("score: design %s has inputs %v and outputs %v; the surrogate %v and %v", ds.Dir, ds.InNames, ds.OutNames, p.InputNames, p.OutputNames)
	}
	if err := heldOut(p, ds, "score: design", heldOutHint); err != nil {
		return nil, err
	}
	var pred []float64
	if f.Kriging != nil {
		if len(f.Kriging) != d.Out || f.Kriging[0].Dim() != d.In {
			return nil, fmt.Errorf("score: the Kriging file is %d→%d, design %s %d→%d", f.Kriging[0].Dim(), len(f.Kriging), ds.Dir, d.In, d.Out)
		}
		var err error
		if pred, err = krigingMeans(f.Kriging, d); err != nil {
			return nil, err
		}
	} else {
		e := f.Ensemble
		if e.In() != d.In || e.Out() != d.Out {
			return nil, fmt.Errorf("score: the network is %d→%d, design %s %d→%d", e.In(), e.Out(), ds.Dir, d.In, d.Out)
		}
		pred = e.Predict(nil, d.X, d.N, nil)
	}
	met, err := nn.Metrics(pred, d.Y, d.N, d.Out)
	if err != nil {
		return nil, err
	}
	return outputReports(ds.OutNames, ds.OutUnits, met), nil
}

// krigingMeans predicts d's samples with one Kriging predictor per
// output: N × Out, row-major as nn.Data.Y.
func krigingMeans(ms []*kriging.Model, d *nn.Data) ([]float64, error) {
	in, out := d.In, len(ms)
	pred := make([]float64, d.N*out)
	for i := 0; i < d.N; i++ {
		for j, m := range ms {
			v, err := m.Mean(d.X[i*in : (i+1)*in])
			if err != nil {
				return nil, err
			}
			pred[i*out+j] = v
		}
	}
	return pred, nil
}
