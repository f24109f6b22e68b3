// Package study reads a study file (study.toml) and resolves it into the
// pieces a run needs: the model (builtin or plugin), the datasets, the
// likelihood terms with their σ, the prior over the free parameters, the
// fixed parameters, the soft constraints ([[constraint]], constraint.go:
// extra residuals after the terms', after Jackson et al. 2016's augmented
// cost functions), the jacobian key and the method with its settings; a
// least-squares method (abi.CapLeastSquares) is refused when a term gives
// no residuals.
//
// A propagation study (conditions.go) has no [[likelihood]] and possibly
// no [[data]]: its condition rows then come from a [conditions] table, and
// only a built-in method with abi.CapPropagation may run it. A method's
// setting with abi.Setting.Output takes a model output's name.
//
// Decoding is strict: an unknown key, a wrong type, a missing field, an
// unknown setting or parameter is an error naming the file, the line and
// the key. The file format is documented in docs/STUDY.md.
package study
