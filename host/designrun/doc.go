// Package designrun evaluates a study's model over a design of experiments
// and writes every input and output: the training set of a surrogate
// (issue 15; the sampling step of Lin et al. 2010, "Surrogate articular
// contact models for computationally efficient multibody dynamic
// simulations", Med. Eng. Phys. 32:584–594, Sec. 2.2, and of Bartsoen et
// al. 2023, Sec. 2.3). `kinfer design` is its command.
//
// The design (builtin/design: Sobol, Owen-scrambled Sobol, Halton,
// Hammersley, Latin hypercube, maximin Latin hypercube) lives in the unit
// cube over the study's free parameters and is mapped either onto the box
// of their bounds intersected with their prior's support (space "box") or
// through each prior's quantile function (space "prior", a design
// distributed as the prior). Every point is evaluated on every dataset's
// conditions with the study's workers, in chunks of a fixed number of
// points, and appended to design.csv in point order; a failed or
// out-of-support point is a row with its status and empty outputs, not an
// error. design.json holds the settings, the provenance (kinfer's version,
// the study's input files with their sha256, the model's name and version)
// and the counts by status; after every chunk it records the points done
// and the length of design.csv, so --resume continues an interrupted run
// where it stopped and gives the same file as an uninterrupted one.
package designrun
