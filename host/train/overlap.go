package train

import (
	"fmt"
	"strings"

	"github.com/kinfer/kinfer/builtin/surrogate/nn"
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

// heldOut refuses a design (or a part of one) that the surrogate with
// provenance p was trained on; what names the use ("validation design",
// "score design").
func heldOut(p nn.Provenance, ds *Design, what, hint string) error {
	for _, q := range ds.parts() {
		if trainedOn(p, q.CSVSHA) {
			return fmt.Errorf("%s %s holds the design.csv the surrogate was trained on (sha256 %s): its errors would be training errors, not the errors on held-out data; %s",
				what, q.Dir, q.CSVSHA, hint)
		}
	}
	return nil
}

// notTraining refuses a validation design that is one of the training
// design runs (kinfer train --validation).
func notTraining(ds, v *Design) error {
	for _, q := range ds.parts() {
		if q.CSVSHA == v.CSVSHA {
			return fmt.Errorf("validation design %s holds the same design.csv as the training design %s (sha256 %s): the validation errors would be training errors; make a second design run with another seed (kinfer design STUDY -o DIR --seed N) or leave out --validation to hold out --holdout of the points",
				v.Dir, q.Dir, v.CSVSHA)
		}
	}
	return nil
}
