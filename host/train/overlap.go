package train

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
	"github.com/kinfer/kinfer/host/designrun"
	"github.com/kinfer/kinfer/host/run"
)

// Validation and score designs must be held out: a surrogate measured on
// the samples it was trained on reports its training error as its
// validation error (a network that memorised its design scores well
// whatever it does between the samples), and that figure is the one users
// quote. A design is recognised by the sha256 of its design.csv, which
// the surrogate file records: provenance.training_data_sha256 for one
// training design run, and for merged runs each part's in
// provenance.design ("… design.csv sha256 H …"). A copy of a design run
// has the same sha256 and is caught; a design of the same points made
// again (another folder, the same study, seed and size) too, since
// kinfer design is deterministic. Another seed's design is another
// design, even where it happens to share points.

// parts are the design runs a (possibly merged) design is made of.
func (ds *Design) parts() []*Design {
	if len(ds.Parts) > 0 {
		return ds.Parts
	}
	return []*Design{ds}
}

// trainedOn tells whether the surrogate with provenance p was trained on
// a design.csv with sha256 h.
func trainedOn(p nn.Provenance, h string) bool {
	if h == "" {
		return false
	}
	return p.TrainingDataSHA256 == h || strings.Contains(p.Design, "design.csv sha256 "+h)
}

// heldOutHint is how to make a design of other points: the default sobol
// ignores --seed, so "another seed" alone gives the same points.
const heldOutHint = "make one with other points: kinfer design STUDY -o DIR --design sobol-owen --seed N (the default sobol ignores --seed), or --design lhs"

// heldOut refuses a design (or a part of one) that the surrogate with
// provenance p was trained on, or that shares points with its training
// design (sharedPoints); what names the use ("validation design", "score
// design").
func heldOut(p nn.Provenance, ds *Design, what, hint string) error {
	for _, q := range ds.parts() {
		if trainedOn(p, q.CSVSHA) {
			return fmt.Errorf("%s %s holds the design.csv the surrogate was trained on (sha256 %s): its errors would be training errors, not the errors on held-out data; %s",
				what, q.Dir, q.CSVSHA, hint)
		}
		if q.Record == nil {
			continue
		}
		for _, t := range trainingParts(p) {
			if n := sharedPoints(t, q.Record); n > 0 {
				return fmt.Errorf("%s %s (%s n=%d) has the first %d points of the surrogate's training design (%s n=%d, the same sequence over the same box): its errors there would be training errors; %s",
					what, q.Dir, q.Record.Kind, q.Record.N, n, t.Kind, t.N, heldOutHint)
			}
		}
	}
	return nil
}

// designPart is what provenance.design says of one training design run.
var designPart = regexp.MustCompile(`([a-z-]+) n=(\d+) seed=(\d+) space=([a-z]+)`)

// trainingParts are the training design runs the provenance describes,
// with the surrogate's parameter box (all parts cover the same one).
func trainingParts(p nn.Provenance) []*designrun.Record {
	var out []*designrun.Record
	for _, m := range designPart.FindAllStringSubmatch(p.Design, -1) {
		n, err1 := strconv.Atoi(m[2])
		seed, err2 := strconv.ParseUint(m[3], 10, 64)
		if err1 != nil || err2 != nil || len(p.ParamLower) != len(p.ParamUpper) {
			continue
		}
		r := &designrun.Record{Kind: m[1], N: n, Seed: seed, Space: m[4]}
		for j := range p.ParamLower {
			r.Params = append(r.Params, abi.Param{Lower: p.ParamLower[j], Upper: p.ParamUpper[j]})
		}
		out = append(out, r)
	}
	return out
}

// sharedPoints is how many points two design runs share as sequences: a
// sequence design (sobol and halton, which take no seed; sobol-owen with
// the same seed) of n points is the first n of a longer one over the same
// box and space. 0 for other designs (Latin hypercubes, Hammersley: their
// points depend on n).
func sharedPoints(a, b *designrun.Record) int {
	if a.Kind != b.Kind || a.Space != b.Space || len(a.Params) != len(b.Params) {
		return 0
	}
	switch a.Kind {
	case "sobol", "halton":
	case "sobol-owen":
		if a.Seed != b.Seed {
			return 0
		}
	default:
		return 0
	}
	// The same box within 1e-6 of each parameter's width: a box moved by
	// 1e-10 of it gives the training points moved as much, training data
	// all the same (audit 15: an upper bound of 9000.000001 for 9000).
	for j, p := range a.Params {
		q := b.Params[j]
		w := max(p.Upper-p.Lower, q.Upper-q.Lower)
		if !(math.Abs(p.Lower-q.Lower) <= 1e-6*w && math.Abs(p.Upper-q.Upper) <= 1e-6*w) {
			return 0
		}
	}
	return min(a.N, b.N)
}

// notTraining refuses a validation design that is one of the training
// design runs (kinfer train --validation).
func notTraining(ds, v *Design) error {
	for _, q := range ds.parts() {
		if q.CSVSHA == v.CSVSHA {
			return fmt.Errorf("validation design %s holds the same design.csv as the training design %s (sha256 %s): the validation errors would be training errors; %s, or leave out --validation to hold out --holdout of the points",
				v.Dir, q.Dir, v.CSVSHA, heldOutHint)
		}
		for _, w := range v.parts() {
			if q.Record == nil || w.Record == nil {
				continue
			}
			if n := sharedPoints(q.Record, w.Record); n > 0 {
				return fmt.Errorf("validation design %s (%s n=%d) shares its first %d points with the training design %s (%s n=%d, the same sequence over the same box): the validation errors there would be training errors; %s",
					w.Dir, w.Record.Kind, w.Record.N, n, q.Dir, q.Record.Kind, q.Record.N, heldOutHint)
			}
		}
	}
	return nil
}

// TrainedOnFile refuses a design run dir whose design.csv (digested as a
// stream, before it is parsed) is one the surrogate with provenance p was
// trained on: kinfer score once parsed 1.5 GB of a design before refusing
// it by this digest (audit 10). An unreadable file is left to the reading.
func TrainedOnFile(p nn.Provenance, dir string) error {
	// A folder whose design.json does not read is the reading's to name.
	rec, err := designrun.ReadRecord(filepath.Join(dir, "design.json"))
	if err != nil {
		return nil
	}
	h, err := run.FileSHA256(filepath.Join(dir, "design.csv"))
	if err != nil || !trainedOn(p, h) {
		// The points it shares with the training design, from the
		// records alone, before design.csv is parsed (hostile 22: a
		// forged 500 MB design.csv was parsed whole, 4 GB, before this
		// refusal).
		return heldOut(p, &Design{Dir: dir, Record: rec}, "score: design", heldOutHint)
	}
	return fmt.Errorf("score: design %s holds the design.csv the surrogate was trained on (sha256 %s): its errors would be training errors, not the errors on held-out data; %s", dir, h, heldOutHint)
}
