package train

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/kinfer/kinfer/builtin/surrogate/nn"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// maxReportBytes bounds a member's report read by Combine (it is input).
const maxReportBytes = 16 << 20

// maxSeconds bounds a member report's training time (a century): a
// report claiming more is not taken (1e308 twice summed to +Inf, which
// JSON cannot hold, and the combined report was not written).
const maxSeconds = 100 * 365.25 * 86400

// Combine joins network files written by kinfer train --member K (the
// members of one ensemble trained in separate processes or on separate
// machines) into the ensemble one training would have written
// (nn.Combine: the same bits), and validates it on validation, the design
// the members were validated on. The members must agree in provenance
// (training data, seed, model, kinfer version). The report takes the
// training design's account from the first member's report when it is
// there, and the training time as the sum over the members' reports.
func Combine(paths []string, validation *Design) (*nn.Ensemble, nn.Provenance, *Report, error) {
	if len(paths) == 0 {
		return nil, nn.Provenance{}, nil, errors.New("combine: no member files")
	}
	if validation == nil {
		return nil, nn.Provenance{}, nil, errors.New("combine: give the validation design run (--validation DIR) to report the ensemble's errors")
	}
	if len(paths) > nn.MaxMembers {
		return nil, nn.Provenance{}, nil, fmt.Errorf("combine: %d member files; an ensemble has at most %d networks", len(paths), nn.MaxMembers)
	}
	var parts []*nn.Ensemble
	var prov nn.Provenance
	params := 0 // over the parts read so far: the ensemble's bound, checked as they are read
	for i, p := range paths {
		// Bounded, and refusing a FIFO or device (nn.Load would block or
		// read on): a member file is input.
		b, err := safefile.ReadFile(p, nn.MaxFileBytes)
		if err != nil {
			return nil, nn.Provenance{}, nil, err
		}
		e, pv, err := nn.Decode(b)
		if err != nil {
			return nil, nn.Provenance{}, nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, n := range e.Nets {
			params += n.NumParams()
		}
		if params > nn.MaxParams {
			return nil, nn.Provenance{}, nil, fmt.Errorf("combine: the networks of %s and the files before it have more than %d parameters, more than an ensemble may have", p, nn.MaxParams)
		}
		if i == 0 {
			prov = pv
		} else if a, b := sameData(pv), sameData(prov); !reflect.DeepEqual(a, b) {
			return nil, nn.Provenance{}, nil, fmt.Errorf("combine: %s has another provenance than %s (%s): not members of one training", p, paths[0], provenanceDiff(a, b))
		}
		parts = append(parts, e)
	}
	e, err := nn.Combine(parts...)
	if err != nil {
		return nil, nn.Provenance{}, nil, err
	}
	v := validation
	if prov.ValidationSHA256 != "" && v.CSVSHA != prov.ValidationSHA256 {
		return nil, nn.Provenance{}, nil, fmt.Errorf("combine: the members were validated on design data with sha256 %s; %s has %s", prov.ValidationSHA256, v.Dir, v.CSVSHA)
	}
	if err := heldOut(prov, v, "combine: validation design", "give the design run the members were validated on (kinfer train --validation)"); err != nil {
		return nil, nn.Provenance{}, nil, err
	}
	if !slices.Equal(v.InNames, prov.InputNames) || !slices.Equal(v.OutNames, prov.OutputNames) || v.Record.Model != prov.Model {
		return nil, nn.Provenance{}, nil, fmt.Errorf("combine: validation design %s is of model %s with inputs %v and outputs %v; the members of %s with %v and %v",
			v.Dir, v.Record.Model, v.InNames, v.OutNames, prov.Model, prov.InputNames, prov.OutputNames)
	}
	met, err := e.Validate(&v.Data)
	if err != nil {
		return nil, nn.Provenance{}, nil, err
	}
	rep := &Report{Kind: "nn", Config: e.Config, Members: e.Info, Weights: e.Weights, Provenance: prov,
		ValidationDir: v.Dir, ValidationSamples: v.Data.N, ValidationPoints: countPoints(v.Point), TrainingSamples: prov.TrainingSamples}
	seconds, all := 0.0, true
	for i, p := range paths {
		mr, err := readReport(ReportPath(p))
		if err != nil || !(mr.TrainSeconds >= 0 && mr.TrainSeconds <= maxSeconds) || mr.TrainingPoints < 0 || mr.TrainingSamples < 0 {
			all = false // unreadable, or not a report Write wrote
			continue
		}
		seconds += mr.TrainSeconds
		if i == 0 {
			rep.TrainingDir, rep.TrainingPoints, rep.TrainingSamples, rep.Skipped = mr.TrainingDir, mr.TrainingPoints, mr.TrainingSamples, mr.Skipped
		}
	}
	if all {
		rep.TrainSeconds = seconds
	}
	rep.Outputs = outputReports(v.OutNames, v.OutUnits, met)
	return e, prov, rep, nil
}

// readReport reads a report written by Write (bounded: it is input).
func readReport(path string) (*Report, error) {
	b, err := safefile.ReadFile(path, maxReportBytes)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := strictjson.Decode(b, &r, strictjson.Lenient); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}

// sameData is p without the description of its design runs, which names
// their folders as they were typed: a member trained in another folder or
// on another machine names them differently. What the folders held is
// pinned by the sha256s of their records and data (DesignSHA256,
// TrainingDataSHA256), which are compared; the combined file keeps the
// first member's description.
func sameData(p nn.Provenance) nn.Provenance {
	p.Design = ""
	return p
}

// provenanceDiff names the first field in which two provenances differ.
func provenanceDiff(a, b nn.Provenance) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return va.Type().Field(i).Name + " differs"
		}
	}
	return "no field differs"
}
